"""Arithmetic that must round exactly as trec_eval's C does.

numpy's own log2/log/exp may differ from the C library's in the last bit,
which is enough to flip a printed fourth decimal; these helpers call the C
library (through `math`) on the distinct arguments only. Sums that trec_eval
accumulates one term at a time (means over topics, sums over ranks) are
taken with `sequential_sum` (numpy's `sum` adds pairwise, in a different order).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np

MIN_GEO_MEAN = 0.00001  # trec_eval floors values at this before a geometric mean
_ACCUMULATE_WIDTH = 64  # sums per row up to which sequential_sum uses a cumulative sum


def lround(values: np.ndarray) -> np.ndarray:
    """C's lround: to the nearest integer, halves away from zero."""
    whole = np.trunc(values)
    away = np.abs(values - whole) >= 0.5  # exact: subtracting the integer part never rounds
    return (whole + np.copysign(away, values)).astype(np.int64)


def c_long(values: np.ndarray) -> np.ndarray:
    """C's (long) cast of doubles: toward zero."""
    return np.trunc(values).astype(np.int64)


@lru_cache(maxsize=16)
def _log2_of_integers(size: int) -> np.ndarray:
    return np.array([-np.inf] + [math.log2(k) for k in range(1, size)])


def log2_table(size: int) -> np.ndarray:
    """log2(k) for k = 0 .. size-1, from the C library (log2(0) is -inf)."""
    capacity = 1 << max(size - 1, 1).bit_length()  # cache a few sizes, not one per depth
    return _log2_of_integers(capacity)[:size]


def libm(function: Callable[[float], float], values: np.ndarray) -> np.ndarray:
    """`function` (math.log, math.exp, ...) of each value, computed once per distinct value."""
    distinct, inverse = np.unique(values, return_inverse=True)
    results = np.array([function(float(value)) for value in distinct], dtype=np.float64)
    return results[inverse].reshape(values.shape)


def c_log2(values: np.ndarray) -> np.ndarray:
    """C's log2: from a table for whole numbers (the usual arguments), else per distinct value."""
    if values.size and values.min() >= 1 and values.max() < 1 << 20:
        whole = np.rint(values)
        if np.array_equal(whole, values):
            return log2_table(int(whole.max()) + 1)[whole.astype(np.int64)]
    positive = values > 0
    logs = libm(math.log2, np.where(positive, values, 1.0))
    return np.where(positive, logs, np.where(values == 0, -np.inf, np.nan))


def c_log(values: np.ndarray) -> np.ndarray:
    """C's log: -inf at 0 and NaN below, where math.log raises."""
    positive = values > 0
    logs = libm(math.log, np.where(positive, values, 1.0))
    return np.where(positive, logs, np.where(values == 0, -np.inf, np.nan))


def sum_at(shape: tuple[int, ...], cells: tuple[np.ndarray, ...], terms: np.ndarray) -> np.ndarray:
    """The sequential sum over ranks of `terms` placed at `cells` (from np.nonzero)
    of a (ranks, groups) matrix.

    For terms that only some cells have: computing them there alone is cheaper.
    """
    matrix = np.zeros(shape)
    matrix[cells] = terms
    return sequential_sum(matrix)


def sequential_sum(values: np.ndarray) -> np.ndarray:
    """Sum over the first axis adding one term at a time, as a C loop does.

    Not `np.sum` or `np.add.reduce`: they add a contiguous run pairwise
    (unrolled eight ways), which they do whenever the other axes collapse,
    as in (n,), (n, 1) or (n, 1, 1), and then about half of all sums of 8 or
    more terms differ from C's in the last bit, enough to move a printed
    fourth decimal. A cumulative sum, and adding whole rows one after
    another, are sequential by definition; the first is cheaper for narrow
    arrays, the second for wide ones (measured: equal at about 64 columns).
    """
    if values.shape[0] == 0:
        return np.zeros(values.shape[1:], dtype=np.float64)
    if values[0].size <= _ACCUMULATE_WIDTH:
        return np.add.accumulate(values, axis=0, dtype=np.float64)[-1]
    rows = np.ascontiguousarray(values, dtype=np.float64)
    total = rows[0].copy()
    for row in rows[1:]:
        total += row
    return total
