"""The run, topic and document readers (pure core)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pooling import trec_io
from pooling.trec_io import InputError, ProblemLog

GOOD_RUN = b"""301 Q0 d1 1 2.5 tagA
301 Q0 d2 2 1.5e-03 tagA
302 Q0 d1 1 -0.25 tagA
"""


def reasons(run: trec_io.ParsedRun) -> list[tuple[int, str]]:
    return [(p.line, p.reason) for p in run.problems.sorted()]


def check(data: bytes, topics=("301", "302"), used=()) -> trec_io.ParsedRun:
    run = trec_io.read_run(data, name="run.txt")
    trec_io.validate_run_for_campaign(run, known_topics=topics, used_tags=used)
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
    tables = [trec_io.read_run(d).table for d in (GOOD_RUN, tabbed, mixed)]
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
    trec_io.write_run_cache(run, tmp_path / "run.parquet")
    cached = trec_io.read_run_cache(tmp_path / "run.parquet")
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


def test_input_error_lists_each_files_problems():
    first = check(b"301 Q0 d1 1 x t\n")
    second = trec_io.read_run(b"", name="other.txt")
    error = InputError.from_logs(first.problems, second.problems)
    assert str(error).splitlines() == [
        "run.txt:1: score 'x' is not a number",
        "other.txt: empty file: no run lines",
    ]
    assert error.as_dict() == {
        "errors": [
            {"file": "run.txt", "line": 1, "reason": "score 'x' is not a number"},
            {"file": "other.txt", "line": 0, "reason": "empty file: no run lines"},
        ],
        "total": 2,
    }


def test_problem_log_keeps_earliest_lines_when_added_out_of_order():
    log = ProblemLog("f", limit=3)
    for line in [9, 8, 7, 6, 5, 4, 3, 2, 1, 10, 11, 12, 13]:
        log.add(line, "x")
    assert [p.line for p in log.sorted()] == [1, 2, 3]
    assert log.total == 13


def test_duplicate_pairs_finds_repeats_and_first_rows():
    q = pa.array(["a", "a", "b", "a", "b", "a"])
    d = pa.array(["x", "y", "x", "x", "x", "x"])
    repeats, firsts = trec_io.duplicate_pairs(q, d)
    assert repeats.tolist() == [3, 4, 5]
    assert firsts.tolist() == [0, 2, 0]


# --------------------------------------------------------------------------
# Topics

SGML_TOPICS = b"""<top>
<num> Number: 301
<title> International Organized Crime
<desc> Description:
Identify organizations that participate in international criminal activity.
<narr> Narrative:
A relevant document must identify the organization.
</top>

<top>
<num> Number: 302 </num>
<title> Poliomyelitis and Post-Polio </title>
<desc> Description: Is the disease of Poliomyelitis (polio) under control?
</top>
"""

XML_TOPICS = b"""<?xml version="1.0" encoding="UTF-8"?>
<topics>
  <topic number="1" type="diagnosis">
    <description>A 58-year-old woman with hypertension presents with chest pain.</description>
    <summary>58-year-old woman with chest pain.</summary>
  </topic>
  <topic>
    <number>2</number>
    <query>cranberries urinary tract infections</query>
    <description>Can cranberries prevent urinary tract infections?</description>
    <narrative>Relevant documents discuss cranberry products.</narrative>
  </topic>
