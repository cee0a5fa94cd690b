"""Labels and forecast dates as people read them: `{{ judgment.labels|label_text:schema }}`,
`{{ forecast.finish_date|forecast_date }}`."""

from collections.abc import Mapping
from datetime import date
from typing import Any

from django import template

from judging.core.progress import date_text
from workbench.core.label_schema import LabelSchema

register = template.Library()
NONE = "\N{EN DASH}"  # what a table cell shows for no labels (an undone judgment)


@register.filter
def label_text(labels: Mapping[str, Any] | None, schema: LabelSchema) -> str:
    """Relevance: Relevant · Effectiveness: Effective (`LabelSchema.label_names`)."""
    return " · ".join(schema.label_names(labels or {})) or NONE


@register.filter
def forecast_date(day: date | None) -> str:
    """ "28 Jun 2033" (`progress.date_text`: always the year); empty for no date."""
    return date_text(day) if day else ""
