"""Citation support: precision and recall per answer and per run, by hand and against a
slow obvious reference of the definitions."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.core.tasks import citations
from scoring.core.tasks.citations import answer_support, run_support


def test_an_answers_precision_and_recall_by_hand():
    # Sentence 1 cites two segments (full, no), sentence 2 one (partial), sentence 3 none.
    scores = answer_support([["full", "no"], ["partial"], []])
    assert scores == {
        "precision": 1.5 / 3,  # (1 + 0 + 0.5) / 3 citations
        "strict_precision": 1 / 3,
        "recall": 1.5 / 3,  # sentence 1 supported, sentence 2 half, sentence 3 not
        "strict_recall": 1 / 3,
    }


def test_a_sentence_counts_its_best_citation_once_in_the_recall():
    scores = answer_support([["partial", "full", "full"], ["partial", "partial", "no"]])
    assert (scores["recall"], scores["strict_recall"]) == (0.75, 0.5)
    assert scores["precision"] == 3.5 / 6


def test_an_answer_without_citations_scores_zero_precision_and_zero_recall():
    assert answer_support([[], []]) == dict.fromkeys(citations.MEASURES, 0.0)


def test_an_answer_without_sentences_scores_zero():
    assert answer_support([]) == dict.fromkeys(citations.MEASURES, 0.0)


def test_an_unknown_support_label_is_an_error():
    with pytest.raises(ValueError, match="'partial_support' is not one of full, partial, no"):
        answer_support([["full"], ["partial_support"]])


def test_a_run_is_the_mean_over_its_answers_citing_or_not():
    answers = [answer_support([["full"]]), answer_support([[]]), answer_support([["partial"]])]
    assert run_support(answers) == {
        "precision": 0.5,  # (1 + 0 + 0.5) / 3: the answer citing nothing counts 0
        "strict_precision": 1 / 3,
        "recall": 0.5,
        "strict_recall": 1 / 3,
    }


def test_a_run_without_answers_has_no_mean():
    with pytest.raises(ValueError, match="no topics"):
        run_support([])


CREDIT = {"full": Fraction(1), "partial": Fraction(1, 2), "no": Fraction(0)}
STRICT = {"full": Fraction(1), "partial": Fraction(0), "no": Fraction(0)}


def _reference(sentences: list[list[str]]) -> dict[str, float]:
    """The definitions, in exact fractions, one sentence and one citation at a time."""

    def precision(credit) -> float:
        judged = [credit[label] for sentence in sentences for label in sentence]
        return float(sum(judged, Fraction(0)) / len(judged)) if judged else 0.0

    def recall(credit) -> float:
        if not sentences:
            return 0.0
        best = [
            max([credit[label] for label in sentence], default=Fraction(0))
            for sentence in sentences
        ]
        return float(sum(best, Fraction(0)) / len(sentences))

    return {
        "precision": precision(CREDIT),
        "strict_precision": precision(STRICT),
        "recall": recall(CREDIT),
        "strict_recall": recall(STRICT),
    }


ANSWER = st.lists(st.lists(st.sampled_from(citations.SUPPORT_LABELS), max_size=6), max_size=12)


@settings(max_examples=200, deadline=None)
@given(ANSWER)
def test_an_answers_scores_are_their_definitions(sentences):
    assert answer_support(sentences) == _reference(sentences)


@settings(max_examples=60, deadline=None)
@given(st.lists(ANSWER, min_size=1, max_size=40))
def test_a_runs_scores_are_the_exact_means_of_its_answers(answers):
    expected = [_reference(sentences) for sentences in answers]
    run = run_support([answer_support(sentences) for sentences in answers])
    for measure in citations.MEASURES:
        exact = sum((Fraction(scores[measure]) for scores in expected), Fraction(0)) / len(expected)
        assert run[measure] == float(exact)
