"""Readers for TREC files: runs, topics and documents. Pure core, no Django.

Every reader reports bad input as `Problem`s naming the file, the line and the
reason, and checks a whole file before the caller stores anything.

Runs are `topic Q0 docno rank score tag`, whitespace separated. The rank
column is ignored (ranks are recomputed from scores); `#` comment lines and
blank lines are skipped; CRLF line endings and a UTF-8 byte-order mark are
accepted.
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

MAX_REPORTED_PROBLEMS = 50
RUN_COLUMNS = ("query_id", "q0", "doc_id", "rank", "score", "run_id")
# A decimal number with an optional exponent: what trec_eval's atof reads,
# without the forms (hex, inf, nan, trailing junk) no run should contain.
_SCORE_PATTERN = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
_BOM = codecs.BOM_UTF8


# --------------------------------------------------------------------------
# Problems


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file; line is 1-based, 0 for the whole file."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return (
            f"{self.file}:{self.line}: {self.reason}"
            if self.line
            else f"{self.file}: {self.reason}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "reason": self.reason}


@dataclass
class ProblemLog:
    """Collects problems; reports the `limit` earliest by line and counts all."""

    file: str
    limit: int = MAX_REPORTED_PROBLEMS
    problems: list[Problem] = field(default_factory=list)
    total: int = 0

    def add(self, line: int, reason: str) -> None:
        self.total += 1
        self.problems.append(Problem(self.file, line, reason))
        if len(self.problems) > 4 * self.limit:
            self.problems = self.sorted()

    def count_unlisted(self, count: int) -> None:
        """Count problems that the caller found but did not list one by one."""
        self.total += count

    @property
    def ok(self) -> bool:
        return self.total == 0

    def sorted(self) -> list[Problem]:
        return sorted(self.problems, key=lambda p: p.line)[: self.limit]

    def summary_lines(self) -> list[str]:
        listed = self.sorted()
        lines = [str(p) for p in listed]
        if self.total > len(listed):
            lines.append(f"{self.file}: ... and {self.total - len(listed)} more problems")
        return lines


class InputError(ValueError):
    """Raised with every problem found in one or more input files."""

    def __init__(self, problems: list[Problem], total: int | None = None):
        self.problems = problems
        self.total = len(problems) if total is None else total
        lines = [str(p) for p in problems]
        if self.total > len(problems):
            lines.append(f"... and {self.total - len(problems)} more problems")
        super().__init__("\n".join(lines))

    @classmethod
    def from_log(cls, log: ProblemLog) -> InputError:
        return cls(log.sorted(), log.total)


# --------------------------------------------------------------------------
# Sources


Source = str | Path | bytes


def _read_source(source: Source) -> bytes:
    if isinstance(source, bytes):
        return source
    return Path(source).read_bytes()


def _source_name(source: Source, name: str | None) -> str:
    if name:
        return name
    return "<bytes>" if isinstance(source, bytes) else str(source)


def _strip_bom(data: bytes) -> bytes:
    return data[len(_BOM) :] if data.startswith(_BOM) else data


def _utf8_problem(data: bytes, log: ProblemLog) -> bool:
    """Add a problem and return True when `data` is not valid UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        log.add(line, f"not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})")
        return True
    return False


# --------------------------------------------------------------------------
# Runs


@dataclass
class ParsedRun:
    """A run file read and checked on its own (not against a campaign).

    table columns: query_id (string), doc_id (string), score (float64),
    run_id (string), line (int32, 1-based line in the file).
    """

    name: str
    table: pa.Table
    problems: ProblemLog

    @property
    def ok(self) -> bool:
        return self.problems.ok

    @property
    def tags(self) -> list[str]:
        return sorted(pc.unique(self.table.column("run_id")).to_pylist())

    @property
    def tag(self) -> str:
        """The run tag: that of the first line, as trec_eval reports it."""
        return self.table.column("run_id")[0].as_py() if self.table.num_rows else ""

    def summary(self) -> dict[str, Any]:
        counts = pc.value_counts(self.table.column("query_id"))
        per_topic = {
            str(value): int(count)
            for value, count in zip(
                counts.field("values").to_pylist(), counts.field("counts").to_pylist(), strict=True
            )
        }
        per_topic = dict(sorted(per_topic.items(), key=lambda item: _topic_sort_key(item[0])))
        return {
            "tag": self.tag,
            "lines": self.table.num_rows,
            "topics": len(per_topic),
            "depth": max(per_topic.values(), default=0),
            "documents_per_topic": per_topic,
        }

    def frame_columns(self) -> pa.Table:
        """The parsed rows as stored in the cache: query_id, doc_id, score."""
        return self.table.select(["query_id", "doc_id", "score"])


