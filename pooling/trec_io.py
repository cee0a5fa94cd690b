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
import json
import os
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import IO, Any, Literal
from xml.parsers import expat

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from pooling.string_keys import fingerprints

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

    def __init__(
        self, problems: list[Problem], total: int | None = None, *, lines: list[str] | None = None
    ):
        self.problems = problems
        self.total = len(problems) if total is None else total
        if lines is None:
            lines = [str(p) for p in problems]
            if self.total > len(problems):
                lines.append(f"... and {self.total - len(problems)} more problems")
        super().__init__("\n".join(lines))

    @classmethod
    def from_logs(cls, *logs: ProblemLog) -> InputError:
        """One error for the files that have problems, each summarised on its own."""
        failing = [log for log in logs if not log.ok]
        return cls(
            [p for log in failing for p in log.sorted()],
            sum(log.total for log in failing),
            lines=[line for log in failing for line in log.summary_lines()],
        )

    from_log = from_logs

    @property
    def unlisted(self) -> int:
        """Problems counted but not listed (past the first 50 of a file)."""
        return self.total - len(self.problems)

    def as_dict(self) -> dict[str, Any]:
        """For JSON error responses: the listed problems and the total count."""
        return {"errors": [p.as_dict() for p in self.problems], "total": self.total}


# --------------------------------------------------------------------------
# Parallel reading


