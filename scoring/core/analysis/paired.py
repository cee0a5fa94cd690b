"""Paired tests between runs, for many pairs at once. Pure core.

diffs: (pairs, topics), row k the per-topic differences a - b of pair k over
the same topics. Each test returns the statistic and two-sided p-value of
every pair, equal to SciPy's function called on that pair alone:

- `t_test`: `scipy.stats.ttest_rel(a, b)`; statistic t.
- `wilcoxon_test`: `scipy.stats.wilcoxon(a, b)` (zeros dropped, SciPy's
  choice of exact, permutation or normal distribution made per pair);
  statistic the smaller rank sum.
- `sign_test`: `scipy.stats.binomtest(wins, non-zero differences, 0.5)`;
  statistic the share of non-zero differences that favour a.
- `randomization_test`: Fisher's, flipping the signs of the differences;
  `scipy.stats.permutation_test((a, b), mean of a - b, permutation_type=
  "samples", n_resamples=..., rng=seed)`; statistic the mean difference.
  All pairs share one matrix of sign flips, drawn as SciPy draws them for
  one pair with this seed, and one matrix product gives every pair's null
  distribution.

A test SciPy refuses or cannot compute has NaN there: one topic (except the
Wilcoxon test of a non-zero difference, p = 1 as SciPy), or all differences
zero for the t-test.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass

import numpy as np
from scipy import stats

from scoring.core.analysis.intervals import DEFAULT_RESAMPLES, DEFAULT_SEED
from scoring.core.analysis.quiet import quiet_scipy

# Pairs per block of the randomisation test: its null block is resamples x this
# doubles (40 MB at 10,000 resamples).
_RANDOMIZATION_BLOCK = 512
# Pairs per block of SciPy's Wilcoxon permutation distribution (up to 2**13
# resamples of 13 topics for each pair at once).
_WILCOXON_BLOCK = 32
# SciPy's tolerance for a null statistic equal to the observed one.
_RELATIVE_TIE = np.finfo(np.float64).eps * 100


@dataclass(frozen=True)
class TestResult:
    """statistic and p_value: one value per pair (two-sided p-values)."""

    statistic: np.ndarray
    p_value: np.ndarray


@dataclass(frozen=True)
class EffectSizes:
    """mean_difference: mean of a - b; cohens_d: that over the standard deviation
    (n - 1) of the differences (Cohen's d for paired data, d_z), NaN with one
    topic, infinite when every difference is the same non-zero value."""

    mean_difference: np.ndarray
    cohens_d: np.ndarray


def all_pairs(n_runs: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) indices of every pair a < b, a's pairs together in b's order."""
    return np.triu_indices(n_runs, k=1)


def effect_sizes(diffs: np.ndarray) -> EffectSizes:
    with quiet_scipy():
        mean = np.mean(diffs, axis=1)
        sd = np.std(diffs, axis=1, ddof=1) if diffs.shape[1] > 1 else np.full(len(diffs), np.nan)
        return EffectSizes(mean, mean / sd)


def t_test(diffs: np.ndarray) -> TestResult:
    with quiet_scipy():
        result = stats.ttest_rel(diffs, np.zeros_like(diffs), axis=1)
    return TestResult(np.asarray(result.statistic, float), np.asarray(result.pvalue, float))


def wilcoxon_test(diffs: np.ndarray) -> TestResult:
    """SciPy chooses the distribution once for all the rows it is given (exact
    unless some row has a tie or a zero): pairs are passed in two groups, each
    of rows that SciPy, given one alone, would treat alike."""
    statistic = np.full(len(diffs), np.nan)
    p_value = np.full(len(diffs), np.nan)
    if diffs.size == 0:
        return TestResult(statistic, p_value)
    tied = _has_zero_or_tie(diffs)
    n_topics = diffs.shape[1]
    for rows in (np.flatnonzero(~tied), np.flatnonzero(tied)):
        # Only the permutation distribution (ties or zeros, <= 13 topics) is heavy.
        block = _WILCOXON_BLOCK if n_topics <= 13 else max(len(rows), 1)
        for start in range(0, len(rows), block):
            some = rows[start : start + block]
            try:
                statistic[some], p_value[some] = _scipy_wilcoxon(diffs[some])
            except ValueError:  # a row SciPy refuses (one topic, zero): the others alone
                for row in some:
                    with suppress(ValueError):  # NaN for this one
                        statistic[row], p_value[row] = _scipy_wilcoxon(diffs[row])
    return TestResult(statistic, p_value)


def _scipy_wilcoxon(diffs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with quiet_scipy():
        result = stats.wilcoxon(diffs, axis=-1)
    return result.statistic, result.pvalue


def _has_zero_or_tie(diffs: np.ndarray) -> np.ndarray:
    """Rows with a zero difference, or two non-zero differences of equal size."""
    size = np.sort(np.abs(diffs), axis=1)
    zero = np.any(size == 0, axis=1)
    tie = np.any((size[:, 1:] == size[:, :-1]) & (size[:, 1:] != 0), axis=1)
    return zero | tie


def sign_test(diffs: np.ndarray) -> TestResult:
    wins = np.count_nonzero(diffs > 0, axis=1)
    untied = np.count_nonzero(diffs != 0, axis=1)
    # Few distinct (wins, untied): one SciPy call for each.
    found: dict[tuple[int, int], tuple[float, float]] = {}
    for key in set(zip(wins.tolist(), untied.tolist(), strict=True)):
        with quiet_scipy():
            result = stats.binomtest(key[0], key[1], 0.5)
        found[key] = (float(result.statistic), float(result.pvalue))
    pairs = [found[key] for key in zip(wins.tolist(), untied.tolist(), strict=True)]
    values = np.array(pairs, dtype=np.float64).reshape(len(diffs), 2)
    return TestResult(values[:, 0], values[:, 1])


def sign_flips(n_topics: int, n_resamples: int, seed: int) -> tuple[np.ndarray, bool]:
    """The sign patterns SciPy's permutation_test(permutation_type="samples")
    applies to one pair's differences: (patterns, topics) of +1/-1, and whether
    they are all 2**topics of them (SciPy enumerates them when n_resamples
    covers them all) rather than a random draw.

    SciPy treats each topic as a "sample" of two observations (a_i, b_i) and
    draws `rng.permuted(tile([0, 1], (n_resamples, topics, 1)), axis=-1)`
    once; a pattern (1, 0) swaps a_i and b_i, flipping the difference.
    Enumerated, the patterns come in `itertools.product` order: the first
    topic varies slowest.
    """
    if 2**n_topics <= n_resamples:
        patterns = np.arange(2**n_topics)[:, None]
        flipped = (patterns >> np.arange(n_topics - 1, -1, -1)) & 1
        return 1.0 - 2.0 * flipped, True
    rng = np.random.default_rng(seed)
    order = rng.permuted(np.tile(np.arange(2), (n_resamples, n_topics, 1)), axis=-1)
    return 1.0 - 2.0 * order[..., 0], False


def randomization_test(
    diffs: np.ndarray, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> TestResult:
    """Fisher's randomisation test of the mean difference, every pair flipped
    by the same sign patterns (see `sign_flips`); p-values counted as SciPy
    counts them: a null value within 100 eps of the observed one counts as
    equal, a random draw adds one to both counts (the observed arrangement)."""
    n_pairs, n_topics = diffs.shape
    observed = np.mean(diffs, axis=1)
    p_value = np.full(n_pairs, np.nan)
    if n_topics < 2:  # SciPy refuses samples of one observation
        return TestResult(observed, p_value)
    signs, exact = sign_flips(n_topics, n_resamples, seed)
    adjustment = 0 if exact else 1
    draws = len(signs) + adjustment
    for start in range(0, n_pairs, _RANDOMIZATION_BLOCK):
        block = slice(start, start + _RANDOMIZATION_BLOCK)
        null = signs @ diffs[block].T
        null /= n_topics
        tolerance = np.abs(_RELATIVE_TIE * observed[block])
        below = np.count_nonzero(null <= observed[block] + tolerance, axis=0) + adjustment
        above = np.count_nonzero(null >= observed[block] - tolerance, axis=0) + adjustment
        p_value[block] = np.clip(np.minimum(below / draws, above / draws) * 2, 0.0, 1.0)
    return TestResult(observed, p_value)
