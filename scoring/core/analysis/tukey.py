"""Tukey's honestly significant difference over all runs at once. Pure core.

Equal to `scipy.stats.tukey_hsd(*scores)` (one-way ANOVA: runs are groups of
topic values, equal variances): statistic the difference of the means, to the
bit; p-value from the studentized range, within 1e-9 of SciPy's. SciPy
integrates the distribution numerically for each cell of the runs x runs
matrix, a few milliseconds each; here every pair shares one (k, df), so
`studentized_range` sets the distribution up once and integrates for all pairs
a < b together, in blocks, with progress: 80 runs x 30 topics in 0.04 s
(`bench/bench_leaderboard.py`), where SciPy takes 40 s.

Like SciPy's, this one-way test does not pair the runs by topic, so it is
less powerful than the paired tests when topics vary more than runs do
(docs/leaderboard.md). Its p-values are already adjusted for all pairs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from scoring.core.analysis.paired import TestResult, all_pairs
from scoring.core.analysis.quiet import quiet_scipy
from scoring.core.analysis.studentized_range import StudentizedRange

_BLOCK = 256  # pairs per call of the survival function: a few milliseconds each


def tukey_hsd(scores: np.ndarray, *, progress: Callable[[int], None] | None = None) -> TestResult:
    """Each pair (a, b) of `all_pairs(runs)`; `progress` is called with the
    number of pairs done after each block. NaN with fewer than two topics
    (SciPy refuses) or no variance within runs."""
    scores = np.asarray(scores, dtype=np.float64)
    n_runs, n_topics = scores.shape
    a, b = all_pairs(n_runs)
    if n_topics < 2 or n_runs < 2:
        nan = np.full(len(a), np.nan)
        return TestResult(nan, nan.copy())
    # scipy.stats.tukey_hsd's arithmetic, one run at a time as it does.
    means = np.asarray([np.mean(row) for row in scores])
    variances = np.asarray([np.var(row, ddof=1) for row in scores])
    sizes = np.full(n_runs, n_topics)
    df = n_runs * n_topics - n_runs
    mse = np.sum(variances * (sizes - 1)) / df
    stand_err = np.sqrt(2 / n_topics * mse / 2)
    differences = means[a] - means[b]
    with quiet_scipy():
        t_stat = np.abs(differences) / stand_err
    distribution = StudentizedRange(n_runs, df)
    p_value = np.empty(len(a))
    for start in range(0, len(a), _BLOCK):
        block = slice(start, start + _BLOCK)
        with quiet_scipy():  # SciPy's own integration, when df < 3, may warn
            p_value[block] = distribution.sf(t_stat[block])
        if progress is not None:
            progress(len(t_stat[block]))
    return TestResult(differences, p_value)
