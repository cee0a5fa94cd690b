"""What the trec_eval and sample_eval command lines share. Pure core, no Django.

Both take run files or directories (their files in name order, hidden files
skipped) and `-` for standard input, read them the way trec_eval does, and
report a bad input as one line naming the file and line of its first problem.

They are called once per run in shell loops, so start-up counts: nothing
here loads pyarrow or pandas unless the input needs them. Files in the plain
shape that nearly every file has are read by `scoring.core.plain_files` with
NumPy alone (pyarrow loads pandas at its first array, 0.3 s in all, and the
plain readers also take less memory); if any file is not plain (a problem to
report, a comment, extra fields, ...), all are read by the readers of record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TextIO

from scoring.core.measures.catalog import MeasureError
from scoring.core.measures.columns import Qrels, Run
from scoring.core.measures.params import ParamError
from scoring.core.plain_files import plain_qrels, plain_run
from scoring.core.qrels import QrelsLayout
from workbench.core.file_input import map_in_threads
from workbench.core.problems import InputError
from workbench.core.streams import discard_stdout

if TYPE_CHECKING:
    import pyarrow as pa


class UsageError(ValueError):
    """A command line that cannot be run."""


def guarded(program: str, command: Callable[[], int], stderr: TextIO) -> int:
    """Run a command, turning any bad input or usage into one line and exit status 2."""
    try:
        return command()
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, as the C tools do.
        discard_stdout()
        return 0
    except InputError as error:
        stderr.write(f"{program}: {first_problem(error)}\n")
    except OSError as error:
        stderr.write(f"{program}: cannot read '{error.filename}': {error.strerror}\n")
    except (UsageError, MeasureError, ParamError) as error:
        stderr.write(f"{program}: {error}\n")
    return 2


def run_file_names(arguments: Sequence[str]) -> list[str]:
    """The run files named: files as given, directories as their files in name order."""
    names: list[str] = []
    for argument in arguments:
        path = Path(argument)
        if argument != "-" and path.is_dir():
            files = sorted(
                child.name
                for child in path.iterdir()
                if child.is_file() and not child.name.startswith(".")
            )
            if not files:
                raise UsageError(f"{argument}: no run files in the directory")
            names.extend(str(path / child) for child in files)
        else:
            names.append(argument)
    return names


def read_inputs(
    qrels_name: str, layout: QrelsLayout, run_names: Sequence[str], stdin: BinaryIO
) -> tuple[Qrels, list[Run]]:
    """The qrels file and each run file (query_id, doc_id, score, run_id), read as
    the module docstring says; raises InputError with the problems of the first
    bad file (the qrels first), OSError for a file that cannot be read."""
    # A run named "-" is standard input, read once, where it stands.
    runs: list[str | bytes] = [stdin.read() if name == "-" else name for name in run_names]
    qrels = Path(qrels_name).read_bytes()
    plain = plain_qrels(qrels, layout)
    if plain is not None:
        runs = [run if isinstance(run, bytes) else Path(run).read_bytes() for run in runs]
        datas = [run for run in runs if isinstance(run, bytes)]
        # NumPy releases the GIL on whole arrays: several files go faster in threads.
        plain_runs = list(
            map_in_threads(plain_run, datas) if len(datas) > 1 else map(plain_run, datas)
        )
        if all(run is not None for run in plain_runs):
            return plain, [run for run in plain_runs if run is not None]
    from scoring.core.qrels import read_qrels_table

    table = read_qrels_table(qrels, name=qrels_name, layout=layout)
    return table, read_run_files(run_names, runs)


def read_run_files(names: Sequence[str], sources: Sequence[str | bytes]) -> list[pa.Table]:
    """Each run (query_id, doc_id, score, run_id) with the reader of record, in
    parallel threads (parsing releases the GIL); sources are paths or bytes."""
    return list(map_in_threads(lambda item: _read_run(*item), zip(names, sources, strict=True)))


def _read_run(name: str, source: str | bytes) -> pa.Table:
    from workbench.core.run_files import read_run

    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    file = "<stdin>" if name == "-" else name
    # trec_eval ignores anything after the tag (its own results.trunc has some).
    parsed = read_run(data, name=file, extra_fields="ignore")
    if not parsed.ok:
        raise InputError.from_log(parsed.problems)
    # The topics come dictionary-encoded from read_run's checks: evaluate reuses that.
    columns = parsed.table.select(["query_id", "doc_id", "score", "run_id"])
    return columns.set_column(0, "query_id", parsed.topic_codes)


def first_problem(error: InputError) -> str:
    """The first problem of a bad input, with a count of the others."""
    first = str(error.problems[0]) if error.problems else str(error)
    more = error.total - 1
    return f"{first} (and {more} more problem{'s' if more > 1 else ''})" if more > 0 else first
