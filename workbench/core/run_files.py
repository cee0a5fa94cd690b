"""Run files: read and check every line, check against a campaign, cache. Pure core, no Django.

Runs are `topic Q0 docno rank score tag`, whitespace separated. The rank
column is ignored (ranks are recomputed from scores); `#` comment lines and
blank lines are skipped; CRLF line endings and a UTF-8 byte-order mark are
accepted. Every problem is reported with the file, the line and the reason
(`workbench.core.problems`), and a whole file is checked before the caller stores
anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from workbench.core.file_input import (
    NUL_PROBLEM,
    Source,
    read_source,
    source_name,
    strip_bom,
    utf8_problem,
)
from workbench.core.id_limits import (
    CONTROL_CHARACTERS_RE2,
    MAX_DOCNO,
    MAX_RUN_TAG,
    MAX_TOPIC_ID,
    identifier_problem,
)
from workbench.core.problems import ProblemLog
from workbench.core.string_keys import fingerprints, value_bytes
from workbench.core.topic_ids import topic_sort_key

RUN_FILE_FIELDS = ("query_id", "q0", "doc_id", "rank", "score", "run_id")
# A decimal number with an optional exponent: what trec_eval's atof reads,
# without the forms (hex, inf, nan, trailing junk) no run should contain.
_SCORE_PATTERN = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"


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


def read_run(
    source: Source, *, name: str | None = None, extra_fields: Literal["error", "ignore"] = "error"
) -> ParsedRun:
    """Read a 6-column run file, checking every line.

    File-level rules checked here: UTF-8, not empty, six columns, a decimal
    score, topic ids, docnos and tags that can be stored (`id_limits`), each
    docno at most once per topic. Campaign rules (known topics,
    one unused tag) are in `validate_run_for_campaign`. With
    `extra_fields="ignore"`, fields after the tag are dropped instead of
    reported, as trec_eval does when it scores a run.
    """
    file = source_name(source, name)
    data = strip_bom(read_source(source))
    log = ProblemLog(file)
    table = _parse_run_fast(data)
    if table is None:
        table = _parse_run_general(data, log, ignore_extra_fields=extra_fields == "ignore")
    run = ParsedRun(file, table, log)
    if table.num_rows:
        _check_field_values(run)
        _check_duplicate_docnos(run)
    elif log.ok:
        log.add(0, "empty file: no run lines")
    return run


# How much of a run file `read_run_file` reads and parses at a time.
CHUNK_BYTES = 32 << 20


def read_run_file(
    path: str | Path,
    *,
    name: str | None = None,
    extra_fields: Literal["error", "ignore"] = "error",
    chunk_bytes: int = CHUNK_BYTES,
) -> ParsedRun:
    """`read_run` for a file on disk, in memory bounded by the parsed columns.

    The text is read and parsed `chunk_bytes` at a time, cut at line ends,
    so that it is never held whole (nor the parser's buffers for all of it:
    `read_run` on a 319 MB run peaks at 4.5 times the file). The table, in
    chunks, and the problems are those `read_run` gives for the same bytes:
    a file that is not UTF-8 reports only where it first is not, as
    `read_run` does; the duplicate check runs over the whole table.
    """
    file = source_name(path, name)
    log = ProblemLog(file)
    if _first_utf8_problem(path, chunk_bytes, log):
        return ParsedRun(file, _empty_run_table(), log)
    tables, first_line = [], 1
    for data in _line_chunks(path, chunk_bytes):
        table = _parse_run_fast(data, first_line)
        if table is None:
            table = _parse_run_general(
                data, log, ignore_extra_fields=extra_fields == "ignore", first_line=first_line
            )
        if table.num_rows:
            tables.append(table)
        first_line += data.count(b"\n")
        del data
        # The parser's buffers for this chunk go back to the system now, not
        # after the last chunk (the C library's malloc would keep them).
        pa.default_memory_pool().release_unused()
    run = ParsedRun(file, pa.concat_tables(tables) if tables else _empty_run_table(), log)
    if run.table.num_rows:
        _check_field_values(run)
        _check_duplicate_docnos(run)
    elif log.ok:
        log.add(0, "empty file: no run lines")
    return run


def _line_chunks(path: str | Path, chunk_bytes: int) -> Iterator[bytes]:
    """The file's bytes, BOM stripped, in pieces of about `chunk_bytes` that end at a
    line end (the last piece where the file ends). A cut at a newline never splits
    a UTF-8 character."""
    with open(path, "rb") as stream:
        carry, first = b"", True
        while True:
            block = stream.read(chunk_bytes)
            data = carry + block
            if block:
                cut = data.rfind(b"\n") + 1
                if cut == 0:  # no line end yet: read on
                    carry = data
                    continue
                data, carry = data[:cut], data[cut:]
            if first:  # the first piece starts the file
                data, first = strip_bom(data), False
            if data:
                yield data
            if not block:
                return


def _first_utf8_problem(path: str | Path, chunk_bytes: int, log: ProblemLog) -> bool:
    """`utf8_problem` over the whole file, a chunk at a time, with the file's line numbers."""
    first_line = 1
    for data in _line_chunks(path, chunk_bytes):
        chunk_log = ProblemLog(log.file)
        if utf8_problem(data, chunk_log):
            [problem] = chunk_log.problems
            log.add(first_line + problem.line - 1, problem.reason)
            return True
        first_line += data.count(b"\n")
    return False