def _topic_sort_key(topic_id: str) -> tuple[int, int | str]:
    """Numeric topic ids in numeric order, then the rest as strings."""
    return (0, int(topic_id)) if topic_id.isdigit() else (1, topic_id)


def read_run(source: Source, *, name: str | None = None) -> ParsedRun:
    """Read a 6-column run file, checking every line.

    File-level rules checked here: UTF-8, not empty, six columns, a decimal
    score, each docno at most once per topic. Campaign rules (known topics,
    one unused tag) are in `validate_run_for_campaign`.
    """
    file = _source_name(source, name)
    data = _strip_bom(_read_source(source))
    log = ProblemLog(file)
    table = _parse_run_fast(data)
    if table is None:
        table = _parse_run_general(data, log)
    if table.num_rows:
        _check_duplicate_docnos(table, log)
    elif log.ok:
        log.add(0, "empty file: no run lines")
    return ParsedRun(file, table, log)


def _parse_run_fast(data: bytes) -> pa.Table | None:
    """The common case, a well-formed file with one separator character.

    Returns None whenever anything is unusual, so that the general parser
    can report it line by line.
    """
    if not data or data[:1] in b"# \t\r\n" or b"\n\n" in data:
        return None
    # One separator character throughout, and no other whitespace, so that
    # splitting on it means the same as splitting on runs of whitespace.
    delimiter, other = (b"\t", b" ") if b"\t" in data[: data.find(b"\n")] else (b" ", b"\t")
    if any(c in data for c in (other, b"\r", b"\v", b"\f")):
        return None
    try:
        table = pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(column_names=list(RUN_COLUMNS), use_threads=False),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter.decode(), quote_char=False, ignore_empty_lines=False
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={column: pa.string() for column in RUN_COLUMNS}
                | {"score": pa.float64()},
                include_columns=["query_id", "doc_id", "score", "run_id"],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    if table.num_rows == 0 or table.column("score").null_count:
        return None
    if not pc.all(pc.is_finite(table.column("score"))).as_py():
        return None
    if pc.any(pc.starts_with(table.column("query_id"), "#")).as_py():
        return None
    table = table.combine_chunks()
    lines = pa.array(np.arange(1, table.num_rows + 1, dtype=np.int32))
    return table.append_column("line", lines)


def _parse_run_general(data: bytes, log: ProblemLog) -> pa.Table:
    """Any file: split every line on whitespace and report each bad line."""
    if _utf8_problem(data, log):
        return _empty_run_table()
    lines = pa.array(data.decode("utf-8").split("\n"))
    line_numbers = np.arange(1, len(lines) + 1, dtype=np.int32)
    # Arrow keeps empty strings for leading and trailing whitespace; trim first.
    trimmed = pc.ascii_trim_whitespace(lines)
    fields = pc.ascii_split_whitespace(trimmed)
    counts = pc.list_value_length(fields).to_numpy(zero_copy_only=False)
    blank = pc.equal(pc.binary_length(trimmed), 0).to_numpy(zero_copy_only=False)
    comment = pc.starts_with(trimmed, "#").to_numpy(zero_copy_only=False)
    content = ~blank & ~comment
    bad_count = np.flatnonzero(content & (counts != 6))
    for row in bad_count[: log.limit]:
        log.add(
            int(line_numbers[row]),
            f"expected 6 columns (topic Q0 docno rank score tag), found {counts[row]}",
        )
    log.count_unlisted(max(0, len(bad_count) - log.limit))
    keep = content & (counts == 6)
    rows = pc.filter(fields, pa.array(keep))
    flat = rows.flatten()
    starts = np.arange(len(rows), dtype=np.int64) * 6
    column = {name: flat.take(pa.array(starts + i)) for i, name in enumerate(RUN_COLUMNS)}
    kept_lines = line_numbers[keep]
    score_ok = pc.match_substring_regex(column["score"], _SCORE_PATTERN).to_numpy(
        zero_copy_only=False
    )
    bad_score = np.flatnonzero(~score_ok)
    texts = column["score"].take(pa.array(bad_score[: log.limit])).to_pylist()
    for row, text in zip(bad_score[: log.limit], texts, strict=True):
        log.add(int(kept_lines[row]), f"score {text!r} is not a number")
    log.count_unlisted(max(0, len(bad_score) - log.limit))
    scores = pc.cast(pc.if_else(pa.array(score_ok), column["score"], "0"), pa.float64())
    overflow = np.flatnonzero(~pc.is_finite(scores).to_numpy(zero_copy_only=False))
    for row in overflow[: log.limit]:
        log.add(int(kept_lines[row]), "score is out of the range of a double")
    log.count_unlisted(max(0, len(overflow) - log.limit))
    return pa.table(
        {
            "query_id": column["query_id"],
            "doc_id": column["doc_id"],
            "score": scores,
            "run_id": column["run_id"],
            "line": pa.array(kept_lines),
        }
    )