def map_in_threads[T, R](function: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
    """`map` over one thread per core, results in order as they come.

    Arrow and NumPy release the GIL while they parse, hash and sort, so
    reading several files this way uses every core.
    """
    workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with ThreadPoolExecutor(max_workers=max(1, workers or 1)) as executor:
        yield from executor.map(function, items)


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
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        log.add(line, f"not UTF-8 (byte 0x{data[error.start]:02x} at column {column})")
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

    @cached_property
    def topic_codes(self) -> pa.DictionaryArray:
        """query_id dictionary-encoded once, shared by every per-topic check."""
        return dictionary_of_runs(self.table.column("query_id"))

    @property
    def tags(self) -> list[str]:
        return sorted(pc.unique(self.table.column("run_id")).to_pylist())

    @property
    def tag(self) -> str:
        """The run tag of the first line (a run file for a campaign has exactly one)."""
        return self.table.column("run_id")[0].as_py() if self.table.num_rows else ""

    def summary(self) -> dict[str, Any]:
        codes = self.topic_codes
        counts = np.bincount(codes.indices.to_numpy(), minlength=len(codes.dictionary))
        per_topic = dict(
            sorted(
                zip(codes.dictionary.to_pylist(), counts.tolist(), strict=True),
                key=lambda item: topic_sort_key(item[0]),
            )
        )
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


def topic_sort_key(topic_id: str) -> tuple[int, int, str]:
    """Numeric topic ids in numeric order, then the others as strings.

    So "2" comes before "10"; the id itself comes last so that "7" and "007"
    still have a fixed order.
    """
    numeric = topic_id.isascii() and topic_id.isdigit()
    return (0, int(topic_id), topic_id) if numeric else (1, 0, topic_id)


def read_run(
    source: Source, *, name: str | None = None, extra_fields: Literal["error", "ignore"] = "error"
) -> ParsedRun:
    """Read a 6-column run file, checking every line.

    File-level rules checked here: UTF-8, not empty, six columns, a decimal
    score, each docno at most once per topic. Campaign rules (known topics,
    one unused tag) are in `validate_run_for_campaign`. With
    `extra_fields="ignore"`, fields after the tag are dropped instead of
    reported, as trec_eval does when it scores a run.
    """
    file = _source_name(source, name)
    data = _strip_bom(_read_source(source))
    log = ProblemLog(file)
    table = _parse_run_fast(data)
    if table is None:
        table = _parse_run_general(data, log, ignore_extra_fields=extra_fields == "ignore")
    run = ParsedRun(file, table, log)
    if table.num_rows:
        _check_duplicate_docnos(run)
    elif log.ok:
        log.add(0, "empty file: no run lines")
    return run


def _parse_run_fast(data: bytes) -> pa.Table | None:
    """The common case, a well-formed file with one separator character.

    Returns None whenever anything is unusual, so that the general parser
    can report it line by line.
    """
    # Blank lines need no check here: they fail the column count below.
    if not data or data[:1] in b"# \t\r\n":
        return None
    # One separator character throughout, and no other whitespace, so that
    # splitting on it means the same as splitting on runs of whitespace.
    delimiter, other = (b"\t", b" ") if b"\t" in data[: data.find(b"\n")] else (b" ", b"\t")
    if any(c in data for c in (other, b"\r", b"\v", b"\f")):
        return None
    ignored_type = pa.binary() if data.isascii() else pa.string()
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            # One block for the whole file (up to 1 GiB): one chunk per column,
            # so combining the chunks below copies nothing.
            read_options=pacsv.ReadOptions(
                column_names=list(RUN_COLUMNS),
                use_threads=False,
                block_size=min(len(data) + 1, 1 << 30),
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter.decode(), quote_char=False, ignore_empty_lines=False
            ),
            convert_options=pacsv.ConvertOptions(
                # Q0 and rank are read only to see that they are not empty, as
                # bytes when the file is ASCII; else as text, so that Arrow
                # checks them for UTF-8 as it checks the other columns.
                column_types=dict.fromkeys(("q0", "rank"), ignored_type)
                | dict.fromkeys(("query_id", "doc_id", "run_id"), pa.string())
                | {"score": pa.float64()},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    if table.num_rows == 0 or table.column("score").null_count:
        return None
    # A separator at either end of a line, or two in a row, makes an empty
    # field, which Arrow counts as a column and whitespace splitting does not.
    textual = [column for column in RUN_COLUMNS if column != "score"]
    if any(pc.min(pc.binary_length(table.column(column))).as_py() == 0 for column in textual):
        return None
    table = table.select(["query_id", "doc_id", "score", "run_id"])
    if not pc.all(pc.is_finite(table.column("score"))).as_py():
        return None
    if pc.any(pc.starts_with(table.column("query_id"), "#")).as_py():
        return None
    table = table.combine_chunks()
    lines = pa.array(np.arange(1, table.num_rows + 1, dtype=np.int32))
    return table.append_column("line", lines)


def _parse_run_general(
    data: bytes, log: ProblemLog, *, ignore_extra_fields: bool = False
) -> pa.Table:
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
    well_formed = (counts >= 6) if ignore_extra_fields else (counts == 6)
    bad_count = np.flatnonzero(content & ~well_formed)
    for row in bad_count[: log.limit]:
        log.add(
            int(line_numbers[row]),
            f"expected 6 columns (topic Q0 docno rank score tag), found {counts[row]}",
        )
    log.count_unlisted(max(0, len(bad_count) - log.limit))
    keep = content & well_formed
    rows = pc.list_slice(pc.filter(fields, pa.array(keep)), 0, 6)
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


def _dictionary(values: pa.Array | pa.ChunkedArray) -> pa.DictionaryArray:
    encoded = pc.dictionary_encode(values)
    return encoded.combine_chunks() if isinstance(encoded, pa.ChunkedArray) else encoded


def dictionary_of_runs(values: pa.Array | pa.ChunkedArray) -> pa.DictionaryArray:
    """The codes of `pyarrow.compute.dictionary_encode` (in order of first
    appearance) for a column whose equal values mostly come in runs, such as
    a run file's topics: only the first value of each run is hashed, about
    half the time on a run file."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    runs = pc.run_end_encode(values)
    lengths = np.diff(runs.run_ends.to_numpy(), prepend=0)
    encoded = pc.dictionary_encode(runs.values)
    codes = np.repeat(encoded.indices.to_numpy(), lengths)
    return pa.DictionaryArray.from_arrays(pa.array(codes), encoded.dictionary)


def duplicate_pairs(
    query_ids: pa.Array | pa.DictionaryArray, doc_ids: pa.Array
) -> tuple[np.ndarray, np.ndarray]:
    """Rows repeating an earlier (query_id, doc_id) pair, and that earlier row.

    Returns (repeat_rows, first_rows), ordered by repeat row. Encodes both
    columns as integers and sorts one int64 key, several times faster than
    hashing the string pairs; dictionary codes come in order of first
    appearance, so the key is nearly sorted and the stable sort is cheap.
    """
    topics = query_ids if isinstance(query_ids, pa.DictionaryArray) else _dictionary(query_ids)
    docs = _dictionary(doc_ids)
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


def surely_no_duplicate_pairs(topic_codes: np.ndarray, doc_ids: pa.Array) -> bool:
    """True when no (topic, docno) pair can repeat; False means "check exactly".

    Sorts one fingerprint per row (`string_keys.fingerprints`, read from the
    docnos' bytes with NumPy): about a third of the time of dictionary-
    encoding the docnos. Distinct fingerprints prove distinct pairs; a
    repeated one (a true duplicate, or a rare collision) sends the caller to
    the exact check, as do docnos longer than `string_keys.MAX_BYTES`.
    """
    mixed = fingerprints(topic_codes, doc_ids)
    if mixed is None:
        return False
    mixed.sort()
    return not np.any(mixed[1:] == mixed[:-1])


def _check_duplicate_docnos(run: ParsedRun) -> None:
    table, log = run.table, run.problems
    doc_ids = table.column("doc_id")
    doc_ids = doc_ids.combine_chunks() if isinstance(doc_ids, pa.ChunkedArray) else doc_ids
    if surely_no_duplicate_pairs(run.topic_codes.indices.to_numpy(), doc_ids):
        return
    repeat_rows, first_rows = duplicate_pairs(run.topic_codes, doc_ids)
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
    # Check each distinct topic once, then find the rows of the unknown ones.
    codes = run.topic_codes
    known = pa.array(sorted(set(known_topics)), pa.string())
    unknown_codes = np.flatnonzero(
        ~pc.is_in(codes.dictionary, value_set=known).to_numpy(zero_copy_only=False)
    )
    if len(unknown_codes):
        bad = run.table.filter(pa.array(np.isin(codes.indices.to_numpy(), unknown_codes)))
        for line, topic in zip(
            bad.column("line").to_pylist()[: log.limit],
            bad.column("query_id").to_pylist()[: log.limit],
            strict=True,
        ):
            log.add(line, f"topic {topic!r} is not a topic of this campaign")
        log.count_unlisted(max(0, bad.num_rows - log.limit))


def write_run_cache(run: ParsedRun, path: str | Path | IO[bytes]) -> None:
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
    # Repeat the tag with Arrow's take: a Python list of it costs 50 times as much.
    tags = pa.array([tag], pa.string()).take(np.zeros(table.num_rows, dtype=np.int32))
    return table.append_column("run_id", tags)


# --------------------------------------------------------------------------
# Topics


@dataclass
class TopicRecord:
    topic_id: str
    title: str = ""
    description: str = ""
    narrative: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    line: int = 0


TOPIC_FORMATS = ("sgml", "xml", "jsonl", "tsv")
# Field names seen in TREC, CLEF and ir_datasets topic files, by our field.
_TOPIC_ID_KEYS = ("topic_id", "number", "num", "id", "qid", "query_id")
_TOPIC_TITLE_KEYS = ("title", "query", "summary", "text")
_TOPIC_DESCRIPTION_KEYS = ("description", "desc", "question")
_TOPIC_NARRATIVE_KEYS = ("narrative", "narr")
# TREC SGML writes "Number:", "Description:" and "Narrative:" inside the field.
_SGML_LABEL = re.compile(r"^\s*(?:number|topic|description|narrative|title)\s*:\s*", re.I)


def detect_topic_format(name: str, head: bytes) -> str:
    """Guess a topic file's format from its name and first bytes."""
    lower = name.lower()
    if lower.endswith((".jsonl", ".json")):
        return "jsonl"
    if lower.endswith(".tsv"):
        return "tsv"
    text = head.lstrip(_BOM).lstrip().lower()
    if text.startswith(b"<top>"):
        return "sgml"
    if text.startswith((b"<?xml", b"<topics", b"<topic ", b"<topic>")):
        return "xml"
    if text.startswith(b"{"):
        return "jsonl"
    return "tsv"


def read_topics(
    source: Source,
    *,
    name: str | None = None,
    format: str | None = None,
    existing: Collection[str] = (),
) -> tuple[list[TopicRecord], ProblemLog]:
    """Read a topic file (TREC SGML, TREC XML, JSONL or TSV).

    Returns the topics in file order and the problems found: unreadable
    structure, a topic without an id, an id given twice, an `answer` that is
    not -1, 0 or 1, and a new topic without any text (a topic in `existing`
    may come without text: the file then updates only its other fields).
    """
    file = _source_name(source, name)
    data = _strip_bom(_read_source(source))
    log = ProblemLog(file)
    fmt = format or detect_topic_format(file, data[:512])
    if fmt not in TOPIC_FORMATS:
        raise ValueError(
            f"unknown topic format {fmt!r}; expected one of {', '.join(TOPIC_FORMATS)}"
        )
    if _utf8_problem(data, log):
        return [], log
    text = data.decode("utf-8").replace("\r\n", "\n")
    readers = {"sgml": _topics_sgml, "xml": _topics_xml, "jsonl": _topics_jsonl, "tsv": _topics_tsv}
    topics = readers[fmt](text, log)
    seen: dict[str, int] = {}
    for topic in topics:
        if not topic.topic_id:
            log.add(topic.line, "topic has no id")
        elif topic.topic_id in seen:
            log.add(
                topic.line,
                f"topic {topic.topic_id!r} given twice (first on line {seen[topic.topic_id]})",
            )
        else:
            seen[topic.topic_id] = topic.line
        textless = not (topic.title or topic.description)
        if topic.topic_id and textless and topic.topic_id not in existing:
            log.add(topic.line, f"topic {topic.topic_id!r} has neither a title nor a description")
        if "answer" in topic.extra:
            answer = parse_answer(topic.extra["answer"])
            if answer is None:
                log.add(topic.line, _answer_problem(topic.topic_id, topic.extra["answer"]))
            else:
                topic.extra["answer"] = answer
    if not topics and log.ok:
        log.add(0, f"no topics found (read as {fmt})")
    return topics, log


# A topic's accepted answer, as NIST's `topics_efficacy` file gives it.
ANSWERS = {-1: "not helpful", 0: "inconclusive", 1: "helpful"}


def parse_answer(raw: Any) -> int | None:
    """-1, 0 or 1 from an int or its text; None for anything else."""
    if isinstance(raw, bool):
        return None
    try:
        value = int(raw) if isinstance(raw, int) else int(str(raw).strip())
    except ValueError:
        return None
    return value if value in ANSWERS else None


def _answer_problem(topic_id: str, raw: Any) -> str:
    meanings = ", ".join(f"{value} ({meaning})" for value, meaning in ANSWERS.items())
    return f"topic {topic_id!r}: the answer must be {meanings}; got {raw!r}"


@dataclass(frozen=True)
class TopicAnswer:
    topic_id: str
    answer: int
    line: int


def read_answers(
    source: Source, *, name: str | None = None
) -> tuple[list[TopicAnswer], ProblemLog]:
    """Read accepted answers as NIST publishes them (`topics_efficacy`): `topic answer`
    per line, whitespace separated, answer -1, 0 or 1; `#` lines and blank lines skipped."""
    file = _source_name(source, name)
    data = _strip_bom(_read_source(source))
    log = ProblemLog(file)
    if _utf8_problem(data, log):
        return [], log
    answers: list[TopicAnswer] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(data.decode("utf-8").splitlines(), start=1):
        fields = raw.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 2:
            log.add(number, f"expected 2 columns (topic answer), found {len(fields)}")
            continue
        topic_id, value = fields
        answer = parse_answer(value)
        if answer is None:
            log.add(number, _answer_problem(topic_id, value))
        elif topic_id in seen:
            log.add(number, f"topic {topic_id!r} given twice (first on line {seen[topic_id]})")
        else:
            seen[topic_id] = number
            answers.append(TopicAnswer(topic_id, answer, number))
    if not answers and log.ok:
        log.add(0, "no answers found: expected `topic answer` lines")
    return answers, log


def _topic_from_fields(fields: dict[str, Any], line: int) -> TopicRecord:
    """Map a topic's named fields onto ours; whatever is left goes to `extra`."""
    remaining = {str(k).lower(): v for k, v in fields.items()}

    def take(keys: tuple[str, ...]) -> str:
        for key in keys:
            value = remaining.pop(key, None)
            if value not in (None, ""):
                return str(value).strip()
        return ""

    topic_id = take(_TOPIC_ID_KEYS)
    return TopicRecord(
        topic_id=topic_id,
        title=take(_TOPIC_TITLE_KEYS),
        description=take(_TOPIC_DESCRIPTION_KEYS),
        narrative=take(_TOPIC_NARRATIVE_KEYS),
        extra={k: v for k, v in remaining.items() if v not in (None, "")},
        line=line,
    )


def _topics_sgml(text: str, log: ProblemLog) -> list[TopicRecord]:
    """TREC SGML: `<top>` blocks of `<num> <title> <desc> <narr>`, tags unclosed."""
    topics = []
    for block in re.finditer(r"<top>(.*?)(?:</top>|\Z)", text, re.S | re.I):
        line = text.count("\n", 0, block.start()) + 1
        if not block.group(0).lower().rstrip().endswith("</top>"):
            log.add(line, "<top> without a closing </top>")
            continue
        fields: dict[str, str] = {}
        for tag in re.finditer(r"<(\w+)>(.*?)(?=<\w+>|</top>|\Z)", block.group(1), re.S):
            value = re.sub(r"</\w+>", "", tag.group(2))
            fields[tag.group(1).lower()] = " ".join(_SGML_LABEL.sub("", value).split())
        topics.append(_topic_from_fields(fields, line))
    return topics


def _topics_xml(text: str, log: ProblemLog) -> list[TopicRecord]:
    """TREC XML: `<topic number="..">` with child elements (or a `<number>` child).

    Read with expat directly, because ElementTree does not keep line numbers.
    """
    topics: list[TopicRecord] = []
    fields: dict[str, Any] | None = None
    line = depth = 0
    child: list[str] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal fields, line, depth, child
        if tag == "topic":
            fields, line, depth = dict(attrs), parser.CurrentLineNumber, 0
        elif fields is not None:
            depth += 1
            if depth == 1:
                child = []

    def end(tag: str) -> None:
        nonlocal fields, depth
        if fields is None:
            return
        if tag == "topic" and depth == 0:
            topics.append(_topic_from_fields(fields, line))
            fields = None
            return
        if depth == 1:
            fields[tag] = " ".join("".join(child).split())
        depth -= 1

    def characters(data: str) -> None:
        if fields is not None and depth >= 1:
            child.append(data)

    parser = expat.ParserCreate()
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = characters
    try:
        parser.Parse(text, True)
    except expat.ExpatError as error:
        log.add(
            error.lineno,
            f"malformed XML: {expat.ErrorString(error.code)} at column {error.offset + 1}",
        )
        return []
    return topics


def _topics_jsonl(text: str, log: ProblemLog) -> list[TopicRecord]:
    topics = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        record = _json_object(raw, number, log)
        if record is not None:
            topics.append(_topic_from_fields(record, number))
    return topics


def _json_object(raw: str, line: int, log: ProblemLog) -> dict[str, Any] | None:
    try:
        record = json.loads(raw)
    except json.JSONDecodeError as error:
        log.add(line, f"not valid JSON: {error.msg} at column {error.colno}")
        return None
    if not isinstance(record, dict):
        log.add(line, "expected a JSON object")
        return None
    return record


def _topics_tsv(text: str, log: ProblemLog) -> list[TopicRecord]:
    """TSV: `id, title[, description[, narrative]]`, or any columns under a header row."""
    positional = ("topic_id", "title", "description", "narrative")
    numbered = enumerate(text.split("\n"), start=1)
    rows = _tsv_rows(numbered, header_keys=_TOPIC_ID_KEYS, positional=positional, log=log)
    return [_topic_from_fields(fields, line) for line, fields in rows]


def _tsv_rows(
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


# --------------------------------------------------------------------------
# Documents


@dataclass
class DocumentRecord:
    docno: str
    title: str = ""
    text: str = ""
    url: str = ""
    line: int = 0


DOCUMENT_FORMATS = ("jsonl", "sgml", "tsv")
_DOCNO_KEYS = ("docno", "doc_id", "docid", "id", "_id", "pid")
_TITLE_KEYS = ("title", "headline")
_TEXT_KEYS = ("text", "contents", "body", "abstract", "passage")
_SGML_TITLE_TAGS = ("TITLE", "HEADLINE", "HL", "HEAD")


def detect_document_format(name: str, head: bytes) -> str:
    lower = name.lower().removesuffix(".gz")
    if lower.endswith((".jsonl", ".json")):
        return "jsonl"
    if lower.endswith(".tsv"):
        return "tsv"
    text = head.lstrip(_BOM).lstrip()
    if text[:5].upper() == b"<DOC>":
        return "sgml"
    if text.startswith(b"{"):
        return "jsonl"
    return "tsv"


def iter_documents(
    stream: IO[bytes],
    log: ProblemLog,
    *,
    format: str,
    only: set[str] | frozenset[str] | None = None,
) -> Iterator[DocumentRecord]:
    """Stream documents from a binary file, one record at a time.

    Memory stays bounded by one document plus the set of docnos seen (to
    report a docno given twice). With `only`, documents whose docno is not in
    it are skipped, which is how a large collection is loaded for one pool.
    Problems go to `log`; the caller decides whether to keep what was read.
    """
    if format not in DOCUMENT_FORMATS:
        raise ValueError(
            f"unknown document format {format!r}; expected one of {', '.join(DOCUMENT_FORMATS)}"
        )
    readers = {"jsonl": _documents_jsonl, "sgml": _documents_sgml, "tsv": _documents_tsv}
    seen: set[str] = set()
    count = 0
    for record in readers[format](_decoded_lines(stream, log), log):
        count += 1
        if not record.docno:
            log.add(record.line, "document has no docno")
            continue
        if any(c.isspace() for c in record.docno):
            log.add(record.line, f"docno {record.docno!r} contains whitespace")
            continue
        if record.docno in seen:
            log.add(record.line, f"docno {record.docno!r} given twice")
            continue
        seen.add(record.docno)
        if only is None or record.docno in only:
            yield record
    if count == 0 and log.ok:
        log.add(0, f"no documents found (read as {format})")


def _decoded_lines(stream: IO[bytes], log: ProblemLog) -> Iterator[tuple[int, str]]:
    """(line number, text) pairs; undecodable lines are reported and skipped."""
    for number, raw in enumerate(stream, start=1):
        if number == 1:
            raw = _strip_bom(raw)
        try:
            yield number, raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as error:
            log.add(
                number, f"not UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})"
            )


def _document_from_fields(fields: dict[str, Any], line: int) -> DocumentRecord:
    lowered = {str(k).lower(): v for k, v in fields.items()}

    def first(keys: tuple[str, ...]) -> str:
        for key in keys:
            value = lowered.get(key)
            if value not in (None, ""):
                return str(value).strip()
        return ""

    return DocumentRecord(
        docno=first(_DOCNO_KEYS),
        title=first(_TITLE_KEYS),
        text=first(_TEXT_KEYS),
        url=first(("url",)),
        line=line,
    )


def _documents_jsonl(lines: Iterable[tuple[int, str]], log: ProblemLog) -> Iterator[DocumentRecord]:
    for number, raw in lines:
        if not raw.strip():
            continue
        record = _json_object(raw, number, log)
        if record is not None:
            yield _document_from_fields(record, number)


def _documents_tsv(lines: Iterable[tuple[int, str]], log: ProblemLog) -> Iterator[DocumentRecord]:
    """TSV: `docno, text` or `docno, title, text`, or any columns under a header row."""
    rows = _tsv_rows(
        lines, header_keys=_DOCNO_KEYS, positional=("docno", "title", "text", "url"), log=log
    )
    for line, fields in rows:
        if set(fields) == {"docno", "title"}:
            # Two unnamed columns are docno and text (MS MARCO's collection.tsv).
            fields = {"docno": fields["docno"], "text": fields["title"]}
        yield _document_from_fields(fields, line)


def _documents_sgml(lines: Iterable[tuple[int, str]], log: ProblemLog) -> Iterator[DocumentRecord]:
    """TREC SGML: `<DOC><DOCNO>..</DOCNO> .. <TEXT>..</TEXT></DOC>`."""
    body: list[str] = []
    start = 0
    for number, raw in lines:
        stripped = raw.strip()
        if stripped.upper().startswith("<DOC>"):
            if start:
                log.add(start, "<DOC> without a closing </DOC>")
            start, body, stripped = number, [], stripped[5:]
        if not start:
            if stripped:
                log.add(number, "text outside a <DOC> element")
            continue
        if stripped.upper().endswith("</DOC>"):
            body.append(stripped[:-6])
            yield _sgml_document("\n".join(body), start)
            start, body = 0, []
            continue
        body.append(stripped)
    if start:
        log.add(start, "<DOC> without a closing </DOC>")


def _sgml_document(body: str, line: int) -> DocumentRecord:
    def element(tag: str) -> list[str]:
        return re.findall(rf"<{tag}(?:\s[^>]*)?>(.*?)</{tag}>", body, re.S | re.I)

    def clean(text: str) -> str:
        return " ".join(re.sub(r"<[^>]+>", " ", text).split())

    docnos = element("DOCNO")
    title = next((clean(t) for tag in _SGML_TITLE_TAGS for t in element(tag) if t.strip()), "")
    texts = element("TEXT")
    text = (
        "\n\n".join(clean(t) for t in texts)
        if texts
        else clean(re.sub(r"<DOCNO>.*?</DOCNO>", "", body, flags=re.S | re.I))
    )
    return DocumentRecord(
        docno=docnos[0].strip() if docnos else "", title=title, text=text, line=line
    )
