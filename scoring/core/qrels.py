"""Read and write qrels files. Pure core, no Django.

A qrels file holds one judgment a line, whitespace separated. trec_eval's
layout is `topic iter docno rel`: the iteration column is ignored, a
relevance below 0 means "pooled but not judged". Lines whose first
non-blank character is `#` are comments and blank lines are skipped
(trec_eval 10.0 skips a `#` only in the first column, not two comment lines
in a row, and stops at a blank line); CRLF line endings and a UTF-8
byte-order mark are accepted.

A file is read into a frame with the columns query_id (str), doc_id (str)
and relevance (int64), plus any further integer columns its layout names,
in file order. Every line is checked, and every problem (wrong column count,
a label that is not an integer or out of `LABEL_RANGE`, a (topic, docno)
pair judged twice, ...) is reported with the file and line in one `InputError`.

Labels (relevance, aspects, strata) are integers from -2**31 to 2**31 - 1,
a 32-bit C int. trec_eval reads them as a C long, but keeps a count for
every label from 0 to the largest and sorts its gain table by the difference
of two gains cast to an int: past this range it runs out of memory, or its
gain order is undefined. No grading scheme comes near it.

Other layouts are `QrelsLayout`s beside `TREC_QRELS`, served by the same
reader and writer:

    TWO_ASPECT_QRELS    topic iter docno a1 a2        relevance, aspect_2
    THREE_ASPECT_QRELS  topic iter docno a1 a2 a3     relevance, aspect_2, aspect_3
    STRATIFIED_QRELS    topic iter docno stratum rel  stratum, relevance

The first aspect is the relevance (the Decision track's `rel eff cred`), so
that aspect qrels rank and judge documents as plain qrels do; negative aspect
values are codes for "no value". A stratified qrels file is sample_eval's:
rel -1 marks a pooled document that was not sampled for judging.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import numpy as np

from workbench.core.problems import InputError, ProblemLog

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

Source = str | Path | bytes

# At most 18 digits after any leading zeros: always fits an int64.
_INTEGER_PATTERN = r"^[+-]?0*[0-9]{1,18}$"
LABEL_RANGE = (-(2**31), 2**31 - 1)  # a C int; see the module docstring


def labels_in_range(values: np.ndarray) -> np.ndarray:
    """Whether each label (int64) is within LABEL_RANGE."""
    low, high = LABEL_RANGE
    return (values >= low) & (values <= high)


@dataclass(frozen=True)
class QrelsLayout:
    """The columns of one qrels line layout, in file order.

    columns: the frame column name of each field in file order.
    labels: the fields that hold integers (relevance and other labels).
    ignored: fields read but not kept (trec_eval's iteration); written as "0".
    description: the fields as users know them, for error messages.
    """

    name: str
    columns: tuple[str, ...]
    labels: tuple[str, ...]
    description: str
    ignored: tuple[str, ...] = ()

    @property
    def kept(self) -> tuple[str, ...]:
        return tuple(column for column in self.columns if column not in self.ignored)


TREC_QRELS = QrelsLayout(
    name="qrels",
    columns=("query_id", "iteration", "doc_id", "relevance"),
    labels=("relevance",),
    description="topic iter docno rel",
    ignored=("iteration",),
)
TWO_ASPECT_QRELS = QrelsLayout(
    name="qrels_twoaspects",
    columns=("query_id", "iteration", "doc_id", "relevance", "aspect_2"),
    labels=("relevance", "aspect_2"),
    description="topic iter docno a1 a2",
    ignored=("iteration",),
)
THREE_ASPECT_QRELS = QrelsLayout(
    name="qrels_threeaspects",
    columns=("query_id", "iteration", "doc_id", "relevance", "aspect_2", "aspect_3"),
    labels=("relevance", "aspect_2", "aspect_3"),
    description="topic iter docno a1 a2 a3",
    ignored=("iteration",),
)
STRATIFIED_QRELS = QrelsLayout(
    name="stratified",
    columns=("query_id", "iteration", "doc_id", "stratum", "relevance"),
    labels=("stratum", "relevance"),
    description="topic iter docno stratum rel",
    ignored=("iteration",),
)


LAYOUTS = (TREC_QRELS, TWO_ASPECT_QRELS, THREE_ASPECT_QRELS, STRATIFIED_QRELS)


def read_qrels(
    source: Source,
    *,
    name: str | None = None,
    layout: QrelsLayout = TREC_QRELS,
    with_lines: bool = False,
    width_hints: Mapping[int, str] | None = None,
) -> pd.DataFrame:
    """Read a qrels file into a frame with the layout's kept columns.

    `source` is a path or the file's bytes; `name` is the file name used in
    problem reports; `with_lines` adds each row's line number as `line`.
    Raises `InputError` listing every problem found. A file whose every line has
    the same wrong number of columns is another layout, not thousands of bad
    lines: one problem says so, with `width_hints[n]` (what reads n columns, in
    the caller's words: a command's flag) when given.
    """
    table = read_qrels_table(
        source, name=name, layout=layout, with_lines=with_lines, width_hints=width_hints
    )
    return table.to_pandas()


def read_qrels_table(
    source: Source,
    *,
    name: str | None = None,
    layout: QrelsLayout = TREC_QRELS,
    with_lines: bool = False,
    width_hints: Mapping[int, str] | None = None,
) -> pa.Table:
    """`read_qrels` as an Arrow table (for the scorer, which needs no pandas)."""
    import pyarrow as pa

    file = name or ("<bytes>" if isinstance(source, bytes) else str(source))
    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    log = ProblemLog(file)
    fields, lines = _well_formed_lines(
        data.removeprefix(codecs.BOM_UTF8), log, layout, width_hints or {}
    )
    table = _table_from_fields(fields, lines, log, layout)
    if table.num_rows:
        _check_duplicate_judgments(table, lines, log)
    elif log.ok:
        log.add(0, "no qrels lines")
    if not log.ok:
        raise InputError.from_log(log)
    if with_lines:
        table = table.append_column("line", pa.array(lines, pa.int32()))
    return table


def _well_formed_lines(
    data: bytes, log: ProblemLog, layout: QrelsLayout, width_hints: Mapping[int, str]
) -> tuple[pa.ListArray, np.ndarray]:
    """The fields of each content line with the layout's column count, and its line number.

    Reports the other content lines: each, or in one problem when they all have
    the same count (the file is another layout).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        log.add(line, f"not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})")
        text = ""
    trimmed = pc.ascii_trim_whitespace(pa.array(text.split("\n")))
    line_numbers = np.arange(1, len(trimmed) + 1, dtype=np.int32)
    content = _numpy(
        pc.and_(pc.greater(pc.binary_length(trimmed), 0), pc.invert(pc.starts_with(trimmed, "#")))
    )
    fields = pc.ascii_split_whitespace(trimmed.filter(pa.array(content)))
    line_numbers = line_numbers[content]
    counts = _numpy(pc.list_value_length(fields))
    width = len(layout.columns)
    wrong = np.flatnonzero(counts != width)
    if len(wrong) > 1 and len(wrong) == len(counts) and (counts == counts[0]).all():
        log.add(int(line_numbers[0]), _layout_problem(int(counts[0]), layout, width_hints))
        return fields.filter(pa.array(np.zeros(len(counts), bool))), line_numbers[:0]
    for row in wrong[: log.limit]:
        log.add(
            int(line_numbers[row]),
            f"expected {width} columns ({layout.description}), found {counts[row]}",
        )
    log.count_unlisted(max(0, len(wrong) - log.limit))
    right = counts == width
    return fields.filter(pa.array(right)), line_numbers[right]


def _layout_problem(found: int, layout: QrelsLayout, width_hints: Mapping[int, str]) -> str:
    """Every line has `found` columns: the file is not in `layout`; say what it may be."""
    problem = (
        f"every line has {found} columns, not the {len(layout.columns)} of {layout.name} "
        f"({layout.description})"
    )
    known = [other for other in LAYOUTS if len(other.columns) == found]
    if known:
        problem += f"; {found} columns are " + " or ".join(
            f"{other.name} ({other.description})" for other in known
        )
    hint = width_hints.get(found)
    return f"{problem}: {hint}" if hint else problem


def _table_from_fields(
    fields: pa.ListArray, lines: np.ndarray, log: ProblemLog, layout: QrelsLayout
) -> pa.Table:
    import pyarrow as pa

    flat = fields.flatten()
    starts = np.arange(len(fields), dtype=np.int64) * len(layout.columns)
    columns: dict[str, pa.Array] = {}
    for index, column in enumerate(layout.columns):
        if column not in layout.ignored:
            values = flat.take(pa.array(starts + index))
            columns[column] = (
                _integers(values, column, lines, log) if column in layout.labels else values
            )
    return pa.table(columns)


def _integers(values: pa.Array, column: str, lines: np.ndarray, log: ProblemLog) -> pa.Array:
    """The labels as int64 (0 where there is a problem); reports a text that is
    not an integer, and an integer out of LABEL_RANGE."""
    import pyarrow as pa
    import pyarrow.compute as pc

    integer = _numpy(pc.match_substring_regex(values, r"^[+-]?[0-9]+$"))
    castable = _numpy(pc.match_substring_regex(values, _INTEGER_PATTERN))
    # Arrow's cast reads "-5" and "007" but not "+5", which trec_eval's atol reads.
    unsigned = pc.replace_substring_regex(values, r"^\+", "")
    integers = pc.cast(pc.if_else(pa.array(castable), unsigned, "0"), pa.int64())
    ok = castable & labels_in_range(_numpy(integers))
    bad = np.flatnonzero(~ok)
    texts = values.take(pa.array(bad[: log.limit])).to_pylist()
    low, high = LABEL_RANGE
    for row, text in zip(bad[: log.limit], texts, strict=True):
        shown = text if len(text) <= 24 else f"{text[:20]}... ({len(text)} characters)"
        reason = (
            f"{column} {shown} is out of range: labels are integers from {low} to {high}"
            if integer[row]
            else f"{column} {text!r} is not an integer"
        )
        log.add(int(lines[row]), reason)
    log.count_unlisted(max(0, len(bad) - log.limit))
    return pc.if_else(pa.array(ok), integers, 0)


def _check_duplicate_judgments(table: pa.Table, lines: np.ndarray, log: ProblemLog) -> None:
    from workbench.core.run_files import duplicate_pairs

    topics, docs = table.column("query_id"), table.column("doc_id")
    repeat_rows, first_rows = duplicate_pairs(topics, docs)
    for row, first in zip(repeat_rows[: log.limit], first_rows[: log.limit], strict=True):
        log.add(
            int(lines[row]),
            f"docno {docs[row].as_py()!r} judged twice for topic {topics[row].as_py()!r}"
            f" (first on line {lines[first]})",
        )
    log.count_unlisted(max(0, len(repeat_rows) - log.limit))


def _numpy(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(array.to_numpy(zero_copy_only=False))


def write_qrels(
    frame: pd.DataFrame, target: str | Path | TextIO, *, layout: QrelsLayout = TREC_QRELS
) -> None:
    """Write `frame` (the layout's kept columns) as qrels lines, in frame order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    fields = [
        pa.array(["0"] * len(frame), pa.string())
        if column in layout.ignored
        else pc.cast(pa.array(frame[column]), pa.string())
        for column in layout.columns
    ]
    lines = pc.binary_join_element_wise(*fields, " ").to_pylist() if len(frame) else []
    text = "".join(f"{line}\n" for line in lines)
    if isinstance(target, str | Path):
        Path(target).write_text(text, encoding="utf-8")
    else:
        target.write(text)
