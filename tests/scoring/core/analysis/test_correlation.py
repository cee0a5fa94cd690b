"""Rank correlations: Kendall's tau against SciPy, tau_AP by hand, against published
values and against its definition averaged over every way of breaking ties."""

from __future__ import annotations

import itertools
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau

from scoring.core.analysis.correlation import kendall_tau, tau_ap
from scoring.core.analysis.ranks import ranked, ranks


def named(values: list[float]) -> dict[str, float]:
    return {f"r{i}": value for i, value in enumerate(values)}


def yilmaz(true_order: list[int], estimate_order: list[int]) -> float:
    """tau_AP of two strict orders (item ids, best first), from the paper's formula."""
    position = {item: k for k, item in enumerate(true_order)}
    n = len(estimate_order)
    total = 0.0
    for i in range(1, n):
        item = estimate_order[i]
        correct = sum(position[other] < position[item] for other in estimate_order[:i])
        total += correct / i
    return 2 * total / (n - 1) - 1


def orders(values: list[float]) -> list[list[int]]:
    """Every strict order, best first, that breaks the ties of `values`."""
    found = set()
    for permutation in itertools.permutations(range(len(values))):
        if all(values[a] >= values[b] for a, b in itertools.pairwise(permutation)):
            found.add(permutation)
    return [list(order) for order in sorted(found)]


def brute_tau_ap(true: list[float], estimate: list[float]) -> float:
    """The mean of Yilmaz's tau_AP over every tie-breaking of both rankings."""
    return statistics.fmean(yilmaz(t, e) for t in orders(true) for e in orders(estimate))


def test_tau_ap_by_hand():
    # true order a > b > c; the estimate swaps a and b: b, a, c.
    # i=2 (a): b is not above a in the truth, 0/1; i=3 (c): b and a both are, 2/2.
    # 2/(3-1) * (0 + 1) - 1 = 0.
    true = {"a": 3.0, "b": 2.0, "c": 1.0}
    assert tau_ap(true, {"a": 2.0, "b": 3.0, "c": 1.0}) == 0.0
    # Swapping the bottom two instead costs less: a, c, b: 1/1 + 1/2 -> 2/2 * 1.5 - 1.
    assert tau_ap(true, {"a": 3.0, "b": 1.0, "c": 2.0}) == 0.5
    # Kendall's tau is 1/3 for both.
    assert kendall_tau(true, {"a": 2.0, "b": 3.0, "c": 1.0}) == pytest.approx(1 / 3)
    assert kendall_tau(true, {"a": 3.0, "b": 1.0, "c": 2.0}) == pytest.approx(1 / 3)


def test_tau_ap_is_one_for_the_same_order_and_minus_one_for_the_reverse():
    true = named([0.9, 0.5, 0.4, 0.1])
    assert tau_ap(true, named([4.0, 3.0, 2.0, 1.0])) == 1.0
    assert tau_ap(true, named([1.0, 2.0, 3.0, 4.0])) == -1.0


# Urbano and Marrero's R package ircor (tests/testthat/helper_data.R and
# test_tauAP.R): x the true scores, y the estimates, y_ties rounded; the
# values its tauAP and tauAP_a give, to 4 decimals.
IRCOR = [
    (
        [0.897, 0.372, 0.908, 0.898, 0.661, 0.062, 0.177, 0.384, 0.498, 0.992],
        [0.82, 0.406, 0.817, 0.953, 0.673, 0.073, 0.364, 0.547, 0.589, 0.988],
        [0.8, 0.4, 0.8, 1, 0.7, 0.1, 0.4, 0.5, 0.6, 1],
        0.8519,
        0.7454,
    ),
    (
        [0.266, 0.573, 0.202, 0.945, 0.629, 0.206, 0.687, 0.77, 0.718, 0.38],
        [0.263, 0.843, 0.728, 0.928, 0.08, 0.114, 0.467, 0.641, 0.973, 0.644],
        [0.3, 0.8, 0.7, 0.9, 0.1, 0.1, 0.5, 0.6, 1, 0.6],
        0.2504,
        0.2692,
    ),
    (
        [0.185, 0.573, 0.944, 0.129, 0.468, 0.553, 0.761, 0.405, 0.976, 0.445],
        [0.845, 0.272, 0.275, 0.924, 0.605, 0.334, 0.162, 0.872, 0.018, 0.25],
        [0.8, 0.3, 0.3, 0.9, 0.6, 0.3, 0.2, 0.9, 0, 0.2],
        -0.6971,
        -0.5558,
    ),
]


@pytest.mark.parametrize(("x", "y", "y_ties", "untied", "tied"), IRCOR)
def test_tau_ap_equals_ircor(x, y, y_ties, untied, tied):
    assert tau_ap(named(x), named(y)) == pytest.approx(untied, abs=5e-5)
    assert tau_ap(named(x), named(y_ties)) == pytest.approx(tied, abs=5e-5)


few_scores = st.lists(st.sampled_from([0.0, 0.1, 0.2, 0.5]), min_size=2, max_size=5)


@given(data=st.data(), true=few_scores)
@settings(max_examples=150, deadline=None)
def test_tau_ap_is_the_mean_over_every_tie_breaking(data, true):
    estimate = data.draw(
        st.lists(st.sampled_from([0.0, 0.1, 0.2, 0.5]), min_size=len(true), max_size=len(true))
    )
    assert tau_ap(named(true), named(estimate)) == pytest.approx(
        brute_tau_ap(true, estimate), abs=1e-12
    )


def test_tau_ap_needs_two_runs():
    assert tau_ap({"a": 1.0}, {"a": 0.5}) is None
    assert tau_ap({}, {}) is None


scores = st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=30)


@given(data=st.data(), x=scores)
@settings(max_examples=200, deadline=None)
def test_kendall_tau_equals_scipy(data, x):
    y = data.draw(
        st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=len(x), max_size=len(x))
    )
    tau = kendall_tau(named(x), named(y))
    if len(set(x)) == 1 or len(set(y)) == 1:
        assert tau is None
    else:
        assert tau == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)


def test_ranks_put_the_highest_first_and_equal_scores_by_tag():
    runs = ["b", "a", "c", "d"]
    assert list(ranked(runs, [0.5, 0.5, 0.9, 0.1])) == [2, 1, 0, 3]
    assert list(ranks(runs, [0.5, 0.5, 0.9, 0.1])) == [3, 2, 1, 4]
