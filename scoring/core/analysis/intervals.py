"""A run's mean over topics and its confidence intervals. Pure core.

scores: (runs, topics) per-topic values with no gaps (the leaderboard leaves
out the topics a run lacks before it calls these).

- `topic_means`: trec_eval's mean, adding the topics one at a time in their
  order, so that a run's mean here is its trec_eval summary to the last bit.
- `t_interval`: Student's t interval of the mean, `scipy.stats.t.interval(
  confidence, n - 1, loc=mean, scale=scipy.stats.sem(x))`.
- `bootstrap_interval`: the percentile bootstrap, `scipy.stats.bootstrap((x,),
  np.mean, method="percentile", n_resamples=..., rng=seed)` for each run.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from scoring.core.analysis.quiet import quiet_scipy
from scoring.core.measures.numerics import sequential_sum

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0

type Interval = tuple[np.ndarray, np.ndarray]  # (low, high), one value per run


def topic_means(scores: np.ndarray) -> np.ndarray:
    """Each run's mean over its topics, summed in topic order as trec_eval does."""
    n_topics = scores.shape[1]
    if n_topics == 0:
        return np.full(scores.shape[0], np.nan)
    return sequential_sum(np.asarray(scores, dtype=np.float64).T) / n_topics


def t_interval(scores: np.ndarray, confidence: float) -> Interval:
    """Student's t interval around each run's `topic_means`.

    NaN with fewer than two topics (no variance to estimate), as SciPy; a run
    with the same value on every topic has the interval [mean, mean], where
    SciPy, refusing the scale 0, gives NaN.
    """
    scores = np.asarray(scores, dtype=np.float64)
    n_topics = scores.shape[1]
    means = topic_means(scores)
    if n_topics < 2:
        nan = np.full(scores.shape[0], np.nan)
        return nan, nan.copy()
    # One run at a time, as scipy.stats.sem(x) computes it (to the last bit).
    sems = np.array([stats.sem(row) for row in scores])
    with quiet_scipy():  # the scale 0 of a flat run, handled below
        low, high = stats.t.interval(confidence, n_topics - 1, loc=means, scale=sems)
    flat = sems == 0
    return np.where(flat, means, low), np.where(flat, means, high)


def bootstrap_interval(
    scores: np.ndarray,
    confidence: float,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Interval:
    """The percentile bootstrap interval of each run's mean.

    Draws the resamples as SciPy does for one run with this seed (one
    `default_rng(seed).integers(0, n, (n_resamples, n))`); every run is
    resampled with those same topic draws, so each run's interval is the one
    SciPy gives for it alone. NaN with fewer than two topics (SciPy refuses).
    """
    scores = np.asarray(scores, dtype=np.float64)
    n_runs, n_topics = scores.shape
    if n_topics < 2:
        nan = np.full(n_runs, np.nan)
        return nan, nan.copy()
    draws = np.random.default_rng(seed).integers(0, n_topics, (n_resamples, n_topics))
    alpha = (1 - confidence) / 2
    levels = np.array([alpha, 1 - alpha])
    low, high = np.empty(n_runs), np.empty(n_runs)
    for run, row in enumerate(scores):
        # Run by run: a (runs, resamples, topics) gather would sum in another order.
        means = row[draws].mean(axis=-1)
        low[run], high[run] = stats.quantile(means, levels)
    return low, high
