"""nuggetizer's nugget JSONL and the editor's lines."""

from __future__ import annotations

import json

import pytest

from judging.core.answer_labels import citation_labels_problem, nugget_labels_problem
from judging.core.answer_order import shuffled
from judging.core.nugget_files import (
    NuggetText,
    as_lines,
    nugget_record,
    parse_lines,
    read_nuggets,
)
from workbench.core.problems import InputError


def _line(qid, nuggets, **extra):
    return json.dumps({"qid": qid, "query": f"q {qid}", "nuggets": nuggets, **extra})


def test_a_nuggetizer_file_is_read_with_its_other_keys_ignored():
    data = "\n".join(
        [
            _line(
                "1",
                [{"text": " A fact ", "importance": "vital", "assignment": "support"}],
                nuggets_with_reasoning=[],
            ),
            _line("2", []),
        ]
    ).encode()
    read = read_nuggets(data, name="n.jsonl", known_topics={"1", "2"})
    assert [(r.topic_id, r.query, r.nuggets, r.line) for r in read] == [
        ("1", "q 1", (NuggetText("A fact", "vital"),), 1),
        ("2", "q 2", (), 2),
    ]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (
            _line("1", [{"text": "x", "importance": "high"}]),
            "n.jsonl:2: nuggets[0]: importance 'high'",
        ),
        (
            _line("1", [{"text": " ", "importance": "okay"}]),
            "n.jsonl:2: nuggets[0]: a nugget has some text",
        ),
        (_line("9", []), "n.jsonl:2: topic '9' is not a topic of this campaign"),
        (_line("2", []), "n.jsonl:2: topic '2' again (first on line 1)"),
        ('{"qid": "1"}', 'n.jsonl:2: no "nuggets"'),
    ],
)
def test_each_bad_record_is_named_by_file_and_line(line, reason):
    with pytest.raises(InputError) as caught:
        read_nuggets(
            (_line("2", []) + "\n" + line).encode(), name="n.jsonl", known_topics={"1", "2"}
        )
    assert reason in str(caught.value)


def test_the_export_record_reads_back_as_the_same_nuggets():
    nuggets = [NuggetText("Café au lait", "okay"), NuggetText("Tea", "vital")]
    record = nugget_record("7", "drinks?", nuggets)
    assert json.loads(record) == {
        "qid": "7",
        "query": "drinks?",
        "nuggets": [
            {"text": "Café au lait", "importance": "okay"},
            {"text": "Tea", "importance": "vital"},
        ],
    }
    assert read_nuggets(record.encode())[0].nuggets == tuple(nuggets)


def test_the_editor_lines_round_trip_and_blank_lines_are_skipped():
    nuggets = [NuggetText("One: with a colon", "vital"), NuggetText("Two", "okay")]
    assert parse_lines(as_lines(nuggets) + "\n\n") == nuggets
    assert parse_lines("VITAL:  spaced  ") == [NuggetText("spaced", "vital")]


def test_an_editor_line_without_an_importance_is_named():
    with pytest.raises(InputError, match="nuggets:2: write 'vital: ' or 'okay: '"):
        parse_lines("vital: fine\njust text")


def test_the_answer_order_is_a_seeded_shuffle_stable_across_calls():
    ids = list(range(1, 21))
    first = shuffled(ids, seed=3, topic="1")
    assert first == shuffled(ids, seed=3, topic="1")
    assert sorted(first) == ids
    assert first != ids
    assert shuffled(ids, seed=4, topic="1") != first


def test_labels_must_fit_the_nuggets_and_the_citations():
    assert nugget_labels_problem(["support", "not_support"], 2) is None
    assert "each of the 3" in nugget_labels_problem(["support"], 3)
    assert "'failed' is not one of" in nugget_labels_problem(["failed"], 1)
    assert citation_labels_problem([["full"], []], [1, 0]) is None
    assert "sentence 2: give one label" in citation_labels_problem([["full"], []], [1, 1])
    assert "'yes' is not one of" in citation_labels_problem([["yes"]], [1])
