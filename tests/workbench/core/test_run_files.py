"""Run files: every line read and checked (pure core)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.core import run_files

GOOD_RUN = b"""301 Q0 d1 1 2.5 tagA
301 Q0 d2 2 1.5e-03 tagA
302 Q0 d1 1 -0.25 tagA
"""


def reasons(run: run_files.ParsedRun) -> list[tuple[int, str]]:
    return [(p.line, p.reason) for p in run.problems.sorted()]


def check(data: bytes, topics=("301", "302"), used=()) -> run_files.ParsedRun:
    run = run_files.read_run(data, name="run.txt")
    run_files.validate_run_for_campaign(run, known_topics=topics, used_tags=used)
    return run


# --------------------------------------------------------------------------
# Runs: accepted input


def test_read_run_parses_rows_with_line_numbers():
    run = check(GOOD_RUN)
    assert run.ok
    assert run.table.column("query_id").to_pylist() == ["301", "301", "302"]
    assert run.table.column("doc_id").to_pylist() == ["d1", "d2", "d1"]
    assert run.table.column("score").to_pylist() == [2.5, 0.0015, -0.25]
    assert run.table.column("line").to_pylist() == [1, 2, 3]
    assert run.tag == "tagA"


def test_scientific_notation_scores_are_valid():
    run = check(b"301 Q0 d1 1 1.5e-03 t\n301 Q0 d2 2 -2E+2 t\n301 Q0 d3 3 .5 t\n")
    assert run.ok
    assert run.table.column("score").to_pylist() == [0.0015, -200.0, 0.5]


def test_comments_blank_lines_crlf_and_bom_are_accepted():
    data = b"\xef\xbb\xbf# produced by bm25\r\n301 Q0 d1 1 2 t\r\n\r\n  # indented note\r\n301\tQ0\td2 2   1 t\r\n"
    run = check(data)
    assert run.ok, reasons(run)
    assert run.table.column("doc_id").to_pylist() == ["d1", "d2"]
    assert run.table.column("line").to_pylist() == [2, 5]


def test_fast_and_general_parsers_agree():
    tabbed = GOOD_RUN.replace(b" ", b"\t")
    mixed = GOOD_RUN.replace(b" Q0 ", b"\tQ0  ")
    tables = [run_files.read_run(d).table for d in (GOOD_RUN, tabbed, mixed)]
    assert tables[0].equals(tables[1])
    assert tables[0].equals(tables[2])


@pytest.mark.parametrize(
    "line",
    [b" Q0 d2 2 1 t", b"301 Q0  2 1 t", b"301 Q0 d2 2 1 ", b"301\tQ0\td2\t2\t1\t"],
    ids=["no topic", "no docno", "no tag", "no tag, tabs"],
)
def test_a_missing_field_padded_with_a_separator_is_not_an_empty_value(line):
    separator = b"\t" if b"\t" in line else b" "
    first = b"301 Q0 d1 1 2 t".replace(b" ", separator)
    for ending in (b"\n", b""):
        run = check(first + b"\n" + line + ending)
        assert reasons(run) == [(2, "expected 6 columns (topic Q0 docno rank score tag), found 5")]


def test_summary_counts_topics_lines_and_depth():
    data = b"".join(f"302 Q0 d{i} {i} {9 - i} t\n".encode() for i in range(3))
    summary = check(GOOD_RUN + data.replace(b" t\n", b" tagA\n")).summary()
    assert summary["tag"] == "tagA"
    assert summary["lines"] == 6
    assert summary["topics"] == 2
    assert summary["depth"] == 4
    assert summary["documents_per_topic"] == {"301": 2, "302": 4}


def test_summary_orders_numeric_topics_numerically():
    data = b"10 Q0 a 1 1 t\n9 Q0 a 1 1 t\nb2 Q0 a 1 1 t\n"
    summary = check(data, topics=("9", "10", "b2")).summary()
    assert list(summary["documents_per_topic"]) == ["9", "10", "b2"]


def test_topic_ids_stay_strings():
    run = check(b"007 Q0 d1 1 1 t\n", topics=("007",))
    assert run.ok
    assert run.table.column("query_id").to_pylist() == ["007"]


def test_run_cache_round_trips(tmp_path: Path):
    run = check(GOOD_RUN)
    run_files.write_run_cache(run, tmp_path / "run.parquet")
    cached = run_files.read_run_cache(tmp_path / "run.parquet")
    assert cached.column_names == ["query_id", "doc_id", "score", "run_id"]
    assert cached.column("doc_id").to_pylist() == ["d1", "d2", "d1"]
    assert cached.column("score").to_pylist() == [2.5, 0.0015, -0.25]
    assert set(cached.column("run_id").to_pylist()) == {"tagA"}


# --------------------------------------------------------------------------
# Runs: every rule, with the line it names


def test_wrong_column_count_names_the_line():
    run = check(b"301 Q0 d1 1 2 t\n301 Q0 d2 2 t\n301 Q0 d3 3 1 t extra\n")
    assert reasons(run) == [
        (2, "expected 6 columns (topic Q0 docno rank score tag), found 5"),
        (3, "expected 6 columns (topic Q0 docno rank score tag), found 7"),
    ]


@pytest.mark.parametrize("score", [b"abc", b"1.2.3", b"0x1A", b"nan", b"inf", b"1,5", b"--1"])
def test_unparsable_score_is_rejected(score: bytes):
    run = check(b"301 Q0 d1 1 2 t\n301 Q0 d2 2 " + score + b" t\n")
    assert reasons(run) == [(2, f"score {score.decode()!r} is not a number")]


def test_score_beyond_double_range_is_rejected():
    run = check(b"301 Q0 d1 1 1e999 t\n")
    assert reasons(run) == [(1, "score is out of the range of a double")]


def test_docno_twice_in_a_topic_is_rejected_with_both_lines():
    run = check(b"301 Q0 d1 1 3 t\n302 Q0 d1 1 3 t\n301 Q0 d2 2 2 t\n301 Q0 d1 3 1 t\n")
    assert reasons(run) == [(4, "docno 'd1' appears twice in topic '301' (first on line 1)")]


def test_unknown_topic_is_rejected():
    run = check(b"301 Q0 d1 1 3 t\n999 Q0 d1 1 3 t\n")
    assert reasons(run) == [(2, "topic '999' is not a topic of this campaign")]


def test_more_than_one_tag_is_rejected_at_the_first_other_tag():
    run = check(b"301 Q0 d1 1 3 tagA\n301 Q0 d2 2 2 tagA\n302 Q0 d1 1 3 tagB\n")
    assert reasons(run) == [
        (
            3,
            "more than one run tag in the file ('tagA', 'tagB'); a file holds exactly one run",
        )
    ]


def test_tag_already_used_in_campaign_is_rejected():
    run = check(GOOD_RUN, used={"tagA"})
    assert reasons(run) == [(1, "run tag 'tagA' is already used in this campaign")]


@pytest.mark.parametrize("data", [b"", b"\n\n", b"# only a comment\n"])
def test_empty_file_is_rejected(data: bytes):
    run = check(data)
    assert reasons(run) == [(0, "empty file: no run lines")]
    assert str(run.problems.sorted()[0]) == "run.txt: empty file: no run lines"


def test_non_utf8_file_is_rejected_with_its_line():
    run = check(b"301 Q0 d1 1 3 t\n301 Q0 caf\xe9 2 2 t\n")
    assert reasons(run) == [(2, "not UTF-8 (byte 0xe9 at column 11)")]


@pytest.mark.parametrize(
    "line", [b"301 Q0 d2 \xff 2 t", b"301 \xffQ0 d2 2 2 t"], ids=["rank", "Q0"]
)
def test_non_utf8_bytes_in_the_ignored_columns_are_rejected_too(line):
    run = check(b"301 Q0 d1 1 3 t\n" + line + b"\n")
    assert [number for number, _ in reasons(run)] == [2]
    assert reasons(run)[0][1].startswith("not UTF-8 (byte 0xff at column ")


def test_only_the_first_50_problems_are_listed_then_counted():
    data = b"".join(f"301 Q0 d{i} {i} bad t\n".encode() for i in range(1, 121))
    run = check(data)
    listed = run.problems.sorted()
    assert run.problems.total == 120
    assert [p.line for p in listed] == list(range(1, 51))
    summary = run.problems.summary_lines()
    assert summary[-1] == "run.txt: ... and 70 more problems"
    assert len(summary) == 51


def test_the_first_50_listed_are_the_earliest_lines_across_rules():
    bad_scores = b"".join(f"301 Q0 d{i} {i} x t\n".encode() for i in range(1, 60))
    run = check(bad_scores + b"301 Q0 short\n")
    assert run.problems.total == 60
    assert [p.line for p in run.problems.sorted()] == list(range(1, 51))


def test_every_problem_of_a_file_is_reported_together():
    run = check(
        b"301 Q0 d1 1 x tagA\n301 Q0 d2\n999 Q0 d3 3 1 tagA\n301 Q0 d4 4 1 tagA\n", used={"tagA"}
    )
    lines = [line for line, _ in reasons(run)]
    assert lines == [1, 1, 2, 3]


def test_duplicate_pairs_finds_repeats_and_first_rows():
    q = pa.array(["a", "a", "b", "a", "b", "a"])
    d = pa.array(["x", "y", "x", "x", "x", "x"])
    repeats, firsts = run_files.duplicate_pairs(q, d)
    assert repeats.tolist() == [3, 4, 5]
    assert firsts.tolist() == [0, 2, 0]


def test_fields_after_the_tag_can_be_ignored_for_scoring():
    data = b"301 Q0 d1 1 2 t extra words\n301 Q0 d2 2 1 t\n301 Q0 short\n"
    strict = check(data)
    assert [line for line, _ in reasons(strict)] == [1, 3]
    lenient = run_files.read_run(data, name="run.txt", extra_fields="ignore")
    assert reasons(lenient) == [(3, "expected 6 columns (topic Q0 docno rank score tag), found 3")]
    assert lenient.table.column("doc_id").to_pylist() == ["d1", "d2"]
    assert lenient.table.column("run_id").to_pylist() == ["t", "t"]


@given(st.lists(st.sampled_from(["1", "2", "10", "é"]), max_size=40))
def test_dictionary_of_runs_gives_the_codes_of_dictionary_encode(values):
    column = pa.chunked_array([values[:5], values[5:]], pa.string())
    got = run_files.dictionary_of_runs(column)
    expected = pc.dictionary_encode(column).combine_chunks()
    assert got.indices.to_pylist() == expected.indices.to_pylist()
    assert got.dictionary.to_pylist() == expected.dictionary.to_pylist()


def _fast_check(topics: list[str], docs: list[str]) -> bool:
    codes = run_files._dictionary(pa.array(topics)).indices.to_numpy()
    return run_files.surely_no_duplicate_pairs(codes, pa.array(docs))


def test_fast_duplicate_check_proves_distinct_pairs():
    assert _fast_check(["1", "1", "2"], ["d1", "d2", "d1"])
    assert not _fast_check(["1", "2", "1"], ["d1", "d1", "d1"])


def test_fast_duplicate_check_leaves_long_docnos_to_the_exact_check():
    assert _fast_check(["1", "1"], ["x" * 64, "y"])
    assert not _fast_check(["1", "1"], ["x" * 65, "y"])


def test_fast_duplicate_check_reads_non_ascii_docnos_by_their_bytes():
    assert _fast_check(["1", "1"], ["caf\u00e9", "cafe"])
    assert not _fast_check(["1", "1"], ["caf\u00e9", "caf\u00e9"])


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["1", "2", "10"]), st.text("ab0\x00\u00e9", min_size=1, max_size=20)
        ),
        min_size=1,
        max_size=60,
    )
)
def test_fast_duplicate_check_never_misses_a_duplicate(pairs):
    topics, docs = [t for t, _ in pairs], [d for _, d in pairs]
    if _fast_check(topics, docs):
        assert len(set(pairs)) == len(pairs)


# --------------------------------------------------------------------------
# Values the database could not store (issue 12, items 6 and 7)


@pytest.mark.parametrize("separator", [" ", "\t", "  "])  # the fast and the general parser
def test_ids_longer_than_can_be_stored_are_named_by_line(separator):
    long_doc, long_tag, long_topic = "d" * 501, "t" * 201, "3" * 201
    lines = [
        ["301", "Q0", "d" * 500, "1", "2", "tagA"],  # exactly the limit: fine
        ["301", "Q0", long_doc, "2", "1", "tagA"],
        ["301", "Q0", "d3", "3", "0", long_tag],
        [long_topic, "Q0", "d4", "1", "0", "tagA"],
    ]
    data = "".join(separator.join(line) + "\n" for line in lines).encode()
    problems = reasons(run_files.read_run(data, name="run.txt"))
    assert (
        2,
        "docno of 501 characters ('" + "d" * 40 + "'...): at most 500 are allowed",
    ) in problems
    assert (
        3,
        "run tag of 201 characters ('" + "t" * 40 + "'...): at most 200 are allowed",
    ) in problems
    assert (
        4,
        "topic id of 201 characters ('" + "3" * 40 + "'...): at most 200 are allowed",
    ) in problems
    assert not any(line == 1 for line, _ in problems)


def test_limits_count_characters_not_bytes():
    docno = "é" * 500  # 1,000 bytes, 500 characters
    assert check(f"301 Q0 {docno} 1 1 tagA\n".encode()).ok


@pytest.mark.parametrize(
    "where", ["301 Q0 d\x001 1 1 tagA", "301 Q0 d1 1 1 ta\x00g", "30\x001 Q0 d1 1 1 t"]
)
def test_a_nul_in_a_stored_field_is_refused(where):
    problems = reasons(run_files.read_run((where + "\n").encode(), name="run.txt"))
    assert any("contains a NUL character" in reason for _, reason in problems)


# Control characters no id may hold: ESC, DEL, a C1 control, and the bidi controls.
CONTROLS = ["\x1b", "\x7f", "\x85", "\u202e", "\u2066", "\u200f", "\x01"]


@pytest.mark.parametrize("control", CONTROLS)
@pytest.mark.parametrize("column", ["topic id", "docno", "run tag"])
def test_a_control_character_in_an_id_is_refused_with_its_line(control, column, tmp_path):
    fields = {"topic id": "301", "docno": "d2", "run tag": "tagA"}
    fields[column] += control
    lines = [
        "301 Q0 d1 1 2 tagA",
        f"{fields['topic id']} Q0 {fields['docno']} 2 1 {fields['run tag']}",
    ]
    data = ("\n".join(lines) + "\n").encode()
    (tmp_path / "run.txt").write_bytes(data)
    # Read at once, and a chunk at a time from a file on disk (a large upload).
    for run in (
        run_files.read_run(data, name="run.txt"),
        run_files.read_run_file(tmp_path / "run.txt", chunk_bytes=8),
    ):
        [(line, reason)] = [p for p in reasons(run) if "control" in p[1]]
        assert line == 2
        assert reason.startswith(f"{column} {fields[column]!r} holds U+{ord(control):04X}")


def test_letters_beyond_ascii_are_not_control_characters():
    assert check("301 Q0 d\u00e9\u4e2d\u200d 1 1 t\u00a0g\n".encode()).ok


def test_a_file_on_disk_is_checked_for_ids_too_long(tmp_path):
    (tmp_path / "run.txt").write_bytes(f"301 Q0 {'d' * 501} 1 1 tagA\n".encode())
    [(line, reason)] = reasons(run_files.read_run_file(tmp_path / "run.txt"))
    assert (line, reason[:17]) == (1, "docno of 501 char")


# A file on disk, read a chunk at a time, reads as the same bytes at once

RUN_LINE = st.one_of(
    st.builds(
        "{} Q0 {} {} {} {}".format,
        st.sampled_from(["301", "302", "#303"]),
        st.sampled_from(["d1", "d2", "d3", "é4"]),
        st.integers(1, 9),
        st.sampled_from(["1.5", "2", "-3e2", "x", "1e999", "nan"]),
        st.sampled_from(["t", "u"]),
    ),
    st.sampled_from(
        ["", "   ", "# a comment", "301 Q0 d1", "301\tQ0\td2\t1\t2\tt", "301 Q0 d5 1 2 t x"]
    ),
)
RUN_FILE = st.builds(
    lambda bom, lines, ending, last, junk: (
        (b"\xef\xbb\xbf" if bom else b"")
        + ending.join(line.encode() for line in lines)
        + (ending if last else b"")
        + junk
    ),
    st.booleans(),
    st.lists(RUN_LINE, max_size=40),
    st.sampled_from([b"\n", b"\r\n"]),
    st.booleans(),
    st.sampled_from([b"", b"", b"", b"\n301 Q0 \xff 1 1 t\n"]),
)


def problems_of(run: run_files.ParsedRun) -> tuple[list[str], int]:
    return [str(p) for p in run.problems.sorted()], run.problems.total


@given(data=RUN_FILE, chunk_bytes=st.integers(1, 120), extra=st.sampled_from(["error", "ignore"]))
def test_a_run_read_from_disk_in_chunks_equals_the_run_read_at_once(
    tmp_path_factory, data, chunk_bytes, extra
):
    path = tmp_path_factory.mktemp("chunks") / "run.txt"
    path.write_bytes(data)
    whole = run_files.read_run(data, name="run.txt", extra_fields=extra)
    chunked = run_files.read_run_file(
        path, name="run.txt", extra_fields=extra, chunk_bytes=chunk_bytes
    )
    assert problems_of(chunked) == problems_of(whole)
    assert chunked.table.combine_chunks().to_pylist() == whole.table.to_pylist()


def test_chunks_cut_at_line_ends_and_number_lines_across_them(tmp_path):
    path = tmp_path / "run.txt"
    lines = [f"301 Q0 d{n} {n} {100 - n} t" for n in range(1, 200)] + ["301 Q0 d7 1 1 t"]
    path.write_text("\n".join(lines) + "\n")
    run = run_files.read_run_file(path, chunk_bytes=64)
    assert run.table.column("line").num_chunks > 10
    assert run.table.column("line").to_pylist() == list(range(1, 201))
    assert problems_of(run) == (
        [f"{path}:200: docno 'd7' appears twice in topic '301' (first on line 7)"],
        1,
    )
