"""What every file reader starts with: the bytes, a name, UTF-8, and parallel reading.

Pure core, no Django.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

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
