"""Agreement items of answer labels: nuggets under one version, citations."""

from __future__ import annotations

from judging.core.agreement import pairwise_agreement
from judging.core.answer_agreement import NUGGET_ASPECTS, JudgedAnswer, labels_frame


def test_each_nugget_under_its_version_is_an_item():
    frame = labels_frame(
        [
            JudgedAnswer("a", "1", 7, 1, ["support", "partial_support", "not_support"]),
            JudgedAnswer("b", "1", 7, 2, ["support", "support", "support"]),
        ]
    )
    assert list(frame.doc_id[:3]) == ["7:v1:n1", "7:v1:n2", "7:v1:n3"]
    assert list(frame.label[:3]) == [2, 1, 0]
    pairs = pairwise_agreement(frame, aspects=NUGGET_ASPECTS)
    assert pairs.empty  # different versions: nothing in common


def test_citation_items_are_each_citation_of_each_sentence():
    frame = labels_frame([JudgedAnswer("a", "1", 3, None, [["full"], [], ["partial", "no"]])])
    assert list(zip(frame.doc_id, frame.label, strict=True)) == [
        ("3:s0:c0", 2),
        ("3:s2:c0", 1),
        ("3:s2:c1", 0),
    ]