def _parse_run_fast(data: bytes, first_line: int = 1) -> pa.Table | None:
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
                column_names=list(RUN_FILE_FIELDS),
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
    textual = [column for column in RUN_FILE_FIELDS if column != "score"]
    if any(pc.min(pc.binary_length(table.column(column))).as_py() == 0 for column in textual):
        return None
    table = table.select(["query_id", "doc_id", "score", "run_id"])
    if not pc.all(pc.is_finite(table.column("score"))).as_py():
        return None
    if pc.any(pc.starts_with(table.column("query_id"), "#")).as_py():
        return None
    table = table.combine_chunks()
    lines = pa.array(np.arange(first_line, first_line + table.num_rows, dtype=np.int32))
    return table.append_column("line", lines)


def _parse_run_general(
    data: bytes, log: ProblemLog, *, ignore_extra_fields: bool = False, first_line: int = 1
) -> pa.Table:
    """Any file: split every line on whitespace and report each bad line."""
    if utf8_problem(data, log):
        return _empty_run_table()
    lines = pa.array(data.decode("utf-8").split("\n"))
    line_numbers = np.arange(first_line, first_line + len(lines), dtype=np.int32)
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
    column = {name: flat.take(pa.array(starts + i)) for i, name in enumerate(RUN_FILE_FIELDS)}
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


def surely_no_duplicate_pairs(topic_codes: np.ndarray, doc_ids: pa.Array | pa.ChunkedArray) -> bool:
    """True when no (topic, docno) pair can repeat; False means "check exactly".

    Sorts one fingerprint per row (`string_keys.fingerprints`, read from the
    docnos' bytes with NumPy): about a third of the time of dictionary-
    encoding the docnos. Distinct fingerprints prove distinct pairs; a
    repeated one (a true duplicate, or a rare collision) sends the caller to
    the exact check, as do docnos longer than `string_keys.MAX_BYTES`. A
    chunked column is fingerprinted a chunk at a time (a row's fingerprint
    depends on that row alone), so a large file's temporaries stay small.
    """
    chunks = doc_ids.chunks if isinstance(doc_ids, pa.ChunkedArray) else [doc_ids]
    parts, start = [], 0
    for chunk in chunks:
        part = fingerprints(topic_codes[start : start + len(chunk)], chunk)
        if part is None:
            return False
        parts.append(part)
        start += len(chunk)
    mixed = parts[0] if len(parts) == 1 else np.concatenate(parts or [np.empty(0, np.uint64)])
    mixed.sort()
    return not np.any(mixed[1:] == mixed[:-1])


# What each stored column is called in a problem, and how long it may be.
_STORED_FIELDS = (
    ("query_id", "topic id", MAX_TOPIC_ID),
    ("doc_id", "docno", MAX_DOCNO),
    ("run_id", "run tag", MAX_RUN_TAG),
)


def _check_field_values(run: ParsedRun) -> None:
    """Topic ids, docnos and tags that could not be stored: too long, or holding a
    NUL or another control character (`id_limits.identifier_problem`)."""
    table, log = run.table, run.problems
    for column, what, limit in _STORED_FIELDS:
        values = table.column(column)
        bad = _holding_controls(values)
        # Bytes bound characters from above: count characters only when needed.
        if pc.max(pc.binary_length(values)).as_py() > limit:
            too_long = pc.greater(pc.utf8_length(values), limit)
            bad = too_long if bad is None else pc.or_(bad, too_long)
        if bad is None:
            continue
        rows = np.flatnonzero(bad.to_numpy(zero_copy_only=False))
        lines = table.column("line").take(pa.array(rows[: log.limit])).to_pylist()
        texts = values.take(pa.array(rows[: log.limit])).to_pylist()
        for line, text in zip(lines, texts, strict=True):
            reason = f"{what} {NUL_PROBLEM}" if "\x00" in text else None
            log.add(line, reason or identifier_problem(what, text, limit) or what)
        log.count_unlisted(max(0, len(rows) - log.limit))


def _holding_controls(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray | None:
    """Which values hold a control character; None when none can. Values of printable
    ASCII only (every byte from 0x20 to 0x7E: one pass of NumPy over the bytes, the
    common case) hold none, and are not searched."""
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    if all(_printable_ascii(value_bytes(chunk)) for chunk in chunks):
        return None
    return pc.match_substring_regex(values, CONTROL_CHARACTERS_RE2)


def _printable_ascii(data: np.ndarray) -> bool:
    return not data.size or (int(data.min()) >= 0x20 and int(data.max()) <= 0x7E)


def _check_duplicate_docnos(run: ParsedRun) -> None:
    table, log = run.table, run.problems
    doc_ids = table.column("doc_id")
    if surely_no_duplicate_pairs(run.topic_codes.indices.to_numpy(), doc_ids):
        return
    doc_ids = doc_ids.combine_chunks() if isinstance(doc_ids, pa.ChunkedArray) else doc_ids
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
