"""Template filters of the pooling pages."""

from __future__ import annotations

import math

from django import template

register = template.Library()


@register.filter
def heat_step(value: float) -> int:
    """A value in [0, 1] as the step 0..10 of the `.heat-N` cell classes."""
    if value is None or not math.isfinite(value):
        return 0
    return min(10, max(0, math.floor(value * 10 + 0.5)))
