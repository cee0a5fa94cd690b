"""Machine against human: kappas and the confusion matrix against scikit-learn,
per-topic kappas, one label per document from the judgment frames, and the
machine's samples that disagree."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from judging.core.agreement_statistics import aspects_for_schema
from judging.core.calibration import calibrate_frames, calibrate_labels

GRADED, BINARY, EFFECTIVENESS, CREDIBILITY = aspects_for_schema()

PAIRS = st.lists(st.tuples(st.sampled_from([0, 1, 2]), st.sampled_from([0, 1, 2])), max_size=30)


@settings(deadline=None)
@given(PAIRS)
def test_against_scikit_learn(pairs):
    human = [h for h, _ in pairs]
    machine = [m for _, m in pairs]
    result = calibrate_labels(human, machine, aspect=GRADED)
    assert result.n == len(pairs)
    if pairs:
        expected = confusion_matrix(human, machine, labels=[0, 1, 2])
        assert [list(row) for row in result.confusion] == expected.tolist()
        assert result.observed_agreement.value == pytest.approx(
            sum(h == m for h, m in pairs) / len(pairs)
        )
    else:
        assert result.confusion == ((0, 0, 0),) * 3
        assert result.observed_agreement.value is None
    for weights, kappa in [
        (None, result.kappa.plain),
        ("linear", result.kappa.linear),
        ("quadratic", result.kappa.quadratic),
    ]:
        if len(set(human) | set(machine)) < 2:
            assert kappa.value is None
            assert kappa.undefined_reason
        else:
            oracle = cohen_kappa_score(human, machine, labels=[0, 1, 2], weights=weights)
            assert kappa.value == pytest.approx(oracle, abs=1e-12)
    json.dumps(result.to_json())


def test_not_asked_and_binary_and_bad_labels():
    result = calibrate_labels([2, -1, 0, 1], [1, 2, -2, 0], aspect=BINARY)
    assert result.n == 2  # items 2 and 3 have no label on one side
    assert result.confusion == ((0, 0), (1, 1))  # human (1, 1) -> machine (1, 0)
    with pytest.raises(ValueError, match=r"labels \[7\] not in \[0, 1, 2\]"):
        calibrate_labels([7], [0], aspect=GRADED)
    with pytest.raises(ValueError, match="same length"):
        calibrate_labels([1], [0, 1], aspect=GRADED)


def test_per_topic_kappa_with_reasons():
    result = calibrate_labels(
        [0, 1, 2, 1, 1, -1],
        [0, 1, 1, 1, 1, 2],
        aspect=GRADED,
        topics=["q1", "q1", "q1", "q2", "q2", "q3"],
    )
    q1, q2, q3 = result.per_topic
    assert (q1.query_id, q1.n) == ("q1", 3)
    assert q1.kappa.plain.value == pytest.approx(cohen_kappa_score([0, 1, 2], [0, 1, 1]))
    assert q2.kappa.plain.value is None
    assert "only category 1" in q2.kappa.plain.undefined_reason
    assert (q3.n, q3.kappa.quadratic.value, q3.kappa.quadratic.undefined_reason) == (
        0,
        None,
        "no items in common",
    )


def judgments(rows):
    return pd.DataFrame(
        rows,
        columns=["assessor", "query_id", "doc_id", "relevance", "is_primary", "effectiveness"],
    )


def test_from_frames_primary_human_and_majority_of_samples():
    human = judgments(
        [
            ("zoe", "q1", "d1", 2, True, 3),
            ("amy", "q1", "d1", 0, False, 0),  # not primary: ignored
            ("amy", "q1", "d2", 1, False, -1),  # the only human label of d2
            ("amy", "q2", "d9", 1, True, 1),  # the machine has none: q2 kept, undefined
        ]
    )
    machine = judgments(
        [
            ("lexical", "q1", "d1", 2, False, 1),
            ("lexical", "q1", "d1", 2, False, 2),
            ("lexical", "q1", "d1", 1, False, 2),  # samples 2, 2, 1: label 2, disagree
            ("lexical", "q1", "d2", 0, False, 0),
            ("lexical", "q1", "d2", 1, False, 0),  # 0 and 1 tie: the lower, 0; disagree
            ("lexical", "q1", "d3", 1, False, 1),  # no human label
        ]
    )
    result = calibrate_frames(human, machine, aspect=GRADED)
    assert result.n == 2
    assert result.confusion == ((0, 0, 0), (1, 0, 0), (0, 0, 1))
    assert [t.query_id for t in result.per_topic] == ["q1", "q2"]
    assert result.per_topic[1].n == 0
    assert result.samples is not None
    assert (result.samples.n_documents, result.samples.n_disagreeing) == (2, 2)
    assert result.samples.share == 1.0
    # Effectiveness: d2's human label is "not asked"; d1's samples 1, 2, 2 vote 2.
    effectiveness = calibrate_frames(human, machine, aspect=EFFECTIVENESS)
    assert effectiveness.n == 1
    assert effectiveness.confusion[3][2] == 1
    binary = calibrate_frames(human, machine, aspect=BINARY)
    # Samples are binarised before the vote: d1 (1, 1, 1) -> 1; d2 (0, 1) ties -> 0.
    assert binary.confusion == ((0, 0), (1, 1))
    assert (binary.samples.n_documents, binary.samples.n_disagreeing) == (2, 1)
    json.dumps(binary.to_json())


def test_one_sample_each_has_no_sample_disagreement():
    human = judgments([("amy", "q1", "d1", 1, True, 1)])
    machine = judgments([("m", "q1", "d1", 1, False, 1)])
    result = calibrate_frames(human, machine, aspect=GRADED)
    assert result.samples is None
    assert result.to_json()["samples"] is None
    assert math.isclose(result.observed_agreement.value, 1.0)


def test_empty_frames():
    empty = judgments([])
    assert calibrate_frames(empty, empty, aspect=GRADED).n == 0
    human = judgments([("amy", "q1", "d1", 1, True, 1)])
    result = calibrate_frames(human, empty, aspect=GRADED)
    assert result.n == 0
    assert result.per_topic[0].kappa.plain.undefined_reason == "no items in common"


def test_per_topic_rows_follow_the_campaigns_topic_order():
    result = calibrate_labels(
        [0, 1, 1, 0], [0, 1, 0, 0], aspect=GRADED, topics=["10", "10", "2", "2"]
    )
    assert [t.query_id for t in result.per_topic] == ["2", "10"]
