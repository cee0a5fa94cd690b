"""Reading and writing qrels."""

import io

import pytest

from scoring.core.qrels import (
    STRATIFIED_QRELS,
    THREE_ASPECT_QRELS,
    TREC_QRELS,
    TWO_ASPECT_QRELS,
    QrelsLayout,
    read_qrels,
    write_qrels,
)
from workbench.core.problems import InputError


def test_qrels_are_read_into_a_frame_in_file_order():
    frame = read_qrels(b"301 0 FR-1 1\n301 0 FR-0 0\n9 0 FR-1 -1\n", name="q")
    assert list(frame.columns) == ["query_id", "doc_id", "relevance"]
    assert frame.to_dict("list") == {
        "query_id": ["301", "301", "9"],
        "doc_id": ["FR-1", "FR-0", "FR-1"],
        "relevance": [1, 0, -1],
    }
    assert str(frame["relevance"].dtype) == "int64"


def test_comment_and_blank_lines_are_skipped_and_crlf_and_bom_accepted():
    data = b"\xef\xbb\xbf# judged by NIST\r\n301 0 a 1\r\n\r\n  # indented comment\n301\t0\tb  2\n"
    assert read_qrels(data, name="q")["doc_id"].tolist() == ["a", "b"]


def test_a_hash_inside_a_docno_is_part_of_it():
    assert read_qrels(b"301 0 CR#93E-1860 0\n", name="q")["doc_id"].tolist() == ["CR#93E-1860"]


def test_topic_ids_stay_strings():
    assert read_qrels(b"007 0 a 1\n", name="q")["query_id"].tolist() == ["007"]


def _problems(data: bytes) -> list[str]:
    with pytest.raises(InputError) as caught:
        read_qrels(data, name="qrels.txt")
    return [str(problem) for problem in caught.value.problems]


def test_every_bad_line_is_reported_with_file_and_line():
    assert _problems(b"1 0 a 1\n1 0 b\n1 0 c x\n1 0 d 1 extra\n") == [
        "qrels.txt:2: expected 4 columns (topic iter docno rel), found 3",
        "qrels.txt:3: relevance 'x' is not an integer",
        "qrels.txt:4: expected 4 columns (topic iter docno rel), found 5",
    ]


def test_a_file_of_another_layout_is_one_problem_that_names_it():
    """NIST's qrels_raw (topic iter docno rel eff cred) read as plain qrels: one
    problem, not one per line, with what reads six columns."""
    raw = b"# NIST\n" + b"".join(b"%d 0 doc%d 1 2 0\n" % (t, d) for t in (1, 2) for d in range(500))
    assert _problems(raw) == [
        "qrels.txt:2: every line has 6 columns, not the 4 of qrels (topic iter docno rel); "
        "6 columns are qrels_threeaspects (topic iter docno a1 a2 a3)"
    ]
    with pytest.raises(InputError) as caught:
        read_qrels(raw, name="raw", width_hints={6: "read it with --format aspects"})
    [problem] = caught.value.problems
    assert str(problem).endswith("(topic iter docno a1 a2 a3): read it with --format aspects")
    assert len(read_qrels(raw, layout=THREE_ASPECT_QRELS)) == 1000


def test_labels_may_have_a_sign_and_leading_zeros_as_atol_reads_them():
    frame = read_qrels(b"1 0 a +1\n1 0 b -0002\n1 0 c 007\n1 0 d +0\n")
    assert frame["relevance"].tolist() == [1, -2, 7, 0]


def test_labels_outside_a_c_int_are_refused_with_file_and_line():
    data = (
        b"1 0 a 2147483647\n1 0 b -2147483648\n1 0 c 2147483648\n1 0 d -2147483649\n"
        b"1 0 e 1000000000000000000\n1 0 f 123456789012345678901234567890\n"
        b"1 0 g +0000000000000000000000000000001\n"
    )
    limits = "labels are integers from -2147483648 to 2147483647"
    assert _problems(data) == [
        f"qrels.txt:3: relevance 2147483648 is out of range: {limits}",
        f"qrels.txt:4: relevance -2147483649 is out of range: {limits}",
        f"qrels.txt:5: relevance 1000000000000000000 is out of range: {limits}",
        f"qrels.txt:6: relevance 12345678901234567890... (30 characters) is out of range: {limits}",
    ]
    assert read_qrels(b"1 0 g +0000000000000000000000000000001\n")["relevance"].tolist() == [1]


