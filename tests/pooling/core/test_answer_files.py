"""Answer files (TREC 2024 RAG format): what is read, and every refusal with file:line."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pooling.core.answer_files import Answer, Sentence, read_generated_answers, response_words
from workbench.core.problems import InputError


def _answer(**fields: object) -> dict[str, object]:
    answer: dict[str, object] = {
        "run_id": "team-run",
        "topic_id": "2027497",
        "topic": "how often should you take your toddler to the potty",
        "references": ["seg#0", "seg#1", "seg#2"],
        "response_length": 10,
        "answer": [
            {"text": "Take them after every meal.", "citations": [0, 2]},
            {"text": "Some say every two hours.", "citations": []},
        ],
    }
    return answer | fields


def _file(*records: object) -> bytes:
    return "".join(
        (record if isinstance(record, str) else json.dumps(record)) + "\n" for record in records
    ).encode()


def _problems(*records: object, **options: object) -> list[str]:
    with pytest.raises(InputError) as caught:
        read_generated_answers(_file(*records), name="answers.jsonl", **options)  # type: ignore[arg-type]
    return str(caught.value).splitlines()


def test_an_answer_file_is_read_line_by_line_into_answers():
    other = _answer(run_id="other", references=[], response_length=3)
    other["answer"] = [{"text": "No citation here.", "citations": []}]
    answers = read_generated_answers(_file(_answer(), "", other), name="answers.jsonl")
    assert answers == [
        Answer(
            "team-run",
            "2027497",
            "how often should you take your toddler to the potty",
            ("seg#0", "seg#1", "seg#2"),
            10,
            (
                Sentence("Take them after every meal.", (0, 2)),
                Sentence("Some say every two hours.", ()),
            ),
            1,
        ),
        Answer("other", "2027497", other["topic"], (), 3, (Sentence("No citation here.", ()),), 3),
    ]


def test_the_cited_segments_are_each_cited_segment_once_in_reference_order():
    [answer] = read_generated_answers(
        _file(
            _answer(
                response_length=9,
                answer=[
                    {"text": "One two.", "citations": [2, 0]},
                    {"text": "Three four five.", "citations": [2]},
                    {"text": "Six seven eight nine.", "citations": []},
                ],
            )
        )
    )
    assert answer.cited == ("seg#0", "seg#2")


def test_response_length_counts_words_as_the_tracks_validator_does():
    # NFKC turns a spacing diaeresis into a space and a combining mark: two words.
    assert unicodedata.normalize("NFKC", "na\u00a8ive") == "na \u0308ive"
    assert response_words(["na\u00a8ive", "  two\u00a0words  "]) == 4
    record = _answer(
        response_length=4, answer=[{"text": "na\u00a8ive two\u3000words", "citations": []}]
    )
    assert read_generated_answers(_file(record))[0].response_length == 4


def test_an_answer_without_sentences_is_read_with_response_length_zero():
    [answer] = read_generated_answers(_file(_answer(answer=[], response_length=0)))
    assert (answer.sentences, answer.cited) == ((), ())


def test_the_keys_the_tracks_generator_adds_are_ignored():
    record = _answer(reasoning_traces=["thinking"], trace={"prompt": None})
    assert read_generated_answers(_file(record))[0].run_id == "team-run"


def test_a_byte_order_mark_and_crlf_line_ends_are_read():
    data = b"\xef\xbb\xbf" + _file(_answer()).replace(b"\n", b"\r\n")
    assert len(read_generated_answers(data)) == 1


def test_known_topics_refuse_any_other_topic():
    assert _problems(_answer(), _answer(topic_id="999", run_id="b"), known_topics={"2027497"}) == [
        "answers.jsonl:2: topic '999' is not a topic of this campaign"
    ]


def test_a_run_answering_a_topic_twice_is_refused_with_both_lines():
    assert _problems(_answer(), _answer(run_id="b"), _answer()) == [
        "answers.jsonl:3: run 'team-run' answers topic '2027497' again (first on line 1)"
    ]


def test_malformed_lines_are_refused_each_with_its_reason():
    assert _problems(_answer(), '{"run_id": "x",', "[1]", _answer(run_id="b")) == [
        "answers.jsonl:2: not valid JSON: Expecting property name enclosed in double quotes"
        " at column 16",
        "answers.jsonl:3: expected a JSON object",
    ]


def test_missing_and_unknown_keys_are_named():
    record = _answer(extra=1, Answer=[])
    del record["topic"], record["response_length"]
    assert _problems(record) == [
        'answers.jsonl:1: no "topic", "response_length" (expected run_id, topic_id, topic,'
        " references, response_length, answer)",
        'answers.jsonl:1: unknown keys "extra", "Answer" (expected run_id, topic_id, topic,'
        " references, response_length, answer)",
    ]


def test_fields_of_the_wrong_type_are_refused():
    record = _answer(
        run_id=7, topic_id=["1"], topic=None, references="seg#0", response_length="9", answer={}
    )
    assert [line.split(": ", 1)[1] for line in _problems(record)] == [
        '"run_id" 7 is not a string (run ids are strings: write "7")',
        '"topic_id" is ["1"], not a string',
        '"topic" is not a string',
        '"references" is not a list of segment ids',
        '"response_length" "9" is not a number of words',
        '"answer" is not a list of sentences ({"text", "citations"})',
    ]


def test_sentences_are_checked_one_by_one():
    record = _answer(
        answer=[
            {"text": "Fine.", "citations": [0]},
            {"text": "   ", "citations": [0]},
            {"text": 3, "citations": "0"},
            {"txt": "typo", "citations": []},
            "a string",
        ]
    )
    assert [line.split(": ", 1)[1] for line in _problems(record)] == [
        "answer[1] has no text",
        'answer[2]: "text" is not a string',
        'answer[2]."citations" is not a list of indices into "references"',
        'answer[3]: no "text" (expected text, citations)',
        'answer[3]: unknown key "txt" (expected text, citations)',
        'answer[4] is not an object ({"text", "citations"})',
    ]


def test_a_citation_outside_the_references_is_refused():
    record = _answer(
        answer=[
            {"text": "One two three four five six seven eight nine.", "citations": [1, 3, -1, True]}
        ]
    )
    assert [line.split(": ", 1)[1] for line in _problems(record)] == [
        'answer[0].citations[1]: 3 is outside "references" (3 segments: 0 to 2)',
        'answer[0].citations[2]: -1 is outside "references" (3 segments: 0 to 2)',
        "answer[0].citations[3] true is not an integer index",
    ]
    empty = _answer(references=[], answer=[{"text": "x " * 9, "citations": [0]}])
    assert _problems(empty) == [
        'answers.jsonl:1: answer[0].citations[0]: 0 is outside "references" (0 segments:'
        " none, it is empty)"
    ]


def test_a_segment_cited_twice_in_a_sentence_or_listed_twice_is_refused():
    record = _answer(
        references=["seg#0", "seg#1", "seg#0"],
        answer=[{"text": "One two three four five six seven eight nine.", "citations": [1, 1]}],
    )
    assert [line.split(": ", 1)[1] for line in _problems(record)] == [
        "references[2] repeats references[0] ('seg#0')",
        "answer[0].citations[1]: 1 is cited twice in the sentence",
    ]


def test_ids_with_whitespace_or_control_characters_are_refused():
    record = _answer(run_id="team run", topic_id="1\u200b", references=["seg#0", "seg\t1", ""])
    assert [line.split(": ", 1)[1] for line in _problems(record)] == [
        "\"run_id\" 'team run' holds whitespace (U+0020 at character 5); ids hold no"
        " whitespace, control or invisible characters",
        "\"topic_id\" '1\\u200b' holds an invisible format character (U+200B at character 2);"
        " ids hold no whitespace, control or invisible characters",
        "references[1] 'seg\\t1' holds a control character (U+0009 at character 4); ids hold"
        " no whitespace, control or invisible characters",
        "empty references[2]",
    ]


def test_a_response_length_that_is_not_the_answers_words_is_refused():
    assert _problems(_answer(response_length=9)) == [
        'answers.jsonl:1: "response_length" is 9, but the answer has 10 words (each sentence'
        " NFKC-normalised and split on whitespace, as the track's validator counts them):"
        " write 10"
    ]


def test_text_holding_a_nul_or_a_lone_surrogate_is_refused():
    nul = json.dumps(_answer(topic="a\x00b"))
    surrogate = json.dumps(_answer(run_id="b")).replace("Some say", "\\ud800 Some say")
    assert _problems(nul, surrogate) == [
        "answers.jsonl:1: contains a NUL character (\\0), which no text field may hold",
        "answers.jsonl:2: contains a lone surrogate (a \\ud800-\\udfff escape without its"
        " pair), which is not text",
    ]


def test_an_empty_file_is_refused():
    assert _problems("", "  ") == ["answers.jsonl: empty file: no answers"]


def test_nothing_is_returned_when_one_line_of_many_is_bad():
    records = [_answer(run_id=f"run-{n}") for n in range(5)]
    records[3]["response_length"] = 0
    lines = _problems(*records)
    assert len(lines) == 1
    assert lines[0].startswith("answers.jsonl:4:")


# --------------------------------------------------------------------------
# Any well-formed answer is read back as written

WORD = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp")),
    min_size=1,
    max_size=8,
)
TOPIC = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20
).filter(lambda text: "\x00" not in text)
SEGMENT = st.text(alphabet="abcdefghij#_0123456789", min_size=1, max_size=12)


@st.composite
def answers(draw) -> dict[str, object]:
    references = draw(st.lists(SEGMENT, unique=True, max_size=6))
    sentences = []
    for words in draw(st.lists(st.lists(WORD, min_size=1, max_size=6), max_size=5)):
        citations = (
            draw(st.lists(st.integers(0, len(references) - 1), unique=True)) if references else []
        )
        sentences.append({"text": " ".join(words), "citations": citations})
    return {
        "run_id": draw(SEGMENT),
        "topic_id": draw(SEGMENT),
        "topic": draw(TOPIC),
        "references": references,
        "response_length": response_words(sentence["text"] for sentence in sentences),
        "answer": sentences,
    }


@settings(max_examples=80, deadline=None)
@given(answers())
def test_a_well_formed_answer_is_read_back_as_written(record):
    [answer] = read_generated_answers(_file(record))
    assert answer.run_id == record["run_id"]
    assert answer.references == tuple(record["references"])
    assert [(s.text, list(s.citations)) for s in answer.sentences] == [
        (s["text"], s["citations"]) for s in record["answer"]
    ]
