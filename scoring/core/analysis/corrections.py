"""Adjusting a family of p-values for multiple comparisons. Pure core.

Equal to `statsmodels.stats.multitest.multipletests(p, method=...)[1]` for
"holm" and "bonferroni". A NaN p-value (a test that could not be computed)
is no comparison: it stays NaN, and the others are adjusted as a family
without it.
"""

from __future__ import annotations

import numpy as np

CORRECTIONS = ("holm", "bonferroni", "none")


def adjust(p_values: np.ndarray, method: str) -> np.ndarray:
    """The adjusted p-values, in the order given."""
    p_values = np.asarray(p_values, dtype=np.float64)
    if method == "none":
        return p_values.copy()
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r} (known: {', '.join(CORRECTIONS)})")
    adjusted = np.full(p_values.shape, np.nan)
    tested = ~np.isnan(p_values)
    family = p_values[tested]
    adjusted[tested] = holm(family) if method == "holm" else bonferroni(family)
    return adjusted


def bonferroni(p_values: np.ndarray) -> np.ndarray:
    """Each p-value times the family's size, at most 1."""
    return np.minimum(p_values * len(p_values), 1.0)


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down: the i-th smallest (from 0) times (m - i), made
    non-decreasing in that order, at most 1."""
    m = len(p_values)
    order = np.argsort(p_values, kind="mergesort")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p_values[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted
