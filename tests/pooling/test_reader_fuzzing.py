"""Every reader, on any input: records, or problems with file, line and reason; never a crash.

Inputs are drawn both as raw bytes and as near-valid files with hostile
fields (control characters, NUL, huge numbers, deep nesting, odd tags), so
that the readers' own checks are exercised as well as their decoding.
"""

from __future__ import annotations

import io
import json

from hypothesis import given
from hypothesis import strategies as st

from pooling.core import answer_files, document_files, topic_files
from workbench.core.label_schema import schema_problems
from workbench.core.problems import InputError, Problem, ProblemLog

FIELD = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30
) | st.sampled_from(["\x00", "<TITLE ", "</DOC>", "<DOC>", "\t", "\r", "9" * 5000, "[" * 3000])


def assert_problems_are_well_formed(log: ProblemLog, name: str) -> None:
    for problem in log.sorted():
        assert isinstance(problem, Problem)
        assert problem.file == name
        assert problem.line >= 0
        assert problem.reason


def document_lines(fields: list[list[str]], fmt: str) -> bytes:
    if fmt == "jsonl":
        return "".join(
            json.dumps(dict(zip(("docno", "title", "text", "url"), row, strict=False))) + "\n"
            for row in fields
        ).encode()
    if fmt == "tsv":
        return "".join("\t".join(row) + "\n" for row in fields).encode()
    return "".join(
        f"<DOC>\n<DOCNO>{row[0]}</DOCNO>\n<TITLE>{''.join(row[1:2])}</TITLE>\n"
        f"<TEXT>{''.join(row[2:])}</TEXT>\n</DOC>\n"
        for row in fields
    ).encode()


@given(
    st.one_of(
        st.binary(max_size=2000),
        st.builds(
            document_lines,
            st.lists(st.lists(FIELD, min_size=1, max_size=4), max_size=6),
            st.just("jsonl"),
        ),
        st.builds(
            document_lines,
            st.lists(st.lists(FIELD, min_size=1, max_size=4), max_size=6),
            st.just("tsv"),
        ),
        st.builds(
            document_lines,
            st.lists(st.lists(FIELD, min_size=1, max_size=4), max_size=6),
            st.just("sgml"),
        ),
    ),
    st.sampled_from(document_files.DOCUMENT_FORMATS),
)
def test_document_readers_return_records_or_problems(data, fmt):
    log = ProblemLog("docs")
    records = list(document_files.iter_documents(io.BytesIO(data), log, format=fmt))
    assert_problems_are_well_formed(log, "docs")
    for record in records:
        assert record.docno
        assert "\x00" not in record.docno + record.title + record.text + record.url


def topic_file(rows: list[list[str]], fmt: str) -> bytes:
    if fmt == "jsonl":
        keys = ("number", "title", "description", "answer")
        return "".join(json.dumps(dict(zip(keys, r, strict=False))) + "\n" for r in rows).encode()
    if fmt == "tsv":
        return (
            "number\ttitle\tdescription\tanswer\n" + "".join("\t".join(r) + "\n" for r in rows)
        ).encode()
    if fmt == "xml":
        return (
            "<topics>"
            + "".join(
                f'<topic number="{r[0]}"><title>{"".join(r[1:])}</title></topic>' for r in rows
            )
            + "</topics>"
        ).encode()
    return "".join(
        f"<top>\n<num> {r[0]}\n<title> {''.join(r[1:])}\n</top>\n" for r in rows
    ).encode()


@given(
    st.one_of(
        st.binary(max_size=2000),
        st.builds(
            topic_file,
            st.lists(st.lists(FIELD, min_size=1, max_size=4), max_size=6),
            st.sampled_from(topic_files.TOPIC_FORMATS),
        ),
    ),
    st.sampled_from([*topic_files.TOPIC_FORMATS, None]),
)
def test_topic_readers_return_topics_or_problems(data, fmt):
    topics, log = topic_files.read_topics(data, name="topics", format=fmt)
    assert_problems_are_well_formed(log, "topics")
    if log.ok:
        assert all(t.topic_id and "\x00" not in t.topic_id for t in topics)


@given(
    st.binary(max_size=1000)
    | st.builds(
        lambda r: "\n".join(" ".join(x) for x in r).encode(),
        st.lists(st.lists(FIELD, max_size=3), max_size=8),
    )
)
def test_the_answers_reader_returns_answers_or_problems(data):
    answers, log = topic_files.read_answers(data, name="answers")
    assert_problems_are_well_formed(log, "answers")
    assert all(a.answer in (-1, 0, 1) for a in answers)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(JSON_VALUES | st.fixed_dictionaries({"relevance": JSON_VALUES, "aspects": JSON_VALUES}))
def test_the_label_schema_check_lists_problems_for_any_json(data):
    problems = schema_problems(data)
    assert isinstance(problems, list)
    assert all(isinstance(p, str) and p for p in problems)


def generated_answer_lines(rows: list[list[object]]) -> bytes:
    keys = ("run_id", "topic_id", "topic", "references", "response_length", "answer")
    return "".join(json.dumps(dict(zip(keys, row, strict=False))) + "\n" for row in rows).encode()


ANSWER_FIELD = (
    FIELD
    | JSON_VALUES
    | st.lists(
        st.fixed_dictionaries(
            {"text": FIELD, "citations": st.lists(st.integers(-2, 4), max_size=3)}
        ),
        max_size=3,
    )
)


@given(
    st.binary(max_size=1500)
    | st.builds(generated_answer_lines, st.lists(st.lists(ANSWER_FIELD, max_size=6), max_size=4))
)
def test_the_generated_answers_reader_returns_answers_or_problems(data):
    answers, error = _answers_or_error(data)
    if error is not None:
        assert error.problems
        log = ProblemLog("answers.jsonl", problems=error.problems)
        assert_problems_are_well_formed(log, "answers.jsonl")
    for answer in answers:
        assert answer.run_id
        assert answer.topic_id
        for sentence in answer.sentences:
            assert all(0 <= index < len(answer.references) for index in sentence.citations)


def _answers_or_error(data: bytes) -> tuple[list[answer_files.Answer], InputError | None]:
    try:
        return answer_files.read_generated_answers(data, name="answers.jsonl"), None
    except InputError as error:
        return [], error
