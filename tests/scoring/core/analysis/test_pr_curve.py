"""The precision-recall curve at every recall level: a hand case, and trec_eval's
iprec_at_recall (our scorer, NIST-exact) read from it at lround(f x R) / R on
generated runs with ties and unjudged documents."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.core.analysis.pr_curve import precision_recall
from scoring.core.measures.numerics import lround
from tests.scoring.helpers import values

LEVELS = [level / 10 for level in range(11)]


def test_a_hand_computed_curve():
    # Ranked a (rel), b, c (rel), d; 3 relevant (e never retrieved).
    curve = precision_recall(["a", "b", "c", "d"], [4, 3, 2, 1], {"a", "c", "e"})
    assert curve.recall.tolist() == pytest.approx([0, 1 / 3, 2 / 3])
    assert curve.precision.tolist() == pytest.approx([1, 1, 2 / 3])
    assert curve.curve_at([0.0, 0.5, 0.7, 1.0]).tolist() == pytest.approx([1, 2 / 3, 0, 0])


def test_trec_evals_levels_are_rounded_to_relevant_documents():
    """R = 2: trec_eval's 0.6 and 0.7 stand for the first relevant document (1.2
    and 1.4 round to 1), so they read the curve at 0.5, not past it."""
    qrels = "1 a 1\n1 z 1"
    expected = values(qrels, "1 a 1", ["iprec_at_recall"])
    assert [expected[f"iprec_at_recall_{level:.2f} 1"] for level in (0.5, 0.6, 0.7, 0.8)] == [
        1.0,
        1.0,
        1.0,
        0.0,
    ]
    curve = precision_recall(["a"], [1], {"a", "z"})
    assert curve.curve_at([0.5, 0.6, 0.7, 0.8]).tolist() == [1.0, 0.0, 0.0, 0.0]


def test_nothing_relevant_is_a_flat_zero():
    curve = precision_recall(["a"], [1], set())
    assert curve.curve_at(LEVELS).tolist() == [0.0] * 11


def test_ties_are_broken_by_docno_descending():
    # b and a tie: b ranks first, and is the relevant one.
    curve = precision_recall(["a", "b"], [1, 1], {"b"})
    assert curve.precision.tolist() == [1.0, 1.0]


@st.composite
def topic(draw):
    n_docs = draw(st.integers(1, 25))
    docnos = [f"d{k:02d}" for k in range(n_docs)]
    scores = draw(st.lists(st.integers(0, 5), min_size=n_docs, max_size=n_docs))
    labels = draw(
        st.lists(st.sampled_from([0, 0, 1, 2, None]), min_size=n_docs + 3, max_size=n_docs + 3)
    )
    return docnos, [float(s) for s in scores], labels


@given(topic())
def test_the_eleven_points_are_trec_evals(case):
    docnos, scores, labels = case
    judged = {f"d{k:02d}": label for k, label in enumerate(labels) if label is not None}
    if not judged:
        judged = {"zz": 0}
    qrels = "\n".join(f"1 {doc} {label}" for doc, label in judged.items())
    run = "\n".join(f"1 {doc} {score}" for doc, score in zip(docnos, scores, strict=True))
    expected = values(qrels, run, ["iprec_at_recall"])
    relevant = {doc for doc, label in judged.items() if label >= 1}
    curve = precision_recall(docnos, scores, relevant)
    n_relevant = max(len(relevant), 1)
    ours = curve.curve_at(lround(np.array(LEVELS) * n_relevant) / n_relevant)
    theirs = np.array([expected[f"iprec_at_recall_{level:.2f} 1"] for level in LEVELS])
    assert ours == pytest.approx(theirs, abs=1e-12)
