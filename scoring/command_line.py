"""What the trec_eval and sample_eval command lines share. Pure core, no Django.

Both take run files or directories (their files in name order, hidden files
skipped) and `-` for standard input, read them the way trec_eval does, and
report a bad input as one line naming the file and line of its first problem.

They are called once per run in shell loops, so start-up counts: nothing
here loads pyarrow or pandas unless the input needs them. Inputs of at most
`PLAIN_INPUT_BYTES` in the plain shape that nearly every file has are read
by `scoring.plain_files` with Python and NumPy alone; larger inputs, and any
file that is not plain (a problem to report, a comment, extra fields, ...),
by the readers of record on Arrow, whose load time larger inputs repay.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TextIO

from pooling.file_input import map_in_threads
from pooling.problems import InputError
from pooling.streams import discard_stdout
from scoring.measures.catalog import MeasureError
from scoring.measures.columns import Qrels, Run
from scoring.measures.params import ParamError
from scoring.plain_files import plain_qrels, plain_run
from scoring.qrels import QrelsLayout

if TYPE_CHECKING:
    import pyarrow as pa

# Up to this many bytes of qrels and runs in all, Python reads plain files faster
# than Arrow loads (0.15 s) and reads them; past it Arrow's parallel parser wins.
PLAIN_INPUT_BYTES = 8 << 20


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
    qrels: str | bytes = qrels_name
    sizes = [len(run) if isinstance(run, bytes) else _size(run) for run in runs]
    if _size(qrels_name) + sum(sizes) <= PLAIN_INPUT_BYTES:
        qrels = Path(qrels_name).read_bytes()
        plain = plain_qrels(qrels, layout)
        if plain is not None:
            runs = [run if isinstance(run, bytes) else Path(run).read_bytes() for run in runs]
            plain_runs = [plain_run(run) for run in runs if isinstance(run, bytes)]
            if all(run is not None for run in plain_runs):
                return plain, [run for run in plain_runs if run is not None]
    from scoring.qrels import read_qrels_table

    source = qrels if isinstance(qrels, bytes) else Path(qrels)
    table = read_qrels_table(source, name=qrels_name, layout=layout)
    return table, read_run_files(run_names, runs)


def _size(path: str) -> int:
    """The file's size; past any limit when it cannot be read (the readers of
    record then report it, in the usual order)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return PLAIN_INPUT_BYTES + 1


def read_run_files(names: Sequence[str], sources: Sequence[str | bytes]) -> list[pa.Table]:
    """Each run (query_id, doc_id, score, run_id) with the reader of record, in
    parallel threads (parsing releases the GIL); sources are paths or bytes."""
    return list(map_in_threads(lambda item: _read_run(*item), zip(names, sources, strict=True)))


def _read_run(name: str, source: str | bytes) -> pa.Table:
    from pooling.run_files import read_run

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
