"""Final-label policy and the disagreement finder."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judging.core.labels import (
    DEFAULT_POLICY,
    LabelPolicy,
    Step,
    final_labels,
    find_disagreements,
)

JUDGMENT_COLUMNS = [
    "assessor",
    "query_id",
    "doc_id",
    "relevance",
    "effectiveness",
    "credibility",
    "is_primary",
]
ADJUDICATION_COLUMNS = ["query_id", "doc_id", "relevance", "effectiveness", "credibility"]


def make_judgments(rows: list[tuple]) -> pd.DataFrame:
    """Judgments from (assessor, query_id, doc_id, relevance, effectiveness, credibility[, is_primary])."""
    return pd.DataFrame(
        [row if len(row) == 7 else (*row, False) for row in rows], columns=JUDGMENT_COLUMNS
    )


def make_adjudications(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=ADJUDICATION_COLUMNS)


def label_of(labels: pd.DataFrame, query_id: str, doc_id: str) -> dict:
    matched = labels[(labels.query_id == query_id) & (labels.doc_id == doc_id)]
    assert len(matched) == 1
    return matched.iloc[0].to_dict()


def labels_for(rows, adjudications=None, **kwargs) -> dict:
    """Final label of item (1, d1) given judgments rows of that item."""
    labels = final_labels(make_judgments(rows), adjudications, **kwargs)
    return label_of(labels, "1", "d1")


# --------------------------------------------------------------------------
# Each step


def test_adjudication_comes_first_by_default():
    label = labels_for(
        [("ann", "1", "d1", 2, 3, 1, True), ("bob", "1", "d1", 0, -1, -1)],
        make_adjudications([("1", "d1", 1, 2, 0)]),
    )
    assert (label["relevance"], label["effectiveness"], label["credibility"]) == (1, 2, 0)
    assert label["provenance"] == "adjudicated"
    assert label["decided_by"] == ()  # the frame does not say who
    assert label["assessors"] == ("ann", "bob")
    assert label["n_judgments"] == 2


def test_an_adjudicated_label_says_who_decided_it_when_and_why():
    adjudications = make_adjudications([("1", "d1", 1, 2, 0), ("1", "d2", 0, -1, -1)]).assign(
        decided_by=["olivia", None],
        decided_at=["2024-05-01T10:00:00+00:00", "2024-05-02T09:30:00+00:00"],
        reason=["partly on topic", ""],
    )
    judgments = make_judgments([("ann", "1", "d1", 2, 3, 1), ("ann", "1", "d3", 1, 1, 1)])
    labels = final_labels(judgments, adjudications)
    adjudicated = label_of(labels, "1", "d1")
    assert adjudicated["decided_by"] == ("olivia",)
    assert adjudicated["decided_at"] == "2024-05-01T10:00:00+00:00"
    assert adjudicated["reason"] == "partly on topic"
    assert label_of(labels, "1", "d2")["decided_by"] == ()  # the adjudicator's account is gone
    judged = label_of(labels, "1", "d3")
    assert (judged["decided_by"], judged["decided_at"], judged["reason"]) == (("ann",), "", "")


def test_primary_judgment_gives_relevance_and_aspects():
    label = labels_for(
        [
            ("ann", "1", "d1", 1, 0, 0, True),
            ("bob", "1", "d1", 2, 3, 1),
            ("cat", "1", "d1", 2, 3, 1),
        ]
    )
    assert (label["relevance"], label["effectiveness"], label["credibility"]) == (1, 0, 0)
    assert label["provenance"] == "primary"
    assert label["decided_by"] == ("ann",)


def test_each_item_takes_its_own_primary_judgment():
    labels = final_labels(
        make_judgments(
            [
                ("ann", "1", "d1", 1, 0, 0, True),
                ("bob", "1", "d1", 2, 3, 1),
                ("bob", "2", "d2", 0, -1, -1, True),
                ("ann", "2", "d2", 2, 1, 1),
            ]
        )
    )
    assert labels.relevance.tolist() == [1, 0]
    assert labels.decided_by.tolist() == [("ann",), ("bob",)]
    assert labels.provenance.tolist() == ["primary", "primary"]


def test_majority_applies_when_the_primary_did_not_judge_the_item():
    label = labels_for(
        [
            ("ann", "1", "d1", 1, 2, 1),
            ("bob", "1", "d1", 1, 3, 0),
            ("cat", "1", "d1", 2, 1, 1),
        ]
    )
    assert label["relevance"] == 1
    assert label["provenance"] == "majority"
    assert label["decided_by"] == ("ann", "bob")
    # aspects voted among ann and bob only: both ties, so the higher value
    assert (label["effectiveness"], label["credibility"]) == (3, 1)


def test_majority_aspects_take_the_most_frequent_value_among_agreeing_judgments():
    label = labels_for(
        [
            ("ann", "1", "d1", 2, 1, 0),
            ("bob", "1", "d1", 2, 1, 0),
            ("cat", "1", "d1", 2, 3, 1),
            ("dan", "1", "d1", 1, 3, 1),
            ("eve", "1", "d1", 1, 3, 1),
        ]
    )
    assert label["relevance"] == 2  # 3 votes against 2
    assert (label["effectiveness"], label["credibility"]) == (1, 0)


def test_majority_is_a_plurality_not_an_absolute_majority():
    label = labels_for(
        [
            ("ann", "1", "d1", 2, 1, 1),
            ("bob", "1", "d1", 2, 1, 1),
            ("cat", "1", "d1", 1, 1, 1),
            ("dan", "1", "d1", 0, -1, -1),
        ]
    )
    assert (label["relevance"], label["provenance"]) == (2, "majority")


def test_a_majority_tie_falls_through_to_maximum():
    label = labels_for(
        [
            ("ann", "1", "d1", 0, -1, -1),
            ("bob", "1", "d1", 0, -1, -1),
            ("cat", "1", "d1", 2, 3, 0),
            ("dan", "1", "d1", 2, 2, 1),
        ]
    )
    assert label["relevance"] == 2
    assert label["provenance"] == "maximum"
    assert label["decided_by"] == ("cat", "dan")
    assert (label["effectiveness"], label["credibility"]) == (3, 1)


def test_maximum_ignores_missing_aspect_values_in_the_vote():
    label = labels_for([("ann", "1", "d1", 1, -2, 1), ("bob", "1", "d1", 0, -1, -1)])
    assert label["relevance"] == 1
    assert label["provenance"] == "maximum"
    assert label["effectiveness"] == -2  # nobody gave one
    assert label["credibility"] == 1


def test_a_single_judgment_has_provenance_single():
    labels = final_labels(
        make_judgments([("ann", "1", "d1", 2, 3, 1, True), ("bob", "1", "d2", 1, 2, 0)])
    )
    assert labels.provenance.tolist() == ["single", "single"]
    assert labels.decided_by.tolist() == [("ann",), ("bob",)]
    assert labels.relevance.tolist() == [2, 1]


def test_an_adjudicated_single_judgment_stays_adjudicated():
    label = labels_for(
        [("ann", "1", "d1", 2, 3, 1, True)], make_adjudications([("1", "d1", 0, -1, -1)])
    )
    assert (label["relevance"], label["provenance"]) == (0, "adjudicated")


def test_an_adjudication_without_judgments_gives_a_label():
    labels = final_labels(
        make_judgments([("ann", "1", "d1", 1, 1, 1)]),
        make_adjudications([("2", "d9", 2, 3, 1)]),
    )
    label = label_of(labels, "2", "d9")
    assert (label["relevance"], label["provenance"], label["n_judgments"]) == (2, "adjudicated", 0)
    assert label["assessors"] == ()


def test_no_judgments_give_no_labels():
    labels = final_labels(make_judgments([]))
    assert labels.empty
    assert list(labels.columns)[:3] == ["query_id", "doc_id", "relevance"]
    assert find_disagreements(make_judgments([])).empty


# --------------------------------------------------------------------------
# Aspect codes


def test_aspects_of_a_non_relevant_label_are_minus_one():
    label = labels_for(
        [("ann", "1", "d1", 1, 2, 1)],
        make_adjudications([("1", "d1", 0, 2, 1)]),  # stray aspect values are dropped
    )
    assert (label["relevance"], label["effectiveness"], label["credibility"]) == (0, -1, -1)


def test_aspects_missing_from_a_relevant_label_are_minus_two():
    adjudications = pd.DataFrame([("1", "d1", 2)], columns=["query_id", "doc_id", "relevance"])
    label = labels_for([("ann", "1", "d1", 1, 2, 1)], adjudications)
    assert (label["relevance"], label["effectiveness"], label["credibility"]) == (2, -2, -2)


def test_binary_schema_without_aspects():
    judgments = make_judgments([("ann", "1", "d1", 1, 0, 0), ("bob", "1", "d1", 0, 0, 0)])
    labels = final_labels(judgments.drop(columns=["effectiveness", "credibility"]), aspects=())
    assert list(labels.columns) == [
        "query_id",
        "doc_id",
        "relevance",
        "provenance",
        "n_judgments",
        "assessors",
        "decided_by",
        "decided_at",
        "reason",
    ]
    assert labels.relevance.tolist() == [1]


def test_final_labels_are_sorted_and_typed():
    labels = final_labels(
        make_judgments(
            [
                ("ann", "2", "d1", 1, 2, 1),
                ("ann", "1", "d2", 0, -1, -1),
                ("ann", "1", "d1", 2, 1, 0),
            ]
        )
    )
    assert list(zip(labels.query_id, labels.doc_id, strict=True)) == [
        ("1", "d1"),
        ("1", "d2"),
        ("2", "d1"),
    ]
    assert labels.relevance.dtype == "int64"
    assert labels.effectiveness.dtype == "int64"


# --------------------------------------------------------------------------
# Policies


def test_custom_policy_can_skip_adjudication_and_primary():
    rows = [
        ("ann", "1", "d1", 0, -1, -1, True),
        ("bob", "1", "d1", 2, 3, 1),
        ("cat", "1", "d1", 2, 2, 1),
    ]
    adjudications = make_adjudications([("1", "d1", 1, 1, 1)])
    label = labels_for(rows, adjudications, policy=LabelPolicy(("majority", "maximum")))
    assert (label["relevance"], label["provenance"]) == (2, "majority")


def test_custom_policy_order_prefers_primary_over_adjudication():
    rows = [("ann", "1", "d1", 0, -1, -1, True), ("bob", "1", "d1", 2, 3, 1)]
    adjudications = make_adjudications([("1", "d1", 1, 1, 1)])
    policy = LabelPolicy(("primary", "adjudicated", "majority", "maximum"))
    label = labels_for(rows, adjudications, policy=policy)
    assert (label["relevance"], label["provenance"]) == (0, "primary")


def test_maximum_only_policy():
    rows = [("ann", "1", "d1", 0, -1, -1, True), ("bob", "1", "d1", 1, 3, 1)]
    label = labels_for(rows, policy=LabelPolicy(("maximum",)))
    assert (label["relevance"], label["provenance"]) == (1, "maximum")


def test_default_policy_is_adjudicated_primary_majority_maximum():
    assert DEFAULT_POLICY.steps == (Step.ADJUDICATED, Step.PRIMARY, Step.MAJORITY, Step.MAXIMUM)


def test_policy_round_trips_through_json():
    policy = LabelPolicy(("primary", "majority", "maximum"))
    data = json.loads(json.dumps(policy.to_dict()))
    assert data == {"steps": ["primary", "majority", "maximum"]}
    assert LabelPolicy.from_dict(data) == policy


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        (("primary", "coin_flip", "maximum"), "'coin_flip' is not a valid Step"),
        (("primary", "primary", "maximum"), "listed twice"),
        (("primary", "majority"), "ends with 'maximum'"),
        (("maximum", "adjudicated"), "ends with 'maximum'"),
        ((), "ends with 'maximum'"),
    ],
)
def test_invalid_policies_are_rejected(steps, message):
    with pytest.raises(ValueError, match=message):
        LabelPolicy(steps)


# --------------------------------------------------------------------------
# Bad input


def test_two_judgments_by_one_assessor_are_rejected():
    rows = [("ann", "1", "d1", 1, 1, 1), ("ann", "1", "d1", 2, 1, 1)]
    with pytest.raises(ValueError, match="two judgments by one assessor of one item"):
        final_labels(make_judgments(rows))


def test_two_primary_judgments_of_one_item_are_rejected():
    rows = [("ann", "1", "d1", 1, 1, 1, True), ("bob", "1", "d1", 2, 1, 1, True)]
    with pytest.raises(ValueError, match="two primary judgments of one item"):
        final_labels(make_judgments(rows))


def test_two_adjudications_of_one_item_are_rejected():
    adjudications = make_adjudications([("1", "d1", 1, 1, 1), ("1", "d1", 2, 1, 1)])
    with pytest.raises(ValueError, match="two adjudications of one item"):
        final_labels(make_judgments([("ann", "1", "d1", 1, 1, 1)]), adjudications)


def test_negative_relevance_is_rejected():
    with pytest.raises(ValueError, match="relevance must be a value >= 0"):
        final_labels(make_judgments([("ann", "1", "d1", -1, 1, 1)]))


def test_missing_columns_are_rejected():
    judgments = make_judgments([("ann", "1", "d1", 1, 1, 1)]).drop(columns="is_primary")
    with pytest.raises(ValueError, match=r"judgments frame lacks columns \['is_primary'\]"):
        final_labels(judgments)


# --------------------------------------------------------------------------
# Disagreements


DISAGREEING = [
    # relevance line crossed, spread 2
    ("ann", "1", "d1", 0, -1, -1),
    ("bob", "1", "d1", 2, 3, 1),
    # grades differ on the relevant side, spread 1
    ("ann", "1", "d2", 1, 2, 1),
    ("bob", "1", "d2", 2, 2, 1),
    # same relevance, effectiveness differs
    ("ann", "1", "d3", 1, 2, 1),
    ("bob", "1", "d3", 1, 3, 1),
    # agreement; a missing aspect (-2) is not a difference
    ("ann", "2", "d4", 1, -2, 1),
    ("bob", "2", "d4", 1, 2, 1),
    # crossed, spread 1
    ("ann", "2", "d5", 1, 2, 0),
    ("bob", "2", "d5", 0, -1, -1),
    ("cat", "2", "d5", 1, 2, 0),
    # judged once
    ("ann", "2", "d6", 2, 3, 1),
]


def test_any_mode_lists_every_difference_worst_first():
    queue = find_disagreements(make_judgments(DISAGREEING))
    assert list(zip(queue.query_id, queue.doc_id, strict=True)) == [
        ("1", "d1"),
        ("2", "d5"),
        ("1", "d2"),
        ("1", "d3"),
    ]
    assert queue.disagrees_on.tolist() == [
        ("relevance",),
        ("relevance",),
        ("relevance",),
        ("effectiveness",),
    ]
    first = queue.iloc[0]
    assert first.assessors == ("ann", "bob")
    assert first.relevance_values == (0, 2)
    assert (first.spread, first.crosses_line, first.n_judgments) == (2, True, 2)
    assert queue.iloc[1].relevance_values == (1, 0, 1)


def test_any_mode_can_compare_relevance_only():
    queue = find_disagreements(make_judgments(DISAGREEING), aspects=("relevance",))
    assert set(queue.doc_id) == {"d1", "d2", "d5"}


def test_relevance_line_mode_lists_only_relevant_versus_not():
    queue = find_disagreements(make_judgments(DISAGREEING), mode="relevance_line")
    assert queue.doc_id.tolist() == ["d1", "d5"]
    assert queue.crosses_line.all()


def test_relevance_line_follows_relevant_from():
    queue = find_disagreements(make_judgments(DISAGREEING), mode="relevance_line", relevant_from=2)
    assert queue.doc_id.tolist() == ["d1", "d2"]


def test_adjudicated_items_leave_the_queue():
    adjudications = make_adjudications([("1", "d1", 1, 1, 1)])
    queue = find_disagreements(make_judgments(DISAGREEING), adjudications=adjudications)
    assert "d1" not in set(queue.doc_id)
    assert len(queue) == 3


def test_disagreements_need_no_primary_flag():
    judgments = make_judgments(DISAGREEING).drop(columns="is_primary")
    assert len(find_disagreements(judgments, aspects=("relevance",))) == 3


def test_relevance_line_mode_takes_no_aspects():
    with pytest.raises(ValueError, match="compares relevance only"):
        find_disagreements(
            make_judgments(DISAGREEING), mode="relevance_line", aspects=("effectiveness",)
        )


def test_unknown_mode_is_rejected():
    with pytest.raises(ValueError, match="mode must be 'any' or 'relevance_line'"):
        find_disagreements(make_judgments(DISAGREEING), mode="some")  # type: ignore[arg-type]


def test_unknown_aspect_is_rejected():
    with pytest.raises(ValueError, match=r"lacks columns \['usefulness'\]"):
        find_disagreements(make_judgments(DISAGREEING), aspects=("relevance", "usefulness"))
