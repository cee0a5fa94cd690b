"""Topic files in every format (pure core)."""

from __future__ import annotations

import time

import pytest

from pooling.core import topic_files

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
    topics, log = topic_files.read_topics(SGML_TOPICS, name="topics.301")
    assert log.ok
    assert [t.topic_id for t in topics] == ["301", "302"]
    assert topics[0].title == "International Organized Crime"
    assert topics[0].description.startswith("Identify organizations")
    assert topics[0].narrative == "A relevant document must identify the organization."
    assert topics[1].title == "Poliomyelitis and Post-Polio"
    assert topics[1].description == "Is the disease of Poliomyelitis (polio) under control?"
    assert topics[1].line == 10


def test_reads_trec_xml_topics_with_attribute_or_child_number():
    topics, log = topic_files.read_topics(XML_TOPICS, name="topics.xml")
    assert log.ok
    assert [t.topic_id for t in topics] == ["1", "2"]
    assert topics[0].title == "58-year-old woman with chest pain."
    assert topics[0].extra == {"type": "diagnosis"}
    assert topics[1].title == "cranberries urinary tract infections"
    assert topics[1].narrative == "Relevant documents discuss cranberry products."
    assert [t.line for t in topics] == [3, 7]


def test_reads_jsonl_topics_keeping_extra_fields():
    data = b'{"topic_id": "covid-12", "title": "masks", "description": "Do masks work?", "answer": 1}\n\n{"id": 7, "query": "q7"}\n'
    topics, log = topic_files.read_topics(data, name="topics.jsonl")
    assert log.ok
    assert [(t.topic_id, t.title) for t in topics] == [("covid-12", "masks"), ("7", "q7")]
    assert topics[0].extra == {"answer": 1}
    assert topics[1].line == 3


def test_reads_tsv_topics_with_and_without_header():
    plain, log = topic_files.read_topics(b"1\tfirst\n2\tsecond\tlonger question\n", name="q.tsv")
    assert log.ok
    assert [(t.topic_id, t.title, t.description) for t in plain] == [
        ("1", "first", ""),
        ("2", "second", "longer question"),
    ]
    headed, log = topic_files.read_topics(b"qid\ttext\tlang\n5\tfive\ten\n", name="q.tsv")
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
    _, log = topic_files.read_topics(data, name=name)
    assert [(p.line, p.reason) for p in log.sorted()] == expected


def test_topic_format_is_detected_from_name_and_content():
    assert topic_files.detect_topic_format("x.txt", b"<top>\n<num>") == "sgml"
    assert topic_files.detect_topic_format("x.txt", b"<?xml version") == "xml"
    assert topic_files.detect_topic_format("x.txt", b'{"id": 1}') == "jsonl"
    assert topic_files.detect_topic_format("x.jsonl", b"") == "jsonl"
    assert topic_files.detect_topic_format("x.tsv", b"<top>") == "tsv"
    assert topic_files.detect_topic_format("queries", b"1\tq") == "tsv"


def test_unknown_topic_format_is_an_error():
    with pytest.raises(ValueError, match="unknown topic format 'csv'"):
        topic_files.read_topics(b"1,a\n", name="t.csv", format="csv")


@pytest.mark.parametrize(
    ("data", "name", "problem"),
    [
        (b"1\tti\x00tle\n", "t.tsv", "t.tsv:1: topic contains a NUL character"),
        (b'{"id": "1", "title": "a\\u0000"}\n', "t.jsonl", "t.jsonl:1: topic contains a NUL"),
        (b"x" * 201 + b"\ttitle\n", "t.tsv", "t.tsv:1: topic id of 201 characters"),
        (b"1\x1b[2J\ttitle\n", "t.tsv", "t.tsv:1: topic id '1\\x1b[2J' holds U+001B (ESC)"),
        (
            b'{"id": "1\\u202e", "title": "t"}\n',
            "t.jsonl",
            "t.jsonl:1: topic id '1\\u202e' holds U+202E (RIGHT-TO-LEFT OVERRIDE)",
        ),
        (
            b"<top>\n<num> Number: 7\x7f\n<title> t\n</top>\n",
            "t.sgml",
            "t.sgml:1: topic id '7\\x7f' holds U+007F (DEL)",
        ),
        (b'{"id": ' + b"9" * 5000 + b"}\n", "t.jsonl", "t.jsonl:1: not valid JSON: Exceeds"),
        (b"[" * 100_000 + b"\n", "t.jsonl", "t.jsonl:1: not valid JSON: nested too deeply"),
    ],
)
def test_hostile_topics_are_problems_with_their_line(data, name, problem):
    _, log = topic_files.read_topics(data, name=name)
    assert any(str(p).startswith(problem) for p in log.sorted()), log.summary_lines()


def test_the_topic_readers_are_linear_on_a_megabyte_of_adversarial_tags():
    for data, name in (
        (b"<top>" * 220_000, "t.sgml"),
        (b"<top>\n<num> 1\n" + b"<a" * 500_000 + b"\n</top>\n", "t.sgml"),
        (b"<topics>" + b"<topic>" * 150_000, "t.xml"),
    ):
        started = time.process_time()
        topic_files.read_topics(data, name=name)
        assert time.process_time() - started < 1.0, name
