"""The labels judging stores are the ones the scorers count (judging sits below scoring)."""

from judging.core import answer_labels
from scoring.core.tasks import citations, nuggets


def test_the_judging_labels_are_the_scorers_labels():
    assert answer_labels.NUGGET_LABELS == nuggets.ASSIGNMENTS
    assert answer_labels.CITATION_LABELS == citations.SUPPORT_LABELS
