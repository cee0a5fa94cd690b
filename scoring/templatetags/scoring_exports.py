"""Lets other apps' templates (the pool page) list the qrels formats without importing scoring."""

from django import template

from scoring.exports import FORMATS
from scoring.views import DEFAULT_BUNDLE

register = template.Library()


@register.simple_tag
def qrels_formats() -> list:
    return list(FORMATS.values())


@register.simple_tag
def qrels_bundle_defaults() -> tuple[str, ...]:
    return DEFAULT_BUNDLE