</topics>
"""


def test_reads_trec_sgml_topics():
    topics, log = trec_io.read_topics(SGML_TOPICS, name="topics.301")
    assert log.ok
    assert [t.topic_id for t in topics] == ["301", "302"]
    assert topics[0].title == "International Organized Crime"
    assert topics[0].description.startswith("Identify organizations")
    assert topics[0].narrative == "A relevant document must identify the organization."
    assert topics[1].title == "Poliomyelitis and Post-Polio"
    assert topics[1].description == "Is the disease of Poliomyelitis (polio) under control?"
    assert topics[1].line == 10


def test_reads_trec_xml_topics_with_attribute_or_child_number():
    topics, log = trec_io.read_topics(XML_TOPICS, name="topics.xml")
    assert log.ok
    assert [t.topic_id for t in topics] == ["1", "2"]
    assert topics[0].title == "58-year-old woman with chest pain."
    assert topics[0].extra == {"type": "diagnosis"}
    assert topics[1].title == "cranberries urinary tract infections"
    assert topics[1].narrative == "Relevant documents discuss cranberry products."
    assert [t.line for t in topics] == [3, 7]


def test_reads_jsonl_topics_keeping_extra_fields():
    data = b'{"topic_id": "covid-12", "title": "masks", "description": "Do masks work?", "answer": 1}\n\n{"id": 7, "query": "q7"}\n'
    topics, log = trec_io.read_topics(data, name="topics.jsonl")
    assert log.ok
    assert [(t.topic_id, t.title) for t in topics] == [("covid-12", "masks"), ("7", "q7")]
    assert topics[0].extra == {"answer": 1}
    assert topics[1].line == 3


def test_reads_tsv_topics_with_and_without_header():
    plain, log = trec_io.read_topics(b"1\tfirst\n2\tsecond\tlonger question\n", name="q.tsv")
    assert log.ok
    assert [(t.topic_id, t.title, t.description) for t in plain] == [
        ("1", "first", ""),
        ("2", "second", "longer question"),
    ]
    headed, log = trec_io.read_topics(b"qid\ttext\tlang\n5\tfive\ten\n", name="q.tsv")
    assert log.ok
    assert (headed[0].topic_id, headed[0].title, headed[0].extra) == ("5", "five", {"lang": "en"})


@pytest.mark.parametrize(
    ("data", "name", "expected"),
    [
        (b"1\ta\n1\tb\n", "t.tsv", [(2, "topic '1' given twice (first on line 1)")]),
        (b'{"title": "no id"}\n', "t.jsonl", [(1, "topic has no id")]),
        (
            b'{"id": "1", "title": "ok"}\n{"id": 2,\n',
            "t.jsonl",
            [(2, "not valid JSON: Expecting property name enclosed in double quotes at column 10")],
        ),
        (b"[1, 2]\n", "t.jsonl", [(1, "expected a JSON object")]),
        (
            b'{"id": "3", "narrative": "only"}\n',
            "t.jsonl",
            [(1, "topic '3' has neither a title nor a description")],
        ),
        (
            b"<topics>\n<topic number='1'><title>x</title>\n</topics>\n",
            "t.xml",
            [(3, "malformed XML: mismatched tag at column 3")],
        ),
        (b"<top>\n<num> Number: 1\n<title> t\n", "t.sgml", [(1, "<top> without a closing </top>")]),
        (b"1\ta\tb\tc\td\n", "t.tsv", [(1, "expected at most 4 tab-separated columns, found 5")]),
        (b"\n", "t.tsv", [(0, "no topics found (read as tsv)")]),
        (b"1\tcaf\xe9\n", "t.tsv", [(1, "not UTF-8 (byte 0xe9 at column 6)")]),
    ],
)
def test_topic_file_problems_name_the_line(data: bytes, name: str, expected):
    _, log = trec_io.read_topics(data, name=name)
    assert [(p.line, p.reason) for p in log.sorted()] == expected


def test_topic_format_is_detected_from_name_and_content():
    assert trec_io.detect_topic_format("x.txt", b"<top>\n<num>") == "sgml"
    assert trec_io.detect_topic_format("x.txt", b"<?xml version") == "xml"
    assert trec_io.detect_topic_format("x.txt", b'{"id": 1}') == "jsonl"
    assert trec_io.detect_topic_format("x.jsonl", b"") == "jsonl"
    assert trec_io.detect_topic_format("x.tsv", b"<top>") == "tsv"
    assert trec_io.detect_topic_format("queries", b"1\tq") == "tsv"


def test_unknown_topic_format_is_an_error():
    with pytest.raises(ValueError, match="unknown topic format 'csv'"):
        trec_io.read_topics(b"1,a\n", name="t.csv", format="csv")


# --------------------------------------------------------------------------
# Documents


def read_documents(data: bytes, fmt: str, only=None):
    log = ProblemLog("docs")
    docs = list(trec_io.iter_documents(io.BytesIO(data), log, format=fmt, only=only))
    return docs, [(p.line, p.reason) for p in log.sorted()]


def test_reads_jsonl_documents():
    data = b'{"docno": "d1", "title": "T1", "text": "Body one", "url": "http://x"}\n{"id": "d2", "contents": "Body two"}\n'
    docs, problems = read_documents(data, "jsonl")
    assert problems == []
    assert [(d.docno, d.title, d.text, d.url) for d in docs] == [
        ("d1", "T1", "Body one", "http://x"),
        ("d2", "", "Body two", ""),
    ]


def test_reads_trec_sgml_documents():
    data = b"""<DOC>
