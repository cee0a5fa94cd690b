"""Reading a machine assessor's reply. Pure core.

`parse_reply` takes `choices[0].message.content` and returns the labels
({aspect: grade}, relevance first, NOT_ASKED for aspects not asked) or the
reason the reply cannot be used. A ```json fence around the object is
accepted; anything else that is not one JSON object is refused. Every grade
must be one of its question's values; an aspect asked only when relevant is
required then and ignored otherwise.

`majority` is the label of a document over its samples: per aspect the most
frequent grade, ties to the lower grade.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.label_schema import NOT_ASKED, LabelError, LabelSchema

_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n?(.*?)\n?```$", re.DOTALL)


@dataclass(frozen=True)
class Reply:
    labels: dict[str, int] | None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.labels is not None


def parse_reply(content: Any, schema: LabelSchema) -> Reply:
    if not isinstance(content, str) or not content.strip():
        return Reply(None, "empty reply")
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        data = json.loads(text)
    except ValueError:
        return Reply(None, "not JSON")
    if not isinstance(data, dict):
        return Reply(None, "not a JSON object")
    relevance_id = schema.relevance.id
    if relevance_id not in data:
        return Reply(None, f"no {relevance_id!r}")
    aspects = {k: v for k, v in data.items() if k != relevance_id}
    unknown = sorted(set(aspects) - set(schema.aspect_ids))
    if unknown:
        return Reply(None, f"unknown aspect {', '.join(unknown)}")
    try:
        relevance = schema.relevance.value_of(data[relevance_id])
        asked = {a.id for a in schema.aspects_asked(relevance)}
        relevance, cleaned = schema.clean(
            relevance, {k: v for k, v in aspects.items() if k in asked}
        )
    except LabelError as error:
        return Reply(None, f"outside the schema: {error}")
    return Reply({relevance_id: relevance, **cleaned})


def majority(
    samples: Sequence[Mapping[str, int]], schema: LabelSchema | None = None
) -> dict[str, int]:
    """Per key, the most frequent value over the samples; ties to the lower value.
    With the schema, the aspects follow the majority relevance: not asked at that
    relevance, NOT_ASKED; asked, the majority over the samples that gave one."""
    if not samples:
        raise ValueError("no samples")
    result = {key: _most_frequent([s.get(key, NOT_ASKED) for s in samples]) for key in samples[0]}
    if schema is None:
        return result
    asked = {a.id for a in schema.aspects_asked(result[schema.relevance.id])}
    for aspect in schema.aspect_ids:
        given = [s[aspect] for s in samples if s.get(aspect, NOT_ASKED) != NOT_ASKED]
        result[aspect] = _most_frequent(given) if aspect in asked and given else NOT_ASKED
    return result


def _most_frequent(values: Sequence[int]) -> int:
    counts = Counter(values)
    best = max(counts.values())
    return min(value for value, n in counts.items() if n == best)
