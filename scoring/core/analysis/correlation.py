"""Rank correlations between two scorings of the same runs. Pure core: NumPy only.

- `kendall_tau`: Kendall's tau-b (tied scores counted as tau-b does), equal to
  `scipy.stats.kendalltau(x, y)`;
- `tau_ap`: Yilmaz, Aslam and Robertson's AP correlation (SIGIR 2008), which
  weighs a swap near the top of the ranking more than one near the bottom.

Both take {run: score} mappings, highest score best; a run missing from one
of them counts 0 there. Both look at all pairs at once: a campaign has
hundreds of runs at most, and scipy.stats would cost a second to import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

type Scores = Mapping[str, float]


def _aligned(a: Scores, b: Scores) -> tuple[np.ndarray, np.ndarray]:
    runs = sorted(set(a) | set(b))
    x = np.array([a.get(run, 0.0) for run in runs], dtype=np.float64)
    y = np.array([b.get(run, 0.0) for run in runs], dtype=np.float64)
    return x, y


def kendall_tau(a: Scores, b: Scores) -> float | None:
    """Kendall's tau-b between two scorings of the same runs; None with fewer than
    two runs or when either is constant.

    (concordant - discordant) / sqrt((pairs - ties in a) * (pairs - ties in b)).
    """
    x, y = _aligned(a, b)
    if len(x) < 2:
        return None
    upper = np.triu_indices(len(x), k=1)
    dx = np.sign(x[:, None] - x[None, :])[upper]
    dy = np.sign(y[:, None] - y[None, :])[upper]
    untied_x, untied_y = np.count_nonzero(dx), np.count_nonzero(dy)
    if untied_x == 0 or untied_y == 0:
        return None
    return float(np.sum(dx * dy) / math.sqrt(untied_x * untied_y))


def tau_ap(true: Scores, estimate: Scores) -> float | None:
    """AP correlation of the ranking by `estimate` against the ranking by `true`;
    None with fewer than two runs.

    Without ties, Yilmaz et al.'s definition: with the runs in `estimate`'s
    order, C(i) the number of runs above the i-th that `true` also puts above
    it, tau_AP = 2 / (n - 1) * sum over i = 2..n of C(i) / (i - 1), minus 1.
    It is not symmetric: `true` is the reference.

    With ties, the mean of that value over every way of breaking them, in both
    rankings: for ties in `estimate` this is Urbano and Marrero's tau_AP_a
    (ICTIR 2017); a pair tied in `true` counts half concordant.
    """
    x, y = _aligned(true, estimate)
    n = len(x)
    if n < 2:
        return None
    above_y = y[None, :] > y[:, None]  # [i, j]: j above i in the estimate
    tied_y = y[None, :] == y[:, None]
    concordant = np.where(x[None, :] > x[:, None], 1.0, np.where(x[None, :] == x[:, None], 0.5, 0))
    # Run i takes, uniformly, one of the positions first..first+size-1 of its tie group.
    first = 1 + np.count_nonzero(above_y, axis=1)
    size = np.count_nonzero(tied_y, axis=1)
    # Runs above the group: always above i, concordant as `true` says, each over
    # (position - 1), averaged over i's positions (first > 1 here, or no run is above).
    above = np.sum(np.where(above_y, concordant, 0.0), axis=1)
    position = first[:, None] + np.arange(n)[None, :]
    in_group = np.arange(n)[None, :] < size[:, None]
    with np.errstate(divide="ignore"):
        weight = np.sum(np.where(in_group & (position > 1), 1.0 / (position - 1), 0.0), axis=1)
    total = float(np.sum(above * weight / size))
    # Runs of i's own group: at the k-th position of a group (k = 0, 1, ...) k of
    # them are above, half of them concordant on average, whatever `true` says.
    for group_first, group_size in _groups(first, size):
        k = np.arange(1, group_size)
        total += float(np.sum(k / 2 / (group_first + k - 1)))
    return 2 * total / (n - 1) - 1


def _groups(first: np.ndarray, size: np.ndarray) -> list[tuple[int, int]]:
    """(first position, size) of each tie group of the estimate, once each."""
    return sorted({(int(f), int(s)) for f, s in zip(first, size, strict=True)})
