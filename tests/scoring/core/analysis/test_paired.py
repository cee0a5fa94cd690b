"""Paired tests against scipy.stats pair by pair, and by hand."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from scoring.core.analysis.paired import (
    all_pairs,
    effect_sizes,
    randomization_test,
    sign_flips,
    sign_test,
    t_test,
    wilcoxon_test,
)
from tests.scoring.core.analysis.tables import continuous, quiet, tables


def _pairs(values: np.ndarray):
    a, b = all_pairs(len(values))
    return [(values[i], values[j]) for i, j in zip(a, b, strict=True)], values[a] - values[b]


def _mean_difference(x, y, axis):
    return np.mean(x - y, axis=axis)


def _scipy_randomization(x, y, n_resamples, seed):
    return stats.permutation_test(
        (x, y),
        _mean_difference,
        permutation_type="samples",
        n_resamples=n_resamples,
        rng=seed,
    )


def _scipy_wilcoxon(x, y):
    """SciPy's (statistic, p-value), or NaN where it refuses (one topic, zero difference)."""
    try:
        with quiet():
            result = stats.wilcoxon(x, y)
    except ValueError:
        return math.nan, math.nan
    return result.statistic, result.pvalue


def _assert_same(result, expected):
    statistic, p_value = zip(*expected, strict=True)
    np.testing.assert_array_equal(result.statistic, np.array(statistic, dtype=float))
    np.testing.assert_array_equal(result.p_value, np.array(p_value, dtype=float))


# --------------------------------------------------------------------------
# By hand


def test_t_test_by_hand():
    """Differences 1, 2, 3: mean 2, sd 1, t = 2 sqrt(3); with 2 df the two-sided
    p-value is 1 - t / sqrt(t^2 + 2)."""
    result = t_test(np.array([[1.0, 2.0, 3.0]]))
    t = 2 * math.sqrt(3)
    assert result.statistic[0] == pytest.approx(t)
    assert result.p_value[0] == pytest.approx(1 - t / math.sqrt(t**2 + 2))


def test_wilcoxon_by_hand():
    """Differences 1, -2, 3, 4: ranks sum to 8 (+) and 2 (-); of the 16 sign
    patterns, 3 give a negative sum <= 2 ({}, {1}, {2}): p = 2 * 3/16."""
    result = wilcoxon_test(np.array([[1.0, -2.0, 3.0, 4.0]]))
    assert (result.statistic[0], result.p_value[0]) == (2.0, 0.375)


def test_sign_test_by_hand():
    """3 wins of 4 untied topics (the zero is dropped): P(X <= 1 or X >= 3) = 10/16."""
    result = sign_test(np.array([[1.0, 2.0, 3.0, 0.0, -1.0]]))
    assert (result.statistic[0], result.p_value[0]) == (0.75, 0.625)


def test_randomization_by_hand():
    """Differences 1, 2, 3, all 8 sign patterns: sums 6, 4, 2, 0, 0, -2, -4, -6;
    one is >= the observed 6, so p = 2 * 1/8."""
    result = randomization_test(np.array([[1.0, 2.0, 3.0]]), n_resamples=8)
    assert (result.statistic[0], result.p_value[0]) == (2.0, 0.25)


def test_effect_sizes_by_hand():
    effects = effect_sizes(np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5], [0.0, 0.0, 0.0]]))
    assert list(effects.mean_difference) == [2.0, 0.5, 0.0]
    assert effects.cohens_d[0] == 2.0  # mean 2 over sd 1
    assert effects.cohens_d[1] == math.inf  # no spread at all
    assert math.isnan(effects.cohens_d[2])


def test_one_topic():
    diffs = np.array([[0.5], [0.0]])
    assert np.isnan(t_test(diffs).p_value).all()
    assert np.isnan(randomization_test(diffs).p_value).all()  # SciPy refuses one observation
    assert np.isnan(effect_sizes(diffs).cohens_d).all()
    np.testing.assert_array_equal(wilcoxon_test(diffs).p_value, [1.0, math.nan])
    assert sign_test(diffs).p_value[0] == 1.0
    assert math.isnan(sign_test(diffs).p_value[1])  # no untied topic


