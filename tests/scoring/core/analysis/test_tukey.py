"""Tukey's HSD against scipy.stats.tukey_hsd, and by hand.

The statistics equal SciPy's to the bit; the p-values come from our own
studentized range (test_studentized_range.py), within 1e-9 of SciPy's.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from scipy import stats

from scoring.core.analysis import tukey
from scoring.core.analysis.paired import all_pairs
from scoring.core.analysis.tukey import tukey_hsd
from tests.scoring.core.analysis.tables import continuous, quiet, tables

TOLERANCE = 1e-9  # absolute, on the p-values


def _scipy(values):
    with quiet():
        result = stats.tukey_hsd(*values)
    a, b = all_pairs(len(values))
    return result.statistic[a, b], result.pvalue[a, b]


def test_tukey_by_hand():
    """Means 1.5, 2.5, 3.5, each run's variance 0.5: the statistic is the
    difference of means; equal means have p = 1."""
    values = np.array([[1.0, 2.0], [2.0, 3.0], [3.0, 4.0], [1.0, 2.0]])
    result = tukey_hsd(values)
    # pairs (0,1) (0,2) (0,3) (1,2) (1,3) (2,3)
    assert list(result.statistic) == [-1.0, -2.0, 0.0, -1.0, 1.0, 2.0]
    assert result.p_value[2] == 1.0


@settings(max_examples=25, deadline=None)
@given(tables(min_topics=2, max_runs=5, max_topics=8))
def test_tukey_is_scipys(values):
    result = tukey_hsd(values)
    statistic, p_value = _scipy(values)
    np.testing.assert_array_equal(result.statistic, statistic)
    np.testing.assert_allclose(result.p_value, p_value, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize(("runs", "topics"), [(7, 30), (12, 20), (3, 40_000)])
def test_tukey_on_continuous_scores_is_scipys(runs, topics):
    """df = runs x (topics - 1): 203, 228 and, past SciPy's switch to the
    infinite form at 100,000, 119,997."""
    values = continuous(runs, topics, seed=6)
    result = tukey_hsd(values)
    statistic, p_value = _scipy(values)
    np.testing.assert_array_equal(result.statistic, statistic)
    np.testing.assert_allclose(result.p_value, p_value, rtol=0, atol=TOLERANCE)


def test_tukey_reports_progress_block_by_block():
    done = []
    tukey_hsd(continuous(40, 5, seed=2), progress=done.append)
    assert sum(done) == 40 * 39 // 2
    assert len(done) > 1
    assert max(done) <= tukey._BLOCK


def test_tukey_of_one_topic_is_nan():
    result = tukey_hsd(np.array([[0.1], [0.2], [0.3]]))
    assert np.isnan(result.p_value).all()
