"""Reading a machine's reply, and the majority over samples."""

from __future__ import annotations

from judging.core.machine_reply import majority, parse_reply
from workbench.core.label_schema import NOT_ASKED, LabelSchema

SCHEMA = LabelSchema.default()


def test_a_json_object_gives_the_labels_with_aspects_not_asked_as_minus_one():
    reply = parse_reply('{"relevance": 0}', SCHEMA)
    assert reply.labels == {"relevance": 0, "effectiveness": NOT_ASKED, "credibility": NOT_ASKED}
    reply = parse_reply('{"relevance": 2, "effectiveness": 3, "credibility": 1}', SCHEMA)
    assert reply.labels == {"relevance": 2, "effectiveness": 3, "credibility": 1}


def test_a_json_fence_is_accepted():
    reply = parse_reply(
        '```json\n{"relevance": 1, "effectiveness": 0, "credibility": 0}\n```', SCHEMA
    )
    assert reply.ok
    assert reply.labels["relevance"] == 1


def test_aspects_given_when_not_asked_are_ignored():
    reply = parse_reply('{"relevance": 0, "effectiveness": 3}', SCHEMA)
    assert reply.labels["effectiveness"] == NOT_ASKED


def test_what_cannot_be_a_label_says_why():
    cases = {
        "": "empty reply",
        "The document is relevant.": "not JSON",
        "[2]": "not a JSON object",
        '{"effectiveness": 1}': "no 'relevance'",
        '{"relevance": 7}': "outside the schema",
        '{"relevance": 1, "credibility": 1}': "outside the schema",
        '{"relevance": 1, "effectiveness": 1, "credibility": 1, "x": 1}': "unknown aspect x",
        '{"relevance": true}': "outside the schema",
    }
    for content, reason in cases.items():
        reply = parse_reply(content, SCHEMA)
        assert not reply.ok, content
        assert reply.reason.startswith(reason), (content, reply.reason)


def test_the_majority_takes_the_most_frequent_grade_and_the_lower_on_a_tie():
    assert majority([{"relevance": 2}, {"relevance": 1}, {"relevance": 2}]) == {"relevance": 2}
    assert majority([{"relevance": 2}, {"relevance": 1}]) == {"relevance": 1}


def test_with_the_schema_the_aspects_follow_the_majority_relevance():
    a = {"relevance": 2, "effectiveness": 3, "credibility": 1}
    b = {"relevance": 0, "effectiveness": NOT_ASKED, "credibility": NOT_ASKED}
    assert majority([a, b, b], SCHEMA) == b
    assert majority([a, a, b], SCHEMA) == a
