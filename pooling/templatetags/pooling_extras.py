"""Template filters of the pooling pages."""

from __future__ import annotations

import math

from django import template

from pooling.core.spec import PoolSpec, spec_label

register = template.Library()


@register.filter
def heat_step(value: float) -> int:
    """A value in [0, 1] as the step 0..10 of the `.heat-N` cell classes."""
    if value is None or not math.isfinite(value):
        return 0
    return min(10, max(0, math.floor(value * 10 + 0.5)))


@register.filter
def plan_label(spec: PoolSpec) -> str:
    """A spec as its strata, the depth stratum written out (`spec_label`)."""
    return spec_label(spec)


@register.filter
def signed(value: int) -> str:
    """A change as +1,511 or -812 (0 as 0)."""
    return f"{value:+,}" if value else "0"
