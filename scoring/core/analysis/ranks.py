"""The order of runs by a score: the leaderboard's rule, written once. Pure core.

Highest score first; equal scores by run tag (byte order), so that a ranking
never depends on the order the runs were given in. The leaderboard and the
reusability report both rank with it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def ranked(runs: Sequence[str], scores: np.ndarray) -> np.ndarray:
    """The indices of `runs` in ranking order."""
    return np.lexsort((np.asarray(runs), -np.asarray(scores, dtype=np.float64)))


def ranks(runs: Sequence[str], scores: np.ndarray) -> np.ndarray:
    """The 1-based rank of each run."""
    order = ranked(runs, scores)
    result = np.empty(len(order), dtype=np.int64)
    result[order] = np.arange(1, len(order) + 1)
    return result
