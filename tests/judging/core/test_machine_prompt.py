"""The machine assessor's prompt: messages, response schema, truncation, version."""

from __future__ import annotations

import pytest

from judging.core import machine_prompt as mp
from workbench.core.label_schema import LabelSchema

SCHEMA = LabelSchema.default()
TOPIC = mp.TopicText(
    "vitamin c colds", "Does vitamin C prevent colds?", "Trials only.", "Be strict"
)


def test_the_user_message_holds_the_query_the_grades_and_the_document_as_stored():
    messages = mp.machine_messages(SCHEMA, TOPIC, "Some  text\nas stored.")
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert "vitamin c colds" in user
    assert "Some  text\nas stored." in user
    assert '"effectiveness"' in user
    assert "3 = Effective" in user
    assert "only when relevance > 0" in user
    assert "Be strict" in user


def test_the_response_schema_lists_each_aspect_with_its_grades():
    schema = mp.response_schema(SCHEMA)
    assert schema["required"] == ["relevance"]
    assert schema["properties"]["relevance"]["enum"] == [0, 1, 2]
    assert schema["properties"]["credibility"]["enum"] == [0, 1]
    assert mp.response_format(SCHEMA)["type"] == "json_schema"


def test_a_long_document_keeps_its_first_characters_cut_at_a_whitespace():
    text = ("word " * 5000).strip()
    cut = mp.truncate(text, 4000)
    assert cut.endswith(" [truncated]")
    assert len(cut) <= 4000 + len(" [truncated]")
    assert text.startswith(cut.removesuffix(" [truncated]"))
    assert cut.removesuffix(" [truncated]").endswith("word")
    assert mp.truncate("short", 4000) == "short"
    with pytest.raises(ValueError, match="at least 4000"):
        mp.truncate(text, 100)


def test_the_prompt_version_changes_with_the_template_and_the_schema():
    default = mp.prompt_version(SCHEMA)
    assert len(default) == 12
    assert default == mp.prompt_version(SCHEMA, mp.DEFAULT_TEMPLATE)
    assert mp.prompt_version(SCHEMA, "Q {query} D {document}") != default
    binary = LabelSchema.parse(
        {
            "relevance": {
                "grades": [
                    {"value": 0, "name": "No", "key": "0"},
                    {"value": 1, "name": "Yes", "key": "1"},
                ]
            }
        }
    )
    assert mp.prompt_version(binary) != default


def test_an_override_is_checked_for_its_placeholders_up_front():
    assert mp.template_problems("Q {query} D {document} G {grades}") == []
    problems = mp.template_problems("Q {query} {secret}")
    assert any("unknown placeholder {secret}" in p for p in problems)
    assert any("{document}" in p for p in problems)
    assert mp.template_problems("{query} {document} {")[0].startswith("the template does not parse")
    with pytest.raises(mp.PromptError):
        mp.machine_messages(SCHEMA, TOPIC, "d", template="{nope}")
    messages = mp.machine_messages(SCHEMA, TOPIC, "doc", template="{query}|{document}")
    assert messages[1]["content"] == "vitamin c colds|doc"


def test_the_cache_key_depends_on_every_input():
    base = {
        "model": "m",
        "version": "v",
        "topic": TOPIC,
        "document": "d",
        "temperature": 0.0,
        "sample": 0,
    }
    key = mp.cache_key(**base)
    for name, value in [
        ("model", "m2"),
        ("version", "v2"),
        ("document", "d2"),
        ("temperature", 0.5),
        ("sample", 1),
        ("topic", mp.TopicText("other")),
    ]:
        assert mp.cache_key(**{**base, name: value}) != key
