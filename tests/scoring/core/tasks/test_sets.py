"""Set-based measures: hand-computed cases and scikit-learn on generated data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, fbeta_score, precision_recall_fscore_support

from scoring.core.tasks import sets


def test_confusion_counts_sets_and_the_universe():
    counts = sets.confusion(["a", "b", "b", "c"], ["b", "c", "d"], universe="abcdefg")
    assert counts == sets.Confusion(tp=2, fp=1, fn=1, tn=3)
    assert sets.precision(counts) == 2 / 3
    assert sets.recall(counts) == 2 / 3
    assert sets.accuracy(counts) == 5 / 7
    assert sets.error_rate(counts) == 2 / 7


def test_accuracy_needs_the_universe():
    with pytest.raises(ValueError, match="universe"):
        sets.accuracy(sets.confusion("a", "b"))


def test_empty_denominators_give_what_the_caller_asks():
    nothing = sets.confusion([], [])
    assert math.isnan(sets.precision(nothing))
    assert sets.precision(nothing, empty=0.0) == 0.0
    assert math.isnan(sets.f_alpha(nothing))


def test_f_alpha_is_the_weighted_harmonic_mean():
    counts = sets.Confusion(tp=2, fp=2, fn=6)  # P = 1/2, R = 1/4
    p, r = 0.5, 0.25
    assert sets.f_alpha(counts, 0.5) == pytest.approx(2 * p * r / (p + r))
    assert sets.f_alpha(counts, 0.2) == pytest.approx(1 / (0.2 / p + 0.8 / r))
    assert sets.f_alpha(counts, 1.0) == pytest.approx(p)
    assert sets.f_alpha(counts, 0.0) == pytest.approx(r)
    assert sets.f_beta(counts, 2.0) == pytest.approx(sets.f_alpha(counts, 1 / 5))


def test_f_is_zero_when_nothing_is_right():
    assert sets.f_alpha(sets.Confusion(0, 3, 2)) == 0.0
    assert sets.f1(0.0, 0.0, empty=0.0) == 0.0


def test_micro_pools_counts_and_macro_averages_ratios():
    items = [sets.Confusion(1, 0, 0), sets.Confusion(1, 3, 4)]
    assert sets.micro(items).precision == 2 / 5
    assert sets.macro(items).precision == (1 + 1 / 4) / 2
    assert sets.macro([sets.Confusion(0, 0, 1), sets.Confusion(1, 1, 0)]).precision == 0.5


def test_strict_and_lenient_span_matching():
    gold = (100, 120)
    assert sets.strict_match(gold, (100, 120))
    assert not sets.strict_match(gold, (99, 120))
    assert sets.lenient_match(gold, (90, 130), tolerance=10)
    assert not sets.lenient_match(gold, (89, 120), tolerance=10)
    assert not sets.lenient_match(gold, (101, 120), tolerance=10)  # must cover the reference


def test_the_two_average_precisions_of_the_textbook_example():
    """Relevant at ranks 1, 2 and 5 of six documents, three relevant in all:
    (1/1 + 2/2 + 3/5) / 3 = 0.87 either way; with six relevant trec_eval's halves."""
    ranked = [True, True, False, False, True, False]
    assert sets.ap_over_relevant_retrieved(ranked) == pytest.approx(0.8667, abs=1e-4)
    assert sets.ap_over_relevant(ranked, 3) == pytest.approx(0.8667, abs=1e-4)
    assert sets.ap_over_relevant(ranked, 6) == pytest.approx(0.4333, abs=1e-4)
    assert sets.ap_over_relevant([True, True, True], 3) == 1.0
    assert sets.ap_over_relevant([], 0) == 0.0


def test_ap_refuses_more_relevant_ranked_than_relevant():
    with pytest.raises(ValueError, match="only 1 relevant"):
        sets.ap_over_relevant([True, True], 1)


def test_category_is_the_first_three_characters():
    assert sets.category("N20.0") == "n20"
    assert sets.category("BW40ZZZ") == "bw4"
    assert sets.category_confusion(["n20.0", "n20.9", "k02"], ["N20.1", "m81"]) == sets.Confusion(
        tp=1, fp=1, fn=1
    )


