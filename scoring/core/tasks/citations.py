"""Citation support of generated answers: support precision and recall. Pure core, no Django.

Each citation of an answer sentence (a segment of the answer's `references`)
is judged against the cited segment's text: `full`, `partial` or `no`
support. The TREC 2024 RAG track's support evaluation (Thakur et al., arXiv
2504.15205) judged (sentence, cited segment) pairs on the same three grades
and reported "weighted" precision and recall, partial support counting 0.5.
No public script computes them, so the definitions are written out here (and
in docs/tasks.md) and checked against a slow obvious reference in the tests.

Per answer, with a citation's credit 1 for `full`, 0.5 for `partial` (0 in
the strict scores) and 0 for `no`:

    precision         the credit of its citations / its citations
    strict_precision  its fully supported citations / its citations
    recall            each sentence's best credit (1 if one citation fully
                      supports it, else 0.5 if one partly does, else 0),
                      summed / its sentences
    strict_recall     its sentences with a fully supporting citation / its sentences

- A sentence without citations is in the recall's denominator and adds 0:
  a claim without a source is not supported.
- An answer without citations has precision 0.0 (and strict 0.0), not
  "undefined": left out of the run's mean, it would let a run raise its
  precision by citing nothing where it is unsure. An answer without
  sentences has 0.0 everywhere, as nuggetizer gives 0.0 for nothing to count.

A run's scores are the mean over its answers (one per topic), by the one
rule every mean over topics uses (`scoring.core.tasks.nuggets.run_mean`): a topic
the run did not answer is not in it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scoring.core.tasks.nuggets import run_mean

FULL, PARTIAL, NO = "full", "partial", "no"
SUPPORT_LABELS = (FULL, PARTIAL, NO)
MEASURES = ("precision", "strict_precision", "recall", "strict_recall")

_CREDIT = {FULL: 1.0, PARTIAL: 0.5, NO: 0.0}
_STRICT_CREDIT = {FULL: 1.0, PARTIAL: 0.0, NO: 0.0}


def _ratio(numerator: float, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def answer_support(sentences: Sequence[Sequence[str]]) -> dict[str, float]:
    """One answer's scores, in `MEASURES` order, from each sentence's labels (one per
    citation, in any order; an empty list for a sentence without citations).
    ValueError on a label that is not full, partial or no."""
    for labels in sentences:
        for label in labels:
            if label not in _CREDIT:
                raise ValueError(
                    f"support label {label!r} is not one of {', '.join(SUPPORT_LABELS)}"
                )
    labels = [label for sentence in sentences for label in sentence]
    # Sums of halves: exact in a double, so each score is rounded once, by the division.
    return {
        "precision": _ratio(sum(_CREDIT[label] for label in labels), len(labels)),
        "strict_precision": _ratio(sum(_STRICT_CREDIT[label] for label in labels), len(labels)),
        "recall": _ratio(
            sum(max((_CREDIT[label] for label in sentence), default=0.0) for sentence in sentences),
            len(sentences),
        ),
        "strict_recall": _ratio(
            sum(
                max((_STRICT_CREDIT[label] for label in sentence), default=0.0)
                for sentence in sentences
            ),
            len(sentences),
        ),
    }


def run_support(answers: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Each measure's mean over a run's answers (`answer_support` of each)."""
    return {measure: run_mean(scores[measure] for scores in answers) for measure in MEASURES}
