"""Lets other apps' templates (the pool page) list the qrels formats without importing scoring."""

from django import template

from pooling.models import Pool
from scoring import services

register = template.Library()


@register.simple_tag
def qrels_formats(pool: Pool) -> list[services.FormatChoice]:
    """Every format, with whether this pool can produce it, why not, and if the bundle ticks it."""
    return services.qrels_format_choices(pool=pool)