def _empty_run_table() -> pa.Table:
    return pa.table(
        {
            "query_id": pa.array([], pa.string()),
            "doc_id": pa.array([], pa.string()),
            "score": pa.array([], pa.float64()),
            "run_id": pa.array([], pa.string()),
            "line": pa.array([], pa.int32()),
        }
    )


def duplicate_pairs(query_ids: pa.Array, doc_ids: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Rows repeating an earlier (query_id, doc_id) pair, and that earlier row.

    Returns (repeat_rows, first_rows), ordered by repeat row. Encodes both
    columns as integers and sorts one int64 key, several times faster than
    hashing the string pairs.
    """
    topics = pc.dictionary_encode(query_ids)
    docs = pc.dictionary_encode(doc_ids)
    if isinstance(topics, pa.ChunkedArray):
        topics, docs = topics.combine_chunks(), docs.combine_chunks()
    key = topics.indices.to_numpy().astype(np.int64) * max(len(docs.dictionary), 1)
    key += docs.indices.to_numpy()
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    repeated = np.flatnonzero(sorted_key[1:] == sorted_key[:-1]) + 1
    if not len(repeated):
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    positions = np.arange(len(key))
    group_start = np.maximum.accumulate(
        np.where(np.r_[True, sorted_key[1:] != sorted_key[:-1]], positions, 0)
    )
    repeat_rows, first_rows = order[repeated], order[group_start[repeated]]
    by_row = np.argsort(repeat_rows, kind="stable")
    return repeat_rows[by_row], first_rows[by_row]


def _check_duplicate_docnos(table: pa.Table, log: ProblemLog) -> None:
    repeat_rows, first_rows = duplicate_pairs(table.column("query_id"), table.column("doc_id"))
    if not len(repeat_rows):
        return
    lines = table.column("line").to_numpy()
    listed = slice(0, log.limit)
    rows = pa.array(repeat_rows[listed])
    topics = table.column("query_id").take(rows).to_pylist()
    docs = table.column("doc_id").take(rows).to_pylist()
    for row, first, topic, doc in zip(
        repeat_rows[listed], first_rows[listed], topics, docs, strict=True
    ):
        log.add(
            int(lines[row]),
            f"docno {doc!r} appears twice in topic {topic!r} (first on line {lines[first]})",
        )
    log.count_unlisted(len(repeat_rows) - len(rows))


def validate_run_for_campaign(
    run: ParsedRun, *, known_topics: Iterable[str], used_tags: Iterable[str]
) -> None:
    """Add the campaign-level problems: one tag per file, not already used,
    and only topics the campaign has."""
    if not run.table.num_rows:
        return
    log = run.problems
    tags = run.tags
    if len(tags) > 1:
        shown = ", ".join(repr(t) for t in tags[:5]) + (" ..." if len(tags) > 5 else "")
        first_tag = run.tag
        other = pc.not_equal(run.table.column("run_id"), first_tag)
        first_other = int(pc.filter(run.table.column("line"), other)[0].as_py())
        log.add(
            first_other,
            f"more than one run tag in the file ({shown}); a file holds exactly one run",
        )
    used = set(used_tags)
    if run.tag in used:
        log.add(1, f"run tag {run.tag!r} is already used in this campaign")
    known = pa.array(sorted(set(known_topics)), pa.string())
    unknown = pc.invert(pc.is_in(run.table.column("query_id"), value_set=known))
    if pc.any(unknown).as_py():
        bad = run.table.filter(unknown)
        for line, topic in zip(
            bad.column("line").to_pylist()[: log.limit],
            bad.column("query_id").to_pylist()[: log.limit],
            strict=True,
        ):
            log.add(line, f"topic {topic!r} is not a topic of this campaign")
        log.count_unlisted(max(0, bad.num_rows - log.limit))


def write_run_cache(run: ParsedRun, path: str | Path) -> None:
    """Store the parsed rows (query_id, doc_id, score) as Parquet.

    Dictionary-encoding only the topic column: docnos are nearly all distinct
    within a run, so a dictionary would cost time and save nothing. Left
    uncompressed: the cache is read far more often than it is written.
    """
    table = run.frame_columns().replace_schema_metadata({"run_id": run.tag})
    pq.write_table(table, path, use_dictionary=["query_id"], compression="none")


def read_run_cache(path: str | Path) -> pa.Table:
    """Read a cache written by `write_run_cache`; adds run_id from its metadata."""
    table = pq.read_table(path)
    metadata = table.schema.metadata or {}
    tag = metadata.get(b"run_id", b"").decode("utf-8")
    return table.append_column("run_id", pa.array([tag] * table.num_rows, pa.string()))
