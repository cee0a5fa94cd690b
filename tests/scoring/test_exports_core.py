"""scoring.core.exports on tiny hand-made frames."""

from __future__ import annotations

import pandas as pd
import pytest

from scoring.core import exports
from scoring.core.exports import ExportError

LABELS = pd.DataFrame(
    {
        "query_id": ["10", "2", "2", "2"],
        "doc_id": ["a", "b", "B", "c"],
        "relevance": [1, 2, 0, 1],
        "effectiveness": [3, 1, -1, -2],
        "credibility": [1, 0, -1, 1],
    }
)
ENTRIES = pd.DataFrame(
    {
        "query_id": ["2", "2", "2", "2", "10"],
        "doc_id": ["b", "B", "c", "z", "a"],
        "stratum": [1, 1, 2, 2, 1],
        "inclusion_probability": [1.0, 1.0, 0.5, 0.5, 1.0],
        "sampled": [True, True, True, False, True],
    }
)


def frame(fmt: str, **kwargs) -> pd.DataFrame:
    return exports.export_frame(
        fmt, labels=LABELS, entries=ENTRIES, aspects=("effectiveness", "credibility"), **kwargs
    )


def test_rows_are_sorted_by_numeric_topic_then_docno_bytes():
    text = exports.render("qrels", frame("qrels"))
    assert text == "2 0 B 0\n2 0 b 2\n2 0 c 1\n10 0 a 1\n"


def test_correctness_maps_effectiveness_and_keeps_the_codes():
    result = frame("correctness", answers={"2": -1, "10": 1})
    assert result[["doc_id", "aspect_2"]].values.tolist() == [
        ["B", -1],
        ["b", 1],
        ["c", -2],
        ["a", 1],
    ]
    result = frame("correctness", answers={"2": 1, "10": 0})
    assert result[["doc_id", "aspect_2"]].values.tolist() == [
        ["B", -1],
        ["b", 0],
        ["c", -2],
        ["a", 0],
    ]


@pytest.mark.parametrize(
    ("answers", "message"),
    [({"2": 1}, "missing for topic 10"), ({"2": 1, "10": 5}, "must be 1, 0 or -1")],
)
def test_correctness_needs_valid_answers(answers, message):
    with pytest.raises(ExportError, match=message):
        frame("correctness", answers=answers)


def test_stratified_marks_unsampled_documents():
    assert (
        exports.render("stratified", frame("stratified"))
        == "2 0 B 1 0\n2 0 b 1 2\n2 0 c 2 1\n2 0 z 2 -1\n10 0 a 1 1\n"
    )
    assert (
        exports.render("infap", frame("infap")) == "2 0 B 0\n2 0 b 2\n2 0 c 1\n2 0 z -1\n10 0 a 1\n"
    )


def test_inclusion_file_lists_every_pooled_document():
    assert exports.inclusion_text(ENTRIES).splitlines() == [
        "topic\tdocno\tstratum\tinclusion_probability",
        "2\tB\t1\t1.0",
        "2\tb\t1\t1.0",
        "2\tc\t2\t0.5",
        "2\tz\t2\t0.5",
        "10\ta\t1\t1.0",
    ]


def test_two_and_three_aspect_layouts():
    assert exports.render("twoaspects", frame("twoaspects")).splitlines()[0] == "2 0 B 0 -1"
    assert (
        exports.render("twoaspects", frame("twoaspects", two_aspect="effectiveness")).splitlines()[
            1
        ]
        == "2 0 b 2 1"
    )
    assert exports.render("aspects", frame("aspects")).splitlines()[-1] == "10 0 a 1 3 1"


def test_formats_needing_aspects_refuse_a_schema_without_them():
    with pytest.raises(ExportError, match="needs 2 aspect"):
        exports.export_frame("threeaspects", labels=LABELS, entries=ENTRIES, aspects=())
    with pytest.raises(ExportError, match="unknown format 'xml'"):
        frame("xml")


DECISION = ("effectiveness", "credibility")


def test_a_schema_without_aspects_or_answers_produces_the_relevance_formats_only():
    problems = exports.format_problems(aspects=(), answers={}, topics=["1", "2"])
    assert sorted(problems) == ["aspects", "correctness", "threeaspects", "twoaspects"]
    assert "the schema has neither" in problems["aspects"]
    assert "the schema has neither" in problems["correctness"]
    assert "the schema has 0" in problems["twoaspects"]
    assert exports.bundle_formats(problems) == ["qrels", "relevance", "stratified", "infap"]


def test_correctness_needs_an_answer_for_every_topic_of_the_pool():
    topics = [str(t) for t in range(1, 9)]
    problems = exports.format_problems(aspects=DECISION, answers={"3": 1}, topics=topics)
    assert list(problems) == ["correctness"]
    assert "missing for topics 1, 2, 4, 5, 6 and 2 more" in problems["correctness"]
    wrong = exports.format_problems(aspects=DECISION, answers={"1": 7}, topics=["1"])
    assert "must be 1, 0 or -1; got 1: 7" in wrong["correctness"]
    one = exports.format_problems(aspects=("effectiveness",), answers={}, topics=[])
    assert one["aspects"].endswith("the schema lacks credibility")
    every = exports.format_problems(aspects=DECISION, answers={"1": 1, "2": -1}, topics=["2", "1"])
    assert every == {}
    assert exports.bundle_formats(every) == list(exports.DEFAULT_BUNDLE)


@pytest.mark.parametrize("aspects", [(), ("credibility",), DECISION])
def test_an_export_is_refused_exactly_when_format_problems_names_it(aspects):
    labels = LABELS[["query_id", "doc_id", "relevance", *aspects]]
    answers = {"2": 1}  # topic 10 has none
    problems = exports.format_problems(aspects=aspects, answers=answers, topics=["2", "10"])
    for fmt in exports.FORMATS:
        if fmt in problems:
            with pytest.raises(ExportError) as refused:
                exports.export_frame(
                    fmt, labels=labels, entries=ENTRIES, aspects=aspects, answers=answers
                )
            assert str(refused.value) == f"{fmt} {problems[fmt]}"
        else:
            exports.export_frame(
                fmt, labels=labels, entries=ENTRIES, aspects=aspects, answers=answers
            )