# --------------------------------------------------------------------------
# Against SciPy


@settings(max_examples=80, deadline=None)
@given(tables(max_runs=5))
def test_t_test_is_scipys(values):
    pairs, diffs = _pairs(values)
    with quiet():
        expected = [stats.ttest_rel(x, y) for x, y in pairs]
    _assert_same(t_test(diffs), [(r.statistic, r.pvalue) for r in expected])


@settings(max_examples=80, deadline=None)
@given(tables(max_runs=5, max_topics=20))
def test_wilcoxon_is_scipys(values):
    pairs, diffs = _pairs(values)
    _assert_same(wilcoxon_test(diffs), [_scipy_wilcoxon(x, y) for x, y in pairs])


def test_wilcoxon_of_pairs_with_and_without_ties_is_scipys():
    """SciPy alone picks one distribution for all the rows of a call; each pair
    here gets the one SciPy gives it alone (exact for the untied, normal for the tied)."""
    values = continuous(6, 30, seed=8)
    values[1] = np.round(values[0], 1)  # ties with run 0 are frequent now
    pairs, diffs = _pairs(values)
    _assert_same(wilcoxon_test(diffs), [_scipy_wilcoxon(x, y) for x, y in pairs])


@settings(max_examples=80, deadline=None)
@given(tables(max_runs=5))
def test_sign_test_is_binomtest_on_untied_topics(values):
    pairs, diffs = _pairs(values)
    expected = [stats.binomtest(int(np.sum(x > y)), int(np.sum(x != y)), 0.5) for x, y in pairs]
    _assert_same(sign_test(diffs), [(r.statistic, r.pvalue) for r in expected])


@settings(max_examples=40, deadline=None)
@given(tables(min_topics=2), st.sampled_from([100, 1000]), st.integers(0, 2**32))
def test_randomization_is_scipys_permutation_test(values, n_resamples, seed):
    """Enumerated (2**topics <= resamples) or drawn, with ties and zeros."""
    pairs, diffs = _pairs(values)
    expected = [_scipy_randomization(x, y, n_resamples, seed) for x, y in pairs]
    _assert_same(
        randomization_test(diffs, n_resamples=n_resamples, seed=seed),
        [(r.statistic, r.pvalue) for r in expected],
    )


def test_randomization_on_continuous_scores_is_scipys_with_defaults():
    """30 topics, 10,000 draws: every pair against SciPy called with the same seed."""
    values = continuous(6, 30, seed=5)
    pairs, diffs = _pairs(values)
    expected = [_scipy_randomization(x, y, 10_000, 2024) for x, y in pairs]
    result = randomization_test(diffs, n_resamples=10_000, seed=2024)
    _assert_same(result, [(r.statistic, r.pvalue) for r in expected])


@pytest.mark.parametrize(("topics", "n_resamples"), [(5, 100), (12, 500), (30, 2000)])
def test_sign_flips_are_scipys_null_distribution(topics, n_resamples):
    """The same null distribution, draw by draw, for enumerated and drawn patterns."""
    x, y = continuous(2, topics, seed=topics)
    expected = _scipy_randomization(x, y, n_resamples, seed=99).null_distribution
    signs, exact = sign_flips(topics, n_resamples, seed=99)
    assert exact == (2**topics <= n_resamples)
    np.testing.assert_allclose(signs @ (x - y) / topics, expected, rtol=0, atol=1e-15)


def test_all_pairs():
    a, b = all_pairs(4)
    assert list(zip(a.tolist(), b.tolist(), strict=True)) == [
        (0, 1),
        (0, 2),
        (0, 3),
        (1, 2),
        (1, 3),
        (2, 3),
    ]
