"""What every file reader starts with: the bytes, a name, UTF-8, and parallel reading.

Pure core, no Django.
"""

from __future__ import annotations

import codecs
import io
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from workbench.core.problems import ProblemLog

BOM = codecs.BOM_UTF8


Source = str | Path | bytes


def read_source(source: Source) -> bytes:
    if isinstance(source, bytes):
        return source
    return Path(source).read_bytes()


def source_name(source: Source, name: str | None) -> str:
    if name:
        return name
    return "<bytes>" if isinstance(source, bytes) else str(source)


def strip_bom(data: bytes) -> bytes:
    return data[len(BOM) :] if data.startswith(BOM) else data


def utf8_problem(data: bytes, log: ProblemLog) -> bool:
    """Add a problem and return True when `data` is not valid UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        log.add(line, f"not UTF-8 (byte 0x{data[error.start]:02x} at column {column})")
        return True
    return False


NUL_PROBLEM = "contains a NUL character (\\0), which no text field may hold"


def holds_nul(*values: object) -> bool:
    """Whether any text among `values` (nested in lists and dicts too) holds a NUL,
    which databases refuse in text (PostgreSQL) and no TREC file means to carry."""
    for value in values:
        if isinstance(value, str) and "\x00" in value:
            return True
        if isinstance(value, dict) and holds_nul(*value.keys(), *value.values()):
            return True
        if isinstance(value, list | tuple) and holds_nul(*value):
            return True
    return False


SURROGATE_PROBLEM = (
    "contains a lone surrogate (a \\ud800-\\udfff escape without its pair), which is not text"
)


def holds_surrogate(*values: object) -> bool:
    """Whether any text among `values` (nested in lists and dicts too) holds a lone
    surrogate, which JSON's `\\u` escapes can write and no UTF-8 file, database or
    terminal can hold."""
    for value in values:
        if isinstance(value, str) and not _encodable(value):
            return True
        if isinstance(value, dict) and holds_surrogate(*value.keys(), *value.values()):
            return True
        if isinstance(value, list | tuple) and holds_surrogate(*value):
            return True
    return False


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")

# A path, the bytes, or the lines as bytes (an open binary file, or a generator
# that counts them for a progress bar).
ReadableSource = Source | IO[bytes] | Iterable[bytes]


def binary_lines(source: ReadableSource) -> Iterator[bytes]:
    """The lines of a path, bytes or an iterable of lines, one at a time."""
    if isinstance(source, bytes):
        yield from io.BytesIO(source)
    elif isinstance(source, str | Path):
        with open(source, "rb") as stream:
            yield from stream
    else:
        yield from source


def readable_name(source: ReadableSource, name: str | None) -> str:
    """What problems call a file: `name`, else the path, `<bytes>`, or the stream's name."""
    if isinstance(source, str | Path | bytes):
        return source_name(source, name)
    return name or str(getattr(source, "name", "<stream>"))


def jsonl_records(source: ReadableSource, log: ProblemLog) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON objects of a JSON-lines file, read a line at a time (memory does not
    grow with the file), blank lines skipped; every line that is not UTF-8, not a
    JSON object, or holds a NUL or a lone surrogate is a problem in `log`."""
    for number, raw in enumerate(binary_lines(source), start=1):
        if number == 1:
            raw = raw.removeprefix(BOM)
        try:
            text = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as error:
            log.add(
                number, f"not UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})"
            )
            continue
        if not text.strip():
            continue
        record = json_object(text, number, log)
        if record is None:
            continue
        # Strict UTF-8 and JSON (which refuses raw control characters in strings)
        # leave only escapes to write a NUL or a lone surrogate: look for those in
        # the line before walking the record.
        if "\\u0000" in text and holds_nul(record):
            log.add(number, NUL_PROBLEM)
        elif _SURROGATE_ESCAPE.search(text) and holds_surrogate(record):
            log.add(number, SURROGATE_PROBLEM)
        else:
            yield number, record


def map_in_threads[T, R](function: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
    """`map` over one thread per core, results in order as they come.

    Arrow and NumPy release the GIL while they parse, hash and sort, so
    reading several files this way uses every core. (The executor, with the
    logging and threading it loads, is imported when there are files to read:
    the command-line scorer reads small inputs without it, and starts 10 ms
    sooner.)
    """
    from concurrent.futures import ThreadPoolExecutor

    workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with ThreadPoolExecutor(max_workers=max(1, workers or 1)) as executor:
        yield from executor.map(function, items)


class JSONProblem(ValueError):
    """Text that is not JSON the workbench reads; the message says why."""


def parse_json(text: str | bytes) -> Any:
    """json.loads with every way it can fail as one JSONProblem: a syntax error (with
    its column), an integer too long to convert, or nesting too deep to recurse."""
    import json  # here: the command-line scorer starts without it

    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        # json says "Unterminated string starting at": do not print "at at column".
        reason = error.msg.removesuffix(" at")
        raise JSONProblem(f"not valid JSON: {reason} at column {error.colno}") from None
    except RecursionError:
        raise JSONProblem("not valid JSON: nested too deeply") from None
    except ValueError as error:  # e.g. an integer of more than 4,300 digits
        raise JSONProblem(f"not valid JSON: {error}") from None


def json_object(raw: str, line: int, log: ProblemLog) -> dict[str, Any] | None:
    try:
        record = parse_json(raw)
    except JSONProblem as error:
        log.add(line, str(error))
        return None
    if not isinstance(record, dict):
        log.add(line, "expected a JSON object")
        return None
    return record


def tsv_rows(
    lines: Iterable[tuple[int, str]],
    *,
    header_keys: tuple[str, ...],
    positional: tuple[str, ...],
    log: ProblemLog,
) -> Iterator[tuple[int, dict[str, str]]]:
    """Rows of a tab-separated file as dicts, with or without a header row.

    A first row whose first cell is one of `header_keys` names the columns;
    otherwise the columns are `positional`. No quoting: TREC and MS MARCO TSV
    files use none.
    """
    columns: tuple[str, ...] | None = None
    for number, raw in lines:
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        cells = line.split("\t")
        if columns is None:
            if cells[0].strip().lower() in header_keys:
                columns = tuple(c.strip().lower() for c in cells)
                continue
            columns = positional
        if len(cells) > len(columns):
            log.add(
                number, f"expected at most {len(columns)} tab-separated columns, found {len(cells)}"
            )
            continue
        yield number, dict(zip(columns, cells, strict=False))
