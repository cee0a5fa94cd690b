"""Document collections in every format (pure core)."""

from __future__ import annotations

import io
import time

import pytest

from pooling.core import document_files
from workbench.core.problems import ProblemLog

# --------------------------------------------------------------------------
# Documents


def read_documents(data: bytes, fmt: str, only=None):
    log = ProblemLog("docs")
    docs = list(document_files.iter_documents(io.BytesIO(data), log, format=fmt, only=only))
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
        (
            b'{"docno": "a", "text": "cut\n',
            "jsonl",
            [(1, "not valid JSON: Unterminated string starting at column 24")],
        ),
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
    records = document_files.iter_documents(CountingStream(data), ProblemLog("d"), format="tsv")
    first = next(records)
    assert first.docno == "d0"
    assert CountingStream.lines_read < 10


def test_document_format_is_detected():
    assert document_files.detect_document_format("c.jsonl.gz", b"") == "jsonl"
    assert document_files.detect_document_format("c", b"  <DOC>\n") == "sgml"
    assert document_files.detect_document_format("c", b'{"docno"') == "jsonl"
    assert document_files.detect_document_format("collection.tsv", b"1\tx") == "tsv"


@pytest.mark.parametrize(
    ("data", "fmt", "problem"),
    [
        (
            b'{"docno": "d1", "text": "a\\u0000b"}\n',
            "jsonl",
            "docs:1: document contains a NUL character",
        ),
        (b"d1\tti\x00tle\ttext\n", "tsv", "docs:1: document contains a NUL character"),
        (
            b"<DOC>\n<DOCNO>d1</DOCNO>\n<TEXT>x\x00y</TEXT>\n</DOC>\n",
            "sgml",
            "docs:1: document contains a NUL character",
        ),
        (
            b'{"docno": "' + b"d" * 501 + b'", "text": "t"}\n',
            "jsonl",
            "docs:1: docno of 501 characters",
        ),
        (
            b'{"docno": "d\\u2067", "text": "t"}\n',
            "jsonl",
            "docs:1: docno 'd\\u2067' holds U+2067 (RIGHT-TO-LEFT ISOLATE)",
        ),
        (b"d\x1b1\ttitle\ttext\n", "tsv", "docs:1: docno 'd\\x1b1' holds U+001B (ESC)"),
        (
            b"<DOC>\n<DOCNO>d\xc2\x9b1</DOCNO>\n<TEXT>x</TEXT>\n</DOC>\n",
            "sgml",
            "docs:1: docno 'd\\x9b1' holds U+009B (a C1 control)",
        ),
        (
            b'{"docno": "d1", "text": "t", "url": "http://x/' + b"a" * 2000 + b'"}\n',
            "jsonl",
            "docs:1: url of 2,009 characters",
        ),
        (b'{"docno": "d1", "n": ' + b"7" * 5000 + b"}\n", "jsonl", "docs:1: not valid JSON: "),
        (b'{"docno": ' + b"[" * 100_000 + b"}\n", "jsonl", "docs:1: not valid JSON: "),
    ],
)
def test_hostile_documents_are_problems_with_their_line(data, fmt, problem):
    _, problems = read_documents(data, fmt)
    assert any(f"docs:{line}: {reason}".startswith(problem) for line, reason in problems), problems


def test_a_docno_of_500_characters_is_a_real_id():
    docs, problems = read_documents(b'{"docno": "' + b"d" * 500 + b'", "text": "t"}\n', "jsonl")
    assert (problems, len(docs[0].docno)) == ([], 500)


ADVERSARIAL_SGML = [
    b"<DOC>\n<DOCNO>d1</DOCNO>\n" + b"<TITLE " * 150_000 + b"\n</DOC>\n",
    b"<DOC>\n<DOCNO>d1</DOCNO>\n<TEXT>" + b"<a" * 500_000 + b"</TEXT>\n</DOC>\n",
    b"<DOC>\n" + b"<DOCNO>" * 150_000 + b"\n</DOC>\n",
    b"<DOC>\n<DOCNO>d1</DOCNO>\n" + b"<TITLE>x" * 130_000 + b"\n</DOC>\n",
]


@pytest.mark.parametrize("data", ADVERSARIAL_SGML, ids=["title", "lt", "docno", "unclosed"])
def test_the_sgml_reader_is_linear_on_a_megabyte_of_adversarial_tags(data):
    """A quadratic tag pattern kept a worker busy for two minutes on 630 KiB."""
    assert len(data) >= 1_000_000
    started = time.process_time()
    read_documents(data, "sgml")
    assert time.process_time() - started < 1.0
