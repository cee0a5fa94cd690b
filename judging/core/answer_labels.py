"""The labels of answer judging, their keys, and the check of a judgment's labels.
Pure core, no Django.

The same values the scorers count (`scoring.core.tasks.nuggets.ASSIGNMENTS`,
`scoring.core.tasks.citations.SUPPORT_LABELS`; judging sits below scoring, so a
test checks that the two agree).
"""

from __future__ import annotations

from collections.abc import Sequence

SUPPORT, PARTIAL_SUPPORT, NOT_SUPPORT = "support", "partial_support", "not_support"
NUGGET_LABELS = (SUPPORT, PARTIAL_SUPPORT, NOT_SUPPORT)
FULL, PARTIAL, NO = "full", "partial", "no"
CITATION_LABELS = (FULL, PARTIAL, NO)

# (value, name, key): the assessor's page shows them and its keys choose them.
NUGGET_CHOICES = (
    (SUPPORT, "Supported", "s"),
    (PARTIAL_SUPPORT, "Partly supported", "p"),
    (NOT_SUPPORT, "Not supported", "n"),
)
CITATION_CHOICES = (
    (FULL, "Full support", "f"),
    (PARTIAL, "Partial support", "p"),
    (NO, "No support", "n"),
)


def nugget_labels_problem(labels: object, nuggets: int) -> str | None:
    """Why `labels` is not one label a nugget for a list of `nuggets`, or None."""
    if not isinstance(labels, list) or len(labels) != nuggets:
        return f"give one label for each of the {nuggets} nugget(s)"
    for position, label in enumerate(labels, 1):
        if label not in NUGGET_LABELS:
            return f"nugget {position}: {label!r} is not one of {', '.join(NUGGET_LABELS)}"
    return None


def citation_labels_problem(labels: object, citations: Sequence[int]) -> str | None:
    """Why `labels` is not, for each sentence, one label a citation (`citations`: how
    many each sentence has), or None."""
    if not isinstance(labels, list) or len(labels) != len(citations):
        return f"give the labels of each of the {len(citations)} sentence(s)"
    for position, (sentence, cited) in enumerate(zip(labels, citations, strict=True), 1):
        if not isinstance(sentence, list) or len(sentence) != cited:
            return f"sentence {position}: give one label for each of its {cited} citation(s)"
        for label in sentence:
            if label not in CITATION_LABELS:
                return f"sentence {position}: {label!r} is not one of {', '.join(CITATION_LABELS)}"
    return None
