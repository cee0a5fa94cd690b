"""The machine's requests for answers (nuggets, assignment) and reading its replies."""

from __future__ import annotations

import json

import pandas as pd

from judging.core import nugget_lexical, nugget_prompt
from judging.core.answer_agreement import human_machine_confusion
from judging.core.nugget_files import NuggetText


def test_the_nugget_request_holds_the_question_and_every_answer():
    messages = nugget_prompt.nugget_messages("why is the sky blue", ["Rayleigh.", "Light."])
    text = messages[-1]["content"]
    assert "why is the sky blue" in text
    assert "Answer 1:\n<<<\nRayleigh.\n>>>" in text
    assert "Answer 2:" in text
    assert '"importance"' in text


def test_a_nugget_reply_as_a_list_or_in_an_object_or_fenced_is_read():
    good = [
        {"text": " Light  scatters ", "importance": "vital"},
        {"text": "b", "importance": "OKAY"},
    ]
    want = (NuggetText("Light scatters", "vital"), NuggetText("b", "okay"))
    for content in (
        json.dumps(good),
        json.dumps({"nuggets": good}),
        "```json\n" + json.dumps(good) + "\n```",
    ):
        assert nugget_prompt.parse_nuggets(content).nuggets == want


def test_a_bad_nugget_reply_says_why():
    cases = {
        "no json": "not JSON",
        "{}": "not a JSON list",
        "[]": "no nuggets",
        '[{"text": "", "importance": "vital"}]': "has no text",
        '[{"text": "x", "importance": "high"}]': "outside the schema",
        '["x"]': "is not an object",
    }
    for content, reason in cases.items():
        reply = nugget_prompt.parse_nuggets(content)
        assert not reply.ok, content
        assert reason in reply.reason, (content, reply)


def test_an_assignment_reply_needs_one_known_label_per_nugget():
    assert nugget_prompt.parse_assignment('["support", "not_support"]', 2).labels == (
        "support",
        "not_support",
    )
    assert nugget_prompt.parse_assignment('{"labels": ["partial_support"]}', 1).ok
    assert "2 labels for 3" in nugget_prompt.parse_assignment('["support", "support"]', 3).reason
    assert "outside the schema" in nugget_prompt.parse_assignment('["yes"]', 1).reason
    assert nugget_prompt.reason_kind("outside the schema: x") == "outside the schema"


def test_the_assign_request_numbers_the_nuggets_and_holds_the_answer():
    text = nugget_prompt.assign_messages(
        "q", [NuggetText("first", "vital"), NuggetText("second", "okay")], "The answer."
    )[-1]["content"]
    assert "1. first\n2. second" in text
    assert "<<<\nThe answer.\n>>>" in text
    assert "2 labels" in text


def test_the_versions_are_short_hashes_that_differ():
    assert len(nugget_prompt.NUGGET_VERSION) == 12
    assert nugget_prompt.NUGGET_VERSION != nugget_prompt.ASSIGN_VERSION


def test_the_lexical_nuggets_are_the_most_shared_sentences_top_ones_vital():
    answers = [
        ["Rayleigh scattering makes the sky blue.", "Cats purr loudly at night."],
        ["The sky looks blue because of Rayleigh scattering.", "Sunsets look red often."],
        ["Rayleigh scattering of sunlight makes skies blue.", "Sunsets look red often today."],
    ]
    nuggets = nugget_lexical.propose_nuggets("why is the sky blue", answers, limit=3, vital=1)
    assert nuggets[0].importance == "vital"
    assert "Rayleigh" in nuggets[0].text
    assert all(n.importance == "okay" for n in nuggets[1:])
    # near repeats of a chosen sentence are left out
    assert sum("Rayleigh" in n.text for n in nuggets) == 1


def test_a_sentence_no_other_answer_shares_is_never_vital():
    nuggets = nugget_lexical.propose_nuggets("q", [["Only one answer says this thing."]])
    assert [n.importance for n in nuggets] == ["okay"]


def test_lexical_labels_follow_the_stated_thresholds():
    labels = nugget_lexical.assign_labels(
        ["rayleigh scattering sunlight blue", "rayleigh sunlight purple green", "cats dogs", "the"],
        "Rayleigh scattering of sunlight looks blue.",
    )
    # 4/4 = 1.0 support; 2/4 = 0.5 partial; 0/2 not; no terms: not
    assert labels == ["support", "partial_support", "not_support", "not_support"]


def test_the_human_machine_confusion_counts_each_human_label_against_the_machines():
    labels = pd.DataFrame(
        [
            ("alice", "1", "a", 2),
            ("bob", "1", "a", 1),
            ("m", "1", "a", 2),
            ("alice", "1", "b", 0),
            ("m", "1", "b", 1),
            ("alice", "1", "c", 0),  # the machine did not label c
        ],
        columns=["assessor", "query_id", "doc_id", "label"],
    )
    [found] = human_machine_confusion(labels, {"m"})
    assert found["n_items"] == 3
    assert found["matrix"]["support"]["support"] == 1
    assert found["matrix"]["partial"]["support"] == 1
    assert found["matrix"]["not"]["partial"] == 1
    assert sum(sum(row.values()) for row in found["matrix"].values()) == 3
