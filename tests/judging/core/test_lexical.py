"""The lexical machine assessor's maths: BM25 by hand, cut points fitted against
brute force and recovering planted cut points, grades monotone in the score."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from judging.core.lexical import (
    bm25_scores,
    default_thresholds,
    fit_thresholds,
    grades_from_scores,
    tokens,
)

DOCS = {"d1": "Apple banana", "d2": "apple APPLE, cherry!", "d3": "banana"}


def test_bm25_by_hand_on_three_documents():
    # N = 3, lengths 2, 3, 1 (avgdl 2), "apple" in 2 documents.
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    scores = bm25_scores("the Apple", DOCS)  # "the" is a stop word
    assert scores["d1"] == pytest.approx(idf * 1 / (1 + 0.9 * (0.6 + 0.4 * 2 / 2)))
    assert scores["d2"] == pytest.approx(idf * 2 / (2 + 0.9 * (0.6 + 0.4 * 3 / 2)))
    assert scores["d3"] == 0.0


def test_bm25_sums_query_terms_and_is_never_negative():
    # "banana" in 2 of 3, "cherry" in 1 of 3: both idf positive even for a term in every document.
    scores = bm25_scores("banana cherry", DOCS)
    assert min(scores.values()) > 0
    everywhere = bm25_scores("x", {"a": "x", "b": "x y"})
    assert all(v > 0 for v in everywhere.values())


def test_bm25_edge_cases():
    assert bm25_scores("apple", {}) == {}
    assert bm25_scores("the of", DOCS) == {"d1": 0.0, "d2": 0.0, "d3": 0.0}
    assert bm25_scores("apple", {"a": "", "b": ""}) == {"a": 0.0, "b": 0.0}
    assert tokens("Café au lait, THE end") == ["café", "au", "lait", "end"]


def test_grades_from_scores_strictly_above_a_cut():
    grades = grades_from_scores({"a": 0.0, "b": 1.0, "c": 1.5, "d": 3.0}, [0, 1, 2], [1.0, 2.0])
    assert grades == {"a": 0, "b": 0, "c": 1, "d": 2}
    with pytest.raises(ValueError, match="need 2 cut points"):
        grades_from_scores({}, [0, 1, 2], [1.0])
    with pytest.raises(ValueError, match="ascending"):
        grades_from_scores({}, [0, 1, 2], [2.0, 1.0])


def test_default_thresholds_rule():
    scores = [float(i) for i in range(11)]  # 0..10
    assert default_thresholds(scores, [0, 1]) == pytest.approx([7.0])
    assert default_thresholds(scores, [0, 1, 2]) == pytest.approx([7.0, 8.5])
    assert default_thresholds([], [0, 1, 2]) == [0.0, 0.0]
    zeros = default_thresholds([0.0] * 5, [0, 1])
    assert grades_from_scores(dict.fromkeys("abcde", 0.0), [0, 1], zeros) == dict.fromkeys(
        "abcde", 0
    )


def _accuracy(scores, grades, levels, cuts):
    """Balanced accuracy, exactly: the mean over the grades used of their recall."""
    got = grades_from_scores(dict(enumerate(scores)), levels, cuts)
    return sum(
        Fraction(sum(got[i] == g for i, g in enumerate(grades) if g == level), grades.count(level))
        for level in set(grades)
    ) / len(set(grades))


SCORES = st.lists(st.integers(0, 8).map(float), min_size=1, max_size=9)


@settings(deadline=None)
@given(SCORES, st.data())
def test_fit_is_as_accurate_as_brute_force(scores, data):
    levels = [0, 1, 2]
    grades = data.draw(
        st.lists(st.sampled_from(levels), min_size=len(scores), max_size=len(scores))
    )
    assume(set(grades) == set(levels))
    cuts = fit_thresholds(scores, grades, levels)
    assert cuts == sorted(cuts)
    candidates = [-1.0] + [v + 0.5 for v in range(9)]
    best = max(
        _accuracy(scores, grades, levels, list(c))
        for c in itertools.combinations_with_replacement(candidates, 2)
    )
    assert _accuracy(scores, grades, levels, cuts) == best
    assert fit_thresholds(scores, grades, levels) == cuts  # deterministic


@settings(deadline=None)
@given(
    st.lists(st.floats(0, 50, allow_nan=False), min_size=4, max_size=40, unique=True),
    st.data(),
)
def test_fit_recovers_planted_thresholds(scores, data):
    # Three cut points planted anywhere in three distinct gaps between the sorted scores,
    # so that every one of the four levels has documents.
    levels = [0, 1, 2, 3]
    ordered = sorted(scores)
    gaps = sorted(data.draw(st.sets(st.integers(1, len(ordered) - 1), min_size=3, max_size=3)))
    fractions = data.draw(st.lists(st.floats(0, 0.99), min_size=3, max_size=3))
    planted = [
        ordered[g - 1] + f * (ordered[g] - ordered[g - 1])
        for g, f in zip(gaps, fractions, strict=True)
    ]
    # Rounding may reach the upper score of a gap of an ulp or two: keep the lower.
    planted = [p if p < ordered[g] else ordered[g - 1] for p, g in zip(planted, gaps, strict=True)]
    truth = grades_from_scores(dict(enumerate(scores)), levels, planted)
    grades = [truth[i] for i in range(len(scores))]
    assert set(grades) == set(levels)
    cuts = fit_thresholds(scores, grades, levels)
    assert grades_from_scores(dict(enumerate(scores)), levels, cuts) == truth
    for cut, g in zip(cuts, gaps, strict=True):  # in the planted gap, about its middle
        assert ordered[g - 1] <= cut < ordered[g]
        assert cut == pytest.approx((ordered[g - 1] + ordered[g]) / 2)


@settings(deadline=None)
@given(SCORES, st.data())
def test_grades_are_monotone_in_the_score(scores, data):
    levels = [0, 1, 2]
    grades = data.draw(
        st.lists(st.sampled_from(levels), min_size=len(scores), max_size=len(scores))
    )
    cuts = fit_thresholds(scores, grades, levels)
    assert cuts == sorted(cuts)
    probe = {i: float(i) / 2 for i in range(-2, 20)}
    got = grades_from_scores(probe, levels, cuts)
    ordered = [got[i] for i in sorted(probe, key=probe.get)]
    assert ordered == sorted(ordered)


def test_fit_falls_back_to_defaults_for_gaps_without_labels():
    assert fit_thresholds([], [], [0, 1]) == [0.0]
    # Only grade 0 used: nothing to fit.
    assert fit_thresholds([1.0, 2.0], [0, 0], [0, 1]) == default_thresholds([1.0, 2.0], [0, 1])
    # Grades 0 and 1 used, 2 never: the 0|1 gap is fitted, the 1|2 gap is the default cut.
    few = [1.0, 2.0, 9.0, 10.0]
    cuts = fit_thresholds(few, [0, 0, 1, 1], [0, 1, 2])
    assert cuts[0] == pytest.approx(5.5)
    assert cuts[1] == pytest.approx(default_thresholds(few, [0, 1, 2])[1])
    # A default cut below a fitted one is raised to keep the cuts ascending.
    cuts = fit_thresholds([0.0, 0.0, 0.0, 10.0, 20.0], [0, 0, 0, 0, 2], [0, 1, 2])
    assert cuts == sorted(cuts)


def test_fit_rejects_bad_input():
    with pytest.raises(ValueError, match="2 scores but 1 grades"):
        fit_thresholds([1.0, 2.0], [0], [0, 1])
    with pytest.raises(ValueError, match=r"grades \[5\]"):
        fit_thresholds([1.0], [5], [0, 1])
    with pytest.raises(ValueError, match="levels"):
        fit_thresholds([1.0], [0], [1, 0])


def test_a_rare_relevant_grade_is_not_given_up_for_the_common_one():
    # Nine not relevant and one relevant, which scores highest but one: plain
    # accuracy is best (9 of 10) with everything not relevant; balanced accuracy
    # cuts below the relevant document.
    scores = [float(s) for s in range(10)]
    grades = [0] * 8 + [1, 0]
    [cut] = fit_thresholds(scores, grades, [0, 1])
    assert 7.0 < cut < 8.0


def test_fit_breaks_ties_by_starting_each_level_as_late_as_possible():
    assert fit_thresholds([1.0, 2.0], [0, 1], [0, 1]) == [1.5]
    # Inverted labels: every cut gets one of two right; the level starts as late as it can.
    assert fit_thresholds([1.0, 2.0], [1, 0], [0, 1]) == [2.0]
    # Everything above and nothing above tie (each gets one grade wholly right),
    # so again the level starts as late as it can.
    assert fit_thresholds([1.0, 2.0, 3.0], [1, 1, 0], [0, 1]) == [3.0]
