"""The requests a machine assessor sends for generated answers, and reading its
replies. Pure core, no Django.

Two requests (issue 27 item 6), each versioned by a short sha256 of its system
text and template (stored with what the reply made, as `machine_prompt` does):

- **Nuggets of a topic** (`nugget_messages`, one request per topic): the topic's
  question and its answers' texts (each truncated by `machine_prompt.truncate`'s
  rule at `ANSWER_CHARS`, at most `MAX_ANSWERS` answers), asking for a JSON list
  of `{"text", "importance"}` with importance `vital` or `okay`.
  `parse_nuggets` accepts the list, or an object holding it under "nuggets",
  inside a ```json fence or not; every item must have a non-empty text (at most
  1,000 characters) and an importance among vital/okay; at least one nugget.
- **Assignment of one answer** (`assign_messages`, one request per answer): the
  topic's question, its nuggets numbered, the answer's text, asking for a JSON
  list of labels (one per nugget, in order, among support, partial_support,
  not_support). `parse_assignment` accepts the list, or an object holding it
  under "labels"; a length other than the nuggets' is refused.

A reply that is refused is asked once more by the caller, then recorded as a
failure with its raw text (never stored as nuggets or labels).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judging.core.answer_labels import NUGGET_LABELS
from judging.core.machine_prompt import truncate
from judging.core.nugget_files import IMPORTANCES, MAX_TEXT, NuggetText

MAX_ANSWERS = 30
ANSWER_CHARS = 4_000
MAX_NUGGETS = 30

_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n?(.*?)\n?```$", re.DOTALL)

NUGGET_SYSTEM = (
    "You are a careful assessor for the evaluation of generated answers. You write the "
    "information nuggets of a question: short, atomic facts a good answer contains. "
    "You answer with JSON only."
)

NUGGET_TEMPLATE = """Question: {query}
{description}
Below are answers that systems gave to the question. Write the information nuggets
a complete answer should contain: each one short fact (at most about 12 words), not
repeated, taken from what the answers say and what the question asks. Mark each
"vital" (a good answer must contain it) or "okay" (good to have). At most {limit}.

{answers}

Answer with a JSON list only, no other text, for example:
[{{"text": "a fact", "importance": "vital"}}, {{"text": "another fact", "importance": "okay"}}]"""

ASSIGN_SYSTEM = (
    "You are a careful assessor for the evaluation of generated answers. You decide, "
    "for each information nugget, whether an answer contains it. You answer with JSON only."
)

ASSIGN_TEMPLATE = """Question: {query}

Nuggets:
{nuggets}

Answer:
<<<
{answer}
>>>

For each nugget in order, say whether the answer supports it: "support" (the answer
states it fully), "partial_support" (the answer states part of it) or "not_support".
Answer with a JSON list of {count} labels only, no other text, for example:
{example}"""


@dataclass(frozen=True)
class NuggetReply:
    nuggets: tuple[NuggetText, ...] | None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.nuggets is not None


@dataclass(frozen=True)
class AssignmentReply:
    labels: tuple[str, ...] | None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.labels is not None


def _version(system: str, template: str) -> str:
    payload = json.dumps({"system": system, "template": template}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


NUGGET_VERSION = _version(NUGGET_SYSTEM, NUGGET_TEMPLATE)
ASSIGN_VERSION = _version(ASSIGN_SYSTEM, ASSIGN_TEMPLATE)


def nugget_messages(
    query: str, answers: Sequence[str], *, description: str = "", limit: int = MAX_NUGGETS
) -> list[dict[str, str]]:
    """The one request for a topic's nuggets: the question and (at most
    MAX_ANSWERS of) its answers, each truncated at ANSWER_CHARS."""
    shown = [truncate(text, ANSWER_CHARS) for text in answers[:MAX_ANSWERS]]
    listed = "\n\n".join(f"Answer {n}:\n<<<\n{text}\n>>>" for n, text in enumerate(shown, 1))
    content = NUGGET_TEMPLATE.format(
        query=query,
        description=f"({description})\n" if description else "",
        limit=limit,
        answers=listed or "(no answers yet)",
    )
    return [{"role": "system", "content": NUGGET_SYSTEM}, {"role": "user", "content": content}]


def assign_messages(query: str, nuggets: Sequence[NuggetText], answer: str) -> list[dict[str, str]]:
    """The one request for an answer's labels against the nuggets, in order."""
    listed = "\n".join(f"{n}. {nugget.text}" for n, nugget in enumerate(nuggets, 1))
    example = json.dumps(["support", "not_support", "partial_support"][: len(nuggets)])
    content = ASSIGN_TEMPLATE.format(
        query=query,
        nuggets=listed,
        answer=truncate(answer, ANSWER_CHARS),
        count=len(nuggets),
        example=example,
    )
    return [{"role": "system", "content": ASSIGN_SYSTEM}, {"role": "user", "content": content}]


def _json(content: Any) -> tuple[Any, str]:
    """The reply's JSON value (a ```json fence accepted), or the reason it is none."""
    if not isinstance(content, str) or not content.strip():
        return None, "empty reply"
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text), ""
    except ValueError:
        return None, "not JSON"


def parse_nuggets(content: Any, *, limit: int = MAX_NUGGETS) -> NuggetReply:
    data, reason = _json(content)
    if reason:
        return NuggetReply(None, reason)
    if isinstance(data, dict) and isinstance(data.get("nuggets"), list):
        data = data["nuggets"]
    if not isinstance(data, list):
        return NuggetReply(None, "not a JSON list of nuggets")
    if not data:
        return NuggetReply(None, "no nuggets")
    if len(data) > limit:
        return NuggetReply(None, f"too many nuggets: {len(data)} (at most {limit})")
    nuggets = []
    for n, item in enumerate(data, 1):
        if not isinstance(item, dict):
            return NuggetReply(None, f"nugget {n} is not an object")
        text, importance = item.get("text"), item.get("importance")
        if not isinstance(text, str) or not text.strip():
            return NuggetReply(None, f"nugget {n} has no text")
        if len(text.strip()) > MAX_TEXT:
            return NuggetReply(None, f"nugget {n} is longer than {MAX_TEXT} characters")
        if not isinstance(importance, str) or importance.strip().lower() not in IMPORTANCES:
            return NuggetReply(
                None,
                f"outside the schema: nugget {n}'s importance {importance!r} is not vital or okay",
            )
        nuggets.append(NuggetText(" ".join(text.split()), importance.strip().lower()))
    return NuggetReply(tuple(nuggets))


def parse_assignment(content: Any, nuggets: int) -> AssignmentReply:
    data, reason = _json(content)
    if reason:
        return AssignmentReply(None, reason)
    if isinstance(data, dict) and isinstance(data.get("labels"), list):
        data = data["labels"]
    if not isinstance(data, list):
        return AssignmentReply(None, "not a JSON list of labels")
    if len(data) != nuggets:
        return AssignmentReply(
            None, f"outside the schema: {len(data)} labels for {nuggets} nuggets"
        )
    labels = []
    for n, label in enumerate(data, 1):
        value = label.strip().lower() if isinstance(label, str) else label
        if value not in NUGGET_LABELS:
            return AssignmentReply(
                None,
                f"outside the schema: nugget {n}'s label {label!r} is not one of "
                + ", ".join(NUGGET_LABELS),
            )
        labels.append(str(value))
    return AssignmentReply(tuple(labels))


def reason_kind(reason: str) -> str:
    """How a failure is counted: "outside the schema: ..." under "outside the schema"."""
    return reason.split(":", 1)[0]