def test_learning_accuracy_by_hand():
    # n20.0's path: n, n20, n200 (depth 3)
    assert sets.learning_accuracy("n20.0", "N20.0") == 1.0
    assert sets.learning_accuracy("n20", "n20.0") == pytest.approx(2 / 3)  # an ancestor: CP/SP
    # a sibling: common n20 (CP 2), FP 3, DP 1 -> 2 / 4
    assert sets.learning_accuracy("n20.9", "n20.0") == 0.5
    # another category, same letter: CP 1, FP 3, DP 2 -> 1/5
    assert sets.learning_accuracy("n30.0", "n20.0") == pytest.approx(1 / 5)
    assert sets.learning_accuracy("k02.9", "n20.0") == 0.0
    # more specific than the gold: CP 2 (n20), FP 3, DP 1
    assert sets.learning_accuracy("n20.0", "n20") == 0.5


def test_best_learning_accuracy_averages_each_predictions_best():
    assert sets.best_learning_accuracy(["n20.0", "n20.9"], ["n20.0", "k02"]) == (1 + 0.5) / 2
    assert math.isnan(sets.best_learning_accuracy([], ["n20.0"]))


LABELS = st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60)


@settings(max_examples=200, deadline=None)
@given(LABELS, st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5]))
def test_binary_measures_agree_with_scikit_learn(pairs, beta):
    """Items predicted / expected; the universe is every item."""
    truth = np.array([gold for gold, _ in pairs], dtype=int)
    guess = np.array([predicted for _, predicted in pairs], dtype=int)
    items = range(len(pairs))
    counts = sets.confusion(
        [i for i in items if guess[i]], [i for i in items if truth[i]], universe=items
    )
    p, r, f, _ = precision_recall_fscore_support(truth, guess, average="binary", zero_division=0.0)
    assert sets.precision(counts, empty=0.0) == pytest.approx(p)
    assert sets.recall(counts, empty=0.0) == pytest.approx(r)
    assert sets.f_alpha(counts, empty=0.0) == pytest.approx(f)
    assert sets.f_beta(counts, beta, empty=0.0) == pytest.approx(
        fbeta_score(truth, guess, beta=beta, zero_division=0.0)
    )
    assert sets.accuracy(counts) == pytest.approx(accuracy_score(truth, guess))
    assert sets.error_rate(counts) == pytest.approx(1 - accuracy_score(truth, guess))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=12),
        min_size=1,
        max_size=8,
    )
)
def test_micro_and_macro_agree_with_scikit_learns_multilabel_averages(rows):
    """Each item is a sample of a multilabel problem over 12 labels."""
    width = 12
    truth = np.zeros((len(rows), width), dtype=int)
    guess = np.zeros((len(rows), width), dtype=int)
    per_item = []
    for i, row in enumerate(rows):
        for j, (gold, predicted) in enumerate(row):
            truth[i, j], guess[i, j] = gold, predicted
        per_item.append(
            sets.confusion(
                [j for j in range(width) if guess[i, j]], [j for j in range(width) if truth[i, j]]
            )
        )
    p, r, f, _ = precision_recall_fscore_support(truth, guess, average="micro", zero_division=0.0)
    micro = sets.micro(per_item, empty=0.0)
    assert (micro.precision, micro.recall, micro.f1) == pytest.approx((p, r, f))
    # scikit-learn's "samples" average is our macro over items, with 0 for an empty one.
    p, r, _, _ = precision_recall_fscore_support(truth, guess, average="samples", zero_division=0.0)
    macro = sets.macro(per_item, empty=0.0)
    assert (macro.precision, macro.recall) == pytest.approx((p, r))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), max_size=30), st.integers(0, 10))
def test_ap_over_relevant_is_the_brute_force_definition(ranked, unfound):
    relevant = sum(ranked) + unfound
    precisions = [sum(ranked[: k + 1]) / (k + 1) for k in range(len(ranked)) if ranked[k]]
    expected = sum(precisions) / relevant if relevant else 0.0
    assert sets.ap_over_relevant(ranked, relevant) == pytest.approx(expected)
    retrieved = sum(ranked)
    assert sets.ap_over_relevant_retrieved(ranked) == pytest.approx(
        sum(precisions) / retrieved if retrieved else 0.0
    )
    assert sets.ap_over_relevant(ranked, relevant) <= sets.ap_over_relevant_retrieved(ranked)
