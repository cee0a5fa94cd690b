"""The one reading of a yes/no given as text: a query parameter, a form field sent by
a script, an environment variable. Pure: no Django import (settings use it)."""

from __future__ import annotations

TRUTHY = frozenset({"1", "true", "yes", "on"})


def truthy(value: object) -> bool:
    """Whether `value` says yes: "1", "true", "yes" or "on", in any case, around
    spaces (a checkbox sends "on"); anything else, and nothing at all, is no."""
    return value is not None and str(value).strip().lower() in TRUTHY
