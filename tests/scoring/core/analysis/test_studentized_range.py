"""The studentized range's survival function against SciPy's and an exact form.

SciPy's sf is 1 - cdf by numerical integration, good to about 1e-11 except in
heavy tails (small df), where it gives up and returns 0 for p up to 4e-10: the
contract against it is 1e-9. For k = 2 the range is |X1 - X2| and
Q / sqrt(2) = |t(df)|, an exact reference to hold ours to 1e-14.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from scoring.core.analysis import studentized_range
from scoring.core.analysis.studentized_range import StudentizedRange, studentized_range_sf
from tests.scoring.core.analysis.tables import quiet

TOLERANCE = 1e-9  # absolute, against scipy.stats.studentized_range.sf
KS = [2, 3, 5, 10, 30, 80, 150]
DFS = [3, 5, 10, 30, 100, 1000, 2370, 100_000, np.inf]


def scipy_sf(q, k, df):
    with quiet():
        return stats.studentized_range.sf(q, k, df)


def into_the_tail(k: int, df: float) -> np.ndarray:
    """0, then 14 values up to a q with p < 1e-12: by the union bound over the
    k (k - 1) / 2 pairs, each |Xi - Xj| / S exceeding q with the k = 2 tail."""
    beyond = np.sqrt(2) * stats.t.isf(1e-12 / (k * (k - 1)), df)
    return np.concatenate([[0.0], np.geomspace(0.05, beyond, 14)])


@pytest.mark.parametrize("df", DFS)
@pytest.mark.parametrize("k", KS)
def test_equals_scipy_from_zero_into_the_tail(k, df):
    q = into_the_tail(k, df)
    ours = studentized_range_sf(q, k, df)
    np.testing.assert_allclose(ours, scipy_sf(q, k, df), rtol=0, atol=TOLERANCE)
    assert ours[-1] < 1e-12


@pytest.mark.parametrize("df", [3, 4, 5, 10, 30, 100, 1000, 2370, 99_999, np.inf])
def test_two_groups_is_the_t_distribution(df):
    q = np.concatenate([np.linspace(0, 20, 201), np.geomspace(20, 1e7, 30)])
    exact = 2 * stats.t.sf(q / np.sqrt(2), df)
    np.testing.assert_allclose(studentized_range_sf(q, 2, df), exact, rtol=0, atol=1e-14)


@settings(max_examples=40, deadline=None)
@given(
    k=st.integers(2, 200),
    df=st.one_of(st.floats(3, 200_000), st.integers(3, 5_000), st.just(np.inf)),
    q=st.lists(st.floats(0, 60), min_size=1, max_size=4),
)
def test_hypothesis_equals_scipy(k, df, q):
    q = np.array(q)
    np.testing.assert_allclose(
        studentized_range_sf(q, k, df), scipy_sf(q, k, df), rtol=0, atol=TOLERANCE
    )


@pytest.mark.parametrize("df", [1, 2, 2.5])
def test_below_three_degrees_of_freedom_is_scipys_own(df):
    """SciPy misses the heavy tail there (by 2e-8 at df = 2, against the exact
    form): its values are taken as they are, so Tukey's HSD keeps them."""
    q = np.concatenate([[0.0], np.geomspace(0.1, 1e5, 12)])
    np.testing.assert_array_equal(studentized_range_sf(q, 3, df), scipy_sf(q, 3, df))


def test_from_100000_degrees_of_freedom_is_infinite_as_in_scipy():
    q = np.linspace(0.5, 6, 12)
    at_switch = studentized_range_sf(q, 10, 100_000)
    np.testing.assert_array_equal(at_switch, studentized_range_sf(q, 10, np.inf))
    below = studentized_range_sf(q, 10, 99_999)
    assert np.max(np.abs(below - at_switch)) > 1e-6
    np.testing.assert_allclose(below, scipy_sf(q, 10, 99_999), rtol=0, atol=TOLERANCE)


def test_edges_of_q():
    q = np.array([[0.0, -1.0], [np.inf, np.nan]])
    for df in (10, np.inf):
        p = studentized_range_sf(q, 4, df)
        assert p.shape == (2, 2)
        assert p[0, 0] == 1.0
        assert p[0, 1] == 1.0
        assert p[1, 0] == 0.0
        assert np.isnan(p[1, 1])


def test_one_setup_serves_many_calls():
    distribution = StudentizedRange(20, 570)
    q = np.linspace(0, 8, 40)
    whole = distribution.sf(q)
    np.testing.assert_array_equal(
        np.concatenate([distribution.sf(q[:15]), distribution.sf(q[15:])]), whole
    )


@pytest.mark.parametrize(
    ("k", "df", "reason"),
    [
        (1, 10, "at least 2"),
        (2.5, 10, "whole"),
        (np.inf, 10, "whole"),
        (3, 0, "positive"),
        (3, np.nan, "positive"),
    ],
)
def test_refuses_what_is_no_studentized_range(k, df, reason):
    with pytest.raises(ValueError, match=reason):
        StudentizedRange(k, df)


def test_a_subnormal_q_is_quietly_one():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert studentized_range_sf(np.array([5e-324]), 5, 30)[0] == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize("df", [3, 30, 2370, np.inf])
@pytest.mark.parametrize("k", [150, 1000])
def test_finer_rules_change_nothing(monkeypatch, k, df):
    """The quadrature sizes have converged, beyond the tested grid's k too:
    four times the nodes and half the interpolation pieces give the same values."""
    q = np.concatenate([np.linspace(0, 12, 97), np.geomspace(12, 1e5, 12)])
    ours = studentized_range_sf(q, k, df)
    monkeypatch.setattr(studentized_range, "_Z_PANELS", 4 * studentized_range._Z_PANELS)
    monkeypatch.setattr(studentized_range, "_S_PANELS", 4 * studentized_range._S_PANELS)
    monkeypatch.setattr(studentized_range, "_W_PANEL", studentized_range._W_PANEL / 2)
    np.testing.assert_allclose(ours, studentized_range_sf(q, k, df), rtol=0, atol=2e-14)


@pytest.mark.parametrize(
    ("q", "k", "df"),
    [
        # Found by a scan (the Hypothesis test's rare failure): Phi(z - q) came out an
        # ulp above Phi(z), and log1p of minus a ratio above 1 made P(R > q) NaN.
        (2.220446049250313e-16, 3, np.inf),
        (3e-16, 3, 100_000),
        (1e-16, 4, np.inf),
        (2.220446049250313e-16, 188, 180_955.33119036895),
    ],
)
def test_a_q_of_about_one_ulp_is_one_not_nan(q, k, df):
    ours = studentized_range_sf(np.array([q]), k, df)[0]
    assert scipy_sf(q, k, df) == 1.0
    assert ours == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("df", [3, 5, 2370, 99_999, np.inf])
def test_a_huge_q_is_zero_not_an_error(df):
    """A q of 1e100 made an interpolation piece index overflow (IndexError)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = studentized_range_sf(np.array([1e100, 1e300, 1.7e308]), 200, df)
    np.testing.assert_allclose(p, scipy_sf(np.array([1e100, 1e300, 1.7e308]), 200, df), atol=1e-9)
    assert not np.isnan(p).any()
