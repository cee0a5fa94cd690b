"""Labels as people read them: `{{ judgment.labels|label_text:schema }}`."""

from collections.abc import Mapping
from typing import Any

from django import template

from workbench.core.label_schema import LabelSchema

register = template.Library()
NONE = "\N{EN DASH}"  # what a table cell shows for no labels (an undone judgment)


@register.filter
def label_text(labels: Mapping[str, Any] | None, schema: LabelSchema) -> str:
    """Relevance: Relevant · Effectiveness: Effective (`LabelSchema.label_names`)."""
    return " · ".join(schema.label_names(labels or {})) or NONE
