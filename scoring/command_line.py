"""What the trec_eval and sample_eval command lines share. Pure core, no Django.

Both take run files or directories (their files in name order, hidden files
skipped) and `-` for standard input, read them the way trec_eval does, and
report a bad input as one line naming the file and line of its first problem.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO, TextIO

import pyarrow as pa

from pooling.file_input import map_in_threads
from pooling.problems import InputError
from pooling.run_files import read_run
from pooling.streams import discard_stdout
from scoring.measures.catalog import MeasureError
from scoring.measures.params import ParamError


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


def read_run_files(names: Sequence[str], stdin: BinaryIO) -> list[pa.Table]:
    """Each run (query_id, doc_id, score, run_id), read in parallel: parsing releases the GIL."""
    return list(map_in_threads(lambda name: _read_run(name, stdin), names))


def _read_run(name: str, stdin: BinaryIO) -> pa.Table:
    data = stdin.read() if name == "-" else Path(name).read_bytes()
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