def test_every_label_column_has_the_range():
    with pytest.raises(InputError, match=r"q:1: stratum 4294967296 is out of range"):
        read_qrels(b"1 0 a 4294967296 1\n", name="q", layout=STRATIFIED_QRELS)
    with pytest.raises(InputError, match=r"q:1: aspect_2 -9999999999 is out of range"):
        read_qrels(b"1 0 a 1 -9999999999\n", name="q", layout=TWO_ASPECT_QRELS)


def test_a_docno_judged_twice_for_a_topic_is_an_error():
    assert _problems(b"1 0 a 1\n2 0 a 1\n1 0 a 0\n") == [
        "qrels.txt:3: docno 'a' judged twice for topic '1' (first on line 1)"
    ]


def test_a_file_without_judgments_is_an_error():
    assert _problems(b"# nothing\n\n") == ["qrels.txt: no qrels lines"]


def test_bytes_that_are_not_utf8_are_reported_at_their_line():
    assert _problems(b"1 0 a 1\n1 0 \xff 1\n")[0].startswith("qrels.txt:2: not UTF-8")


def test_written_qrels_read_back_the_same(tmp_path):
    frame = read_qrels(b"301 0 FR-1 1\n301 0 FR-0 -1\n", name="q")
    out = io.StringIO()
    write_qrels(frame, out)
    assert out.getvalue() == "301 0 FR-1 1\n301 0 FR-0 -1\n"
    write_qrels(frame, tmp_path / "qrels.txt")
    assert read_qrels(tmp_path / "qrels.txt").equals(frame)


def test_other_layouts_reuse_the_reader_and_writer():
    stratified = QrelsLayout(
        name="stratified",
        columns=("query_id", "iteration", "doc_id", "stratum", "relevance"),
        labels=("stratum", "relevance"),
        description="topic iter docno stratum rel",
        ignored=("iteration",),
    )
    frame = read_qrels(b"1 0 a 2 -1\n", name="s", layout=stratified)
    assert frame.to_dict("list") == {
        "query_id": ["1"],
        "doc_id": ["a"],
        "stratum": [2],
        "relevance": [-1],
    }
    out = io.StringIO()
    write_qrels(frame, out, layout=stratified)
    assert out.getvalue() == "1 0 a 2 -1\n"
    assert TREC_QRELS.kept == ("query_id", "doc_id", "relevance")


@pytest.mark.parametrize(
    ("layout", "text", "columns"),
    [
        (TWO_ASPECT_QRELS, "1 0 a 2 -1\n1 0 b 0 3\n", ["relevance", "aspect_2"]),
        (THREE_ASPECT_QRELS, "1 0 a 2 -1 -2\n1 0 b 0 3 1\n", ["relevance", "aspect_2", "aspect_3"]),
        (STRATIFIED_QRELS, "1 0 a 1 2\n1 0 b 3 -1\n", ["stratum", "relevance"]),
    ],
    ids=["two aspects", "three aspects", "stratified"],
)
def test_aspect_and_stratified_qrels_round_trip(layout, text, columns, tmp_path):
    frame = read_qrels(text.encode(), name="q", layout=layout)
    assert list(frame.columns) == ["query_id", "doc_id", *columns]
    assert all(str(frame[column].dtype) == "int64" for column in columns)
    write_qrels(frame, tmp_path / "qrels", layout=layout)
    assert (tmp_path / "qrels").read_text() == text
    assert read_qrels(tmp_path / "qrels", layout=layout).equals(frame)


@pytest.mark.parametrize(
    ("layout", "text", "problem"),
    [
        (
            TWO_ASPECT_QRELS,
            b"1 0 a 1 2\n1 0 b 1\n",
            "q:2: expected 5 columns (topic iter docno a1 a2), found 4",
        ),
        (
            THREE_ASPECT_QRELS,
            b"1 0 a 1 2\n",
            "q:1: expected 6 columns (topic iter docno a1 a2 a3), found 5",
        ),
        (THREE_ASPECT_QRELS, b"1 0 a 1 x 2\n", "q:1: aspect_2 'x' is not an integer"),
        (
            STRATIFIED_QRELS,
            b"1 0 a 1\n",
            "q:1: expected 5 columns (topic iter docno stratum rel), found 4",
        ),
        (STRATIFIED_QRELS, b"1 0 a 1 1\n1 0 b s2 0\n", "q:2: stratum 's2' is not an integer"),
    ],
)
def test_aspect_and_stratified_lines_are_checked(layout, text, problem):
    with pytest.raises(InputError) as caught:
        read_qrels(text, name="q", layout=layout)
    assert str(caught.value.problems[0]) == problem