<DOCNO> FT911-3 </DOCNO>
<HEADLINE>FT  14 MAY 91 / Markets</HEADLINE>
<TEXT>
Shares <B>rose</B> sharply.
</TEXT>
<TEXT>Second part.</TEXT>
</DOC>
<DOC>
<DOCNO>LA010189-0001</DOCNO>
Plain body with no text element.
</DOC>
"""
    docs, problems = read_documents(data, "sgml")
    assert problems == []
    assert [(d.docno, d.title, d.line) for d in docs] == [
        ("FT911-3", "FT 14 MAY 91 / Markets", 1),
        ("LA010189-0001", "", 9),
    ]
    assert docs[0].text == "Shares rose sharply.\n\nSecond part."
    assert docs[1].text == "Plain body with no text element."


def test_reads_tsv_documents_in_two_three_and_named_columns():
    two, problems = read_documents(b"7\tA passage.\n", "tsv")
    assert problems == []
    assert (two[0].docno, two[0].title, two[0].text) == ("7", "", "A passage.")
    three, _ = read_documents(b"d1\tTitle\tBody\n", "tsv")
    assert (three[0].title, three[0].text) == ("Title", "Body")
    named, _ = read_documents(b"docno\ttext\turl\nd9\tBody\thttp://y\n", "tsv")
    assert (named[0].docno, named[0].text, named[0].url) == ("d9", "Body", "http://y")
    assert named[0].line == 2


def test_only_loads_the_listed_docnos():
    data = b"d1\tone\nd2\ttwo\nd3\tthree\n"
    docs, problems = read_documents(data, "tsv", only={"d1", "d3", "d9"})
    assert problems == []
    assert [d.docno for d in docs] == ["d1", "d3"]


@pytest.mark.parametrize(
    ("data", "fmt", "expected"),
    [
        (b"d1\ta\nd1\tb\n", "tsv", [(2, "docno 'd1' given twice")]),
        (b'{"title": "x"}\n', "jsonl", [(1, "document has no docno")]),
        (b'{"docno": "a b", "text": "x"}\n', "jsonl", [(1, "docno 'a b' contains whitespace")]),
        (
            b'{"docno": "d1"\n',
            "jsonl",
            [(1, "not valid JSON: Expecting ',' delimiter at column 15")],
        ),
        (b"<DOC>\n<DOCNO>a</DOCNO>\n", "sgml", [(1, "<DOC> without a closing </DOC>")]),
        (b"stray\n<DOC><DOCNO>a</DOCNO></DOC>\n", "sgml", [(1, "text outside a <DOC> element")]),
        (b"d1\tok\nd2\tcaf\xe9\n", "tsv", [(2, "not UTF-8 (byte 0xe9 at column 7)")]),
        (b"", "jsonl", [(0, "no documents found (read as jsonl)")]),
    ],
)
def test_document_file_problems_name_the_line(data: bytes, fmt: str, expected):
    _, problems = read_documents(data, fmt)
    assert problems == expected


def test_document_reader_streams_one_record_at_a_time():
    class CountingStream(io.BytesIO):
        lines_read = 0

        def __iter__(self):
            for line in io.BytesIO(self.getvalue()):
                CountingStream.lines_read += 1
                yield line

    data = b"".join(f"d{i}\ttext {i}\n".encode() for i in range(1000))
    records = trec_io.iter_documents(CountingStream(data), ProblemLog("d"), format="tsv")
    first = next(records)
    assert first.docno == "d0"
    assert CountingStream.lines_read < 10


def test_document_format_is_detected():
    assert trec_io.detect_document_format("c.jsonl.gz", b"") == "jsonl"
    assert trec_io.detect_document_format("c", b"  <DOC>\n") == "sgml"
    assert trec_io.detect_document_format("c", b'{"docno"') == "jsonl"
    assert trec_io.detect_document_format("collection.tsv", b"1\tx") == "tsv"


# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "module", ["pooling.trec_io", "pooling.label_schema", "workbench.demo_content"]
)
def test_pure_core_does_not_import_django(module: str):
    code = f"import sys, {module}; sys.exit('django' in sys.modules)"
    root = Path(__file__).resolve().parents[2]
    assert subprocess.run([sys.executable, "-c", code], cwd=root).returncode == 0


def test_fields_after_the_tag_can_be_ignored_for_scoring():
    data = b"301 Q0 d1 1 2 t extra words\n301 Q0 d2 2 1 t\n301 Q0 short\n"
    strict = check(data)
    assert [line for line, _ in reasons(strict)] == [1, 3]
    lenient = trec_io.read_run(data, name="run.txt", extra_fields="ignore")
    assert reasons(lenient) == [(3, "expected 6 columns (topic Q0 docno rank score tag), found 3")]
    assert lenient.table.column("doc_id").to_pylist() == ["d1", "d2"]
    assert lenient.table.column("run_id").to_pylist() == ["t", "t"]


@given(st.lists(st.sampled_from(["1", "2", "10", "é"]), max_size=40))
def test_dictionary_of_runs_gives_the_codes_of_dictionary_encode(values):
    column = pa.chunked_array([values[:5], values[5:]], pa.string())
    got = trec_io.dictionary_of_runs(column)
    expected = pc.dictionary_encode(column).combine_chunks()
    assert got.indices.to_pylist() == expected.indices.to_pylist()
    assert got.dictionary.to_pylist() == expected.dictionary.to_pylist()


def _fast_check(topics: list[str], docs: list[str]) -> bool:
    codes = trec_io._dictionary(pa.array(topics)).indices.to_numpy()
    return trec_io.surely_no_duplicate_pairs(codes, pa.array(docs))


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
