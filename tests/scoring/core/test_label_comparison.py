"""Run rankings and significant pairs under two qrels: tau-b against SciPy, the
leaders and top-k overlaps by hand, the pair counts against their definition."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau

from scoring.core.analysis.leaderboard import PairRow
from scoring.core.label_comparison import (
    PairTest,
    compare_rankings,
    compare_significance,
    pair_tests,
)

HUMAN = {"a": 0.5, "b": 0.4, "c": 0.3, "d": 0.2, "e": 0.1, "f": 0.05}
MACHINE = {"a": 0.3, "b": 0.45, "c": 0.35, "d": 0.1, "e": 0.2, "f": 0.0, "g": 0.9}


def test_rankings_by_hand():
    result = compare_rankings(HUMAN, MACHINE)
    assert result.n_runs == 6
    assert result.only_second == ("g",)
    assert result.only_first == ()
    assert (result.first_leader, result.second_leader, result.same_leader) == ("a", "b", False)
    top3, top5 = result.tops
    assert (top3.k, top3.shared, top3.identical) == (3, 3, True)
    assert top3.first == ("a", "b", "c")
    assert top3.second == ("b", "c", "a")
    assert (top5.shared, top5.identical) == (5, True)
    # discordant pairs: (a,b), (a,c), (d,e) of 15
    assert result.kendall_tau_b == pytest.approx((12 - 3) / 15)
    json.dumps(result.to_json())


def test_rankings_degenerate():
    empty = compare_rankings({}, {})
    assert (empty.n_runs, empty.kendall_tau_b, empty.tau_ap, empty.same_leader) == (
        0,
        None,
        None,
        False,
    )
    one = compare_rankings({"a": 1.0}, {"a": 2.0})
    assert one.same_leader
    assert one.kendall_tau_b is None
    ties = compare_rankings({"b": 1.0, "a": 1.0}, {"a": 0.0, "b": 0.0})
    assert ties.first_leader == "a"  # equal scores by run tag, as the leaderboard
    assert ties.kendall_tau_b is None


SCORES = st.dictionaries(
    st.sampled_from("abcdefgh"), st.integers(0, 4).map(float), min_size=2, max_size=8
)


@settings(deadline=None)
@given(SCORES, st.data())
def test_tau_is_scipys_tau_b(first, data):
    second = {run: data.draw(st.integers(0, 4).map(float)) for run in first}
    result = compare_rankings(first, second)
    runs = sorted(first)
    expected = kendalltau([first[r] for r in runs], [second[r] for r in runs]).statistic
    if result.kendall_tau_b is None:
        assert expected != expected  # NaN: a constant scoring
    else:
        assert result.kendall_tau_b == pytest.approx(expected)
    for top in result.tops:
        assert top.shared == len(set(top.first) & set(top.second))
        assert top.identical == (set(top.first) == set(top.second))


def test_significance_by_hand():
    human = {
        ("a", "b"): PairTest(True, 1),  # agrees
        ("a", "c"): PairTest(True, 1),  # flips
        ("b", "c"): PairTest(True, -1),  # vanishes
        ("c", "d"): PairTest(False, 1),  # appears
        ("a", "d"): PairTest(False, 1),  # neither
        ("b", "d"): PairTest(True, 1),  # unmatched
    }
    machine = {
        ("b", "a"): PairTest(True, -1),  # same direction, given the other way round
        ("a", "c"): PairTest(True, -1),
        ("b", "c"): PairTest(False, -1),
        ("c", "d"): PairTest(True, 1),
        ("a", "d"): PairTest(False, -1),
    }
    result = compare_significance(human, machine)
    assert result.to_json() == {
        "n_pairs": 5,
        "agree": 1,
        "flip": 1,
        "vanish": 1,
        "appear": 1,
        "neither": 1,
        "unmatched": 1,
    }


def test_significance_refuses_doubled_pairs():
    with pytest.raises(ValueError, match="tested twice"):
        compare_significance({("a", "b"): PairTest(True, 1), ("b", "a"): PairTest(True, -1)}, {})
    with pytest.raises(ValueError, match="with itself"):
        compare_significance({("a", "a"): PairTest(True, 0)}, {})


PAIRS = st.dictionaries(
    st.sampled_from([("a", "b"), ("a", "c"), ("b", "c"), ("c", "d"), ("a", "d")]),
    st.builds(PairTest, st.booleans(), st.sampled_from([-1, 0, 1])),
)


@settings(deadline=None)
@given(PAIRS, PAIRS)
def test_every_common_pair_counted_once_and_symmetry(first, second):
    result = compare_significance(first, second)
    assert (
        result.agree + result.flip + result.vanish + result.appear + result.neither
        == result.n_pairs
    )
    assert result.n_pairs + result.unmatched == len(set(first) | set(second))
    swapped = compare_significance(second, first)
    assert (swapped.vanish, swapped.appear) == (result.appear, result.vanish)
    assert (swapped.agree, swapped.flip) == (result.agree, result.flip)


def test_pair_tests_from_leaderboard_rows():
    def row(a, b, test, diff, significant):
        return PairRow(a, b, test, 0.0, 0.01, 0.01, diff, 0.0, significant)

    rows = [
        row("a", "b", "t", 0.2, True),
        row("a", "b", "sign", 0.2, False),
        row("a", "c", "t", -0.1, False),
    ]
    assert pair_tests(rows, "t") == {("a", "b"): PairTest(True, 1), ("a", "c"): PairTest(False, -1)}
