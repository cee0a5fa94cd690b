"""The request a machine assessor sends for one (topic, document). Pure core.

`machine_messages` builds the chat messages from the campaign's label schema,
the topic's fields and the document's text; `response_schema` is the JSON
schema the reply must follow (sent as `response_format`). The template is
versioned: `prompt_version` is a short sha256 of the template and the schema,
stored with every sample, so labels made by different prompts are never mixed
up, and the cache never serves one prompt's label for another.

Truncation rule: a document longer than `max_chars` characters (at least
4,000, default 12,000) keeps its first `max_chars` characters, cut back to the
last whitespace in them (when there is one in the last fifth), followed by
"[truncated]".
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.core.label_schema import LabelSchema, Question

MIN_CHARS = 4_000
DEFAULT_CHARS = 12_000
TRUNCATED = "[truncated]"

# The placeholders a template may use; any other is refused up front.
PLACEHOLDERS = frozenset(
    {"query", "title", "description", "narrative", "guidelines", "grades", "document", "format"}
)

SYSTEM = (
    "You are a careful relevance assessor for an information retrieval evaluation. "
    "You judge one document against one topic, following the guidelines, and answer "
    "with a JSON object only."
)

DEFAULT_TEMPLATE = """Judge the document below for the topic.

Topic query: {query}
Topic description: {description}
Topic narrative: {narrative}

Guidelines: {guidelines}

The labels to give:
{grades}

Document:
<<<
{document}
>>>

Answer with a JSON object only, no other text: {format}"""


class PromptError(ValueError):
    """A template that cannot be used (an unknown placeholder, a bad brace)."""


@dataclass(frozen=True)
class TopicText:
    query: str
    description: str = ""
    narrative: str = ""
    guidelines: str = ""

    @property
    def cache_text(self) -> str:
        return "\n".join((self.query, self.description, self.narrative, self.guidelines))


def template_problems(template: str) -> list[str]:
    """What is wrong with a template (empty when usable)."""
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as error:
        return [f"the template does not parse: {error} (write {{{{ and }}}} for braces)"]
    problems = []
    for name in sorted(set(fields) - PLACEHOLDERS):
        shown = name or "{}"
        problems.append(f"unknown placeholder {{{shown}}}: use {', '.join(sorted(PLACEHOLDERS))}")
    if "document" not in fields:
        problems.append("the template must contain {document}")
    if "query" not in fields:
        problems.append("the template must contain {query}")
    return problems


def check_template(template: str) -> None:
    problems = template_problems(template)
    if problems:
        raise PromptError("; ".join(problems))


def truncate(text: str, max_chars: int = DEFAULT_CHARS) -> str:
    """The document's text under the truncation rule (see the module's docstring)."""
    if max_chars < MIN_CHARS:
        raise ValueError(f"max_chars must be at least {MIN_CHARS}; got {max_chars}")
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    if cut >= max_chars * 4 // 5:
        head = head[:cut]
    return head.rstrip() + " " + TRUNCATED


def _asked_when(schema: LabelSchema, question: Question) -> str:
    if question is schema.relevance:
        return ""
    if question.when == "always":
        return " (always)"
    return f' (only when {schema.relevance.id} > 0; otherwise leave "{question.id}" out)'


def grades_text(schema: LabelSchema) -> str:
    lines = []
    for question in schema.questions:
        what = f" {question.question}" if question.question else ""
        lines.append(f'- "{question.id}": {question.name}.{what}{_asked_when(schema, question)}')
        for grade in question.grades:
            lines.append(f"    {grade.value} = {grade.name}")
    return "\n".join(lines)


def format_text(schema: LabelSchema) -> str:
    example = {q.id: q.grades[-1].value for q in schema.questions}
    return json.dumps(example)


def response_schema(schema: LabelSchema) -> dict[str, Any]:
    """The JSON schema of a reply: relevance required, every aspect optional
    (asked only when the schema says so), each an integer among its grades."""
    properties = {q.id: {"type": "integer", "enum": list(q.values)} for q in schema.questions}
    return {
        "type": "object",
        "properties": properties,
        "required": [schema.relevance.id],
        "additionalProperties": False,
    }


def response_format(schema: LabelSchema) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": "labels", "schema": response_schema(schema), "strict": False},
    }


def prompt_version(schema: LabelSchema, template: str = "") -> str:
    """Short sha256 of the system text, the template (the default when empty)
    and the schema's grades: it changes when anything that shapes the request does."""
    payload = json.dumps(
        {
            "system": SYSTEM,
            "template": template or DEFAULT_TEMPLATE,
            "schema": response_schema(schema),
            "grades": grades_text(schema),
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


def machine_messages(
    schema: LabelSchema,
    topic: TopicText,
    document: str,
    *,
    template: str = "",
    max_chars: int = DEFAULT_CHARS,
) -> list[dict[str, str]]:
    """The chat messages for one (topic, document)."""
    template = template or DEFAULT_TEMPLATE
    check_template(template)
    values: Mapping[str, str] = {
        "query": topic.query,
        "title": topic.query,
        "description": topic.description or "(none)",
        "narrative": topic.narrative or "(none)",
        "guidelines": topic.guidelines or "(none)",
        "grades": grades_text(schema),
        "document": truncate(document, max_chars),
        "format": format_text(schema),
    }
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": template.format_map(values)},
    ]


def cache_key(
    *, model: str, version: str, topic: TopicText, document: str, temperature: float, sample: int
) -> str:
    """What makes two requests the same: model, prompt version, topic text,
    document text, temperature and sample index."""
    payload = json.dumps(
        [model, version, topic.cache_text, document, float(temperature), int(sample)]
    )
    return hashlib.sha256(payload.encode()).hexdigest()
