"""Intervals against scipy.stats, and by hand."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from scipy import stats

from scoring.core.analysis.intervals import bootstrap_interval, t_interval, topic_means
from tests.scoring.core.analysis.tables import continuous, quiet, tables


def _scipy_t(row: np.ndarray, mean: float, confidence: float) -> tuple[float, float]:
    with quiet():
        return stats.t.interval(confidence, len(row) - 1, loc=mean, scale=stats.sem(row))


def _scipy_bootstrap(row, confidence, n_resamples, seed):
    result = stats.bootstrap(
        (row,),
        np.mean,
        method="percentile",
        n_resamples=n_resamples,
        rng=seed,
        confidence_level=confidence,
    )
    return result.confidence_interval.low, result.confidence_interval.high


def test_topic_means_add_in_topic_order_as_trec_eval():
    values = np.array([[0.1, 0.2, 0.3] * 4])
    total = 0.0
    for value in values[0]:
        total += value
    assert topic_means(values)[0] == total / 12


def test_t_interval_by_hand():
    low, high = t_interval(np.array([[1.0, 2.0, 3.0]]), 0.95)
    # With 2 df, P(|T| <= t) = t / sqrt(t^2 + 2): 0.95 at t^2 = 2 * 0.95^2 / (1 - 0.95^2).
    t = math.sqrt(2 * 0.95**2 / (1 - 0.95**2))
    half = t * 1 / math.sqrt(3)  # sd 1 over sqrt(3 topics)
    assert low[0] == pytest.approx(2 - half, abs=1e-12)
    assert high[0] == pytest.approx(2 + half, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(tables(min_topics=2))
def test_t_interval_is_scipys(values):
    low, high = t_interval(values, 0.9)
    means = topic_means(values)
    for row, mean, lo, hi in zip(values, means, low, high, strict=True):
        if np.all(row == row[0]):
            assert (lo, hi) == (mean, mean)  # SciPy: NaN for the scale 0
        else:
            assert (lo, hi) == _scipy_t(row, mean, 0.9)


def test_t_interval_on_continuous_scores_is_scipys():
    values = continuous(20, 30, seed=3)
    low, high = t_interval(values, 0.95)
    expected = [
        _scipy_t(row, mean, 0.95) for row, mean in zip(values, topic_means(values), strict=True)
    ]
    assert list(zip(low, high, strict=True)) == expected


def test_t_interval_of_one_topic_is_nan():
    low, high = t_interval(np.array([[0.5], [0.25]]), 0.95)
    assert np.isnan(low).all()
    assert np.isnan(high).all()


def test_bootstrap_interval_by_hand():
    """Two topics 0 and 1: resample means are 0, 1/2 or 1, each end reached
    with probability 1/4, so the 2.5% and 97.5% points are 0 and 1."""
    low, high = bootstrap_interval(np.array([[0.0, 1.0], [0.5, 0.5]]), 0.95, seed=1)
    assert list(low) == [0.0, 0.5]
    assert list(high) == [1.0, 0.5]


@settings(max_examples=25, deadline=None)
@given(tables(min_topics=2))
def test_bootstrap_interval_is_scipys(values):
    low, high = bootstrap_interval(values, 0.95, n_resamples=500, seed=7)
    for row, lo, hi in zip(values, low, high, strict=True):
        assert (lo, hi) == _scipy_bootstrap(row, 0.95, 500, 7)


def test_bootstrap_interval_on_continuous_scores_is_scipys_with_defaults():
    values = continuous(5, 30, seed=4)
    low, high = bootstrap_interval(values, 0.95, seed=12)
    for row, lo, hi in zip(values, low, high, strict=True):
        assert (lo, hi) == _scipy_bootstrap(row, 0.95, 10_000, 12)


def test_bootstrap_interval_of_one_topic_is_nan():
    low, high = bootstrap_interval(np.array([[0.5]]), 0.95)
    assert np.isnan(low[0])
    assert np.isnan(high[0])
