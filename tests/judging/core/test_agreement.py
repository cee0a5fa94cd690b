"""Agreement statistics, checked against scikit-learn, statsmodels and krippendorff."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from dataclasses import replace

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sklearn_confusion_matrix
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from judging.core import agreement
from judging.core.agreement import (
    DEFAULT_ASPECTS,
    Agreement,
    Aspect,
    FlagRule,
    Statistic,
    aspects_for_schema,
)

RELEVANCE, RELEVANCE_BINARY, EFFECTIVENESS, CREDIBILITY = DEFAULT_ASPECTS
COLUMNS = ["assessor", "query_id", "doc_id", "relevance", "effectiveness", "credibility"]


def make_labels(rows: list[tuple]) -> pd.DataFrame:
    """Labels from (assessor, query_id, doc_id, relevance[, effectiveness, credibility])."""
    padded = [row if len(row) == 6 else (*row, -1, -1) for row in rows]
    return pd.DataFrame(padded, columns=COLUMNS)


def make_random_labels(
    seed: int, *, n_topics: int = 3, n_docs: int = 30, n_assessors: int = 4, p_judge: float = 0.7
) -> pd.DataFrame:
    """Correlated random labels: a latent grade per item plus per-assessor noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for topic in range(n_topics):
        for doc in range(n_docs):
            truth = rng.integers(0, 3)
            for assessor in range(n_assessors):
                if rng.random() > p_judge:
                    continue
                relevance = int(np.clip(truth + rng.integers(-1, 2) * (rng.random() < 0.4), 0, 2))
                effectiveness = int(rng.integers(0, 4)) if relevance else -1
                credibility = int(rng.integers(0, 2)) if relevance else -1
                if relevance and rng.random() < 0.1:
                    effectiveness = -2  # should have been judged and was not
                rows.append(
                    (f"a{assessor}", str(topic), f"d{doc}", relevance, effectiveness, credibility)
                )
    return make_labels(rows)


def aspect_values(labels: pd.DataFrame, aspect: Aspect) -> pd.Series:
    """Reference reading of an aspect: NaN for negative codes, binarised if asked."""
    raw = labels[aspect.column].astype(float).where(labels[aspect.column] >= 0)
    if aspect.binarise_at is not None:
        return (raw >= aspect.binarise_at).astype(float).where(raw.notna())
    return raw


def common_items(labels: pd.DataFrame, aspect: Aspect, a: str, b: str, topic: str | None):
    """Reference: both assessors' values on the items both rated (of a topic, or all)."""
    frame = labels.assign(value=aspect_values(labels, aspect)).dropna(subset=["value"])
    if topic is not None:
        frame = frame[frame.query_id == topic]
    merged = frame[frame.assessor == a].merge(
        frame[frame.assessor == b], on=["query_id", "doc_id"], suffixes=("_a", "_b")
    )
    return merged.value_a.astype(int).to_numpy(), merged.value_b.astype(int).to_numpy()


def reliability_matrix(labels: pd.DataFrame, aspect: Aspect, topic: str | None) -> np.ndarray:
    """Reference: assessors x items matrix, NaN where an assessor gave no value."""
    frame = labels.assign(value=aspect_values(labels, aspect))
    if topic is not None:
        frame = frame[frame.query_id == topic]
    wide = frame.pivot_table(
        index="assessor", columns=["query_id", "doc_id"], values="value", dropna=False
    )
    return wide.to_numpy(dtype=float)


def row(frame: pd.DataFrame, **keys) -> pd.Series:
    """The single row matching keys (query_id=None selects the campaign row)."""
    mask = np.ones(len(frame), dtype=bool)
    for column, value in keys.items():
        mask &= frame[column].isna() if value is None else frame[column] == value
    matched = frame[mask]
    assert len(matched) == 1, keys
    return matched.iloc[0]


# --------------------------------------------------------------------------
# Pairwise statistics


def test_observed_and_chance_agreement_match_hand_computation():
    a, b = [1, 1, 1, 0], [1, 1, 0, 0]
    # P(A) = 3/4; p_a = (1/4, 3/4), p_b = (1/2, 1/2), P(E) = 1/8 + 3/8 = 1/2.
    assert agreement.observed_agreement(a, b).value == pytest.approx(0.75)
    assert agreement.chance_agreement(a, b, values=(0, 1)).value == pytest.approx(0.5)
    # kappa = (3/4 - 1/2) / (1 - 1/2)
    assert agreement.cohen_kappa(a, b, values=(0, 1)).value == pytest.approx(0.5)


def test_chance_agreement_ignores_unused_schema_categories():
    a, b = [0, 2, 2], [0, 2, 0]
    # p_a = (1/3, 0, 2/3, 0), p_b = (2/3, 0, 1/3, 0): P(E) = 2/9 + 2/9.
    chance = agreement.chance_agreement(a, b, values=(0, 1, 2, 3))
    assert chance.value == pytest.approx(4 / 9)
    assert chance.n_items == 3


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_equals_sklearn_with_schema_labels(weights):
    rng = np.random.default_rng(7)
    for _ in range(20):
        a = rng.integers(0, 3, size=25)  # category 3 of the schema is never used
        b = np.clip(a + rng.integers(-1, 2, size=25), 0, 2)
        expected = cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights=weights)
        result = agreement.cohen_kappa(a, b, values=(0, 1, 2, 3), weights=weights)
        assert result.value == pytest.approx(expected)
        assert result.n_items == 25


def test_cohen_kappa_weights_follow_schema_values_not_observed_ones():
    # Category 2 is never used: with the schema 0..3, 1 and 3 are two steps
    # apart for the linear weights; with the labels inferred, one step.
    a, b = [3, 1, 1, 0, 0, 0], [0, 0, 0, 3, 1, 3]
    with_schema = agreement.cohen_kappa(a, b, values=(0, 1, 2, 3), weights="linear").value
    assert with_schema == pytest.approx(-0.5652173913043479)
    assert with_schema == pytest.approx(
        cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights="linear")
    )
    assert cohen_kappa_score(a, b, weights="linear") == pytest.approx(-0.6875)


@given(
    pairs=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), max_size=12),
    weights=st.sampled_from([None, "linear", "quadratic"]),
)
@settings(max_examples=150, deadline=None)
def test_cohen_kappa_equals_sklearn_or_says_why_not(pairs, weights):
    a = np.array([p[0] for p in pairs], dtype=int)
    b = np.array([p[1] for p in pairs], dtype=int)
    result = agreement.cohen_kappa(a, b, values=(0, 1, 2), weights=weights)
    if not pairs:
        assert result.undefined_reason == "no items in common"
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        expected = cohen_kappa_score(a, b, labels=[0, 1, 2], weights=weights)
    if np.isnan(expected):
        assert result.value is None
        assert "only category" in result.undefined_reason
    else:
        assert result.undefined_reason is None
        assert result.value == pytest.approx(expected)


@given(
    labels=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=60),
    weights=st.sampled_from([None, "linear", "quadratic"]),
)
@settings(max_examples=300, deadline=None)
def test_cohen_kappa_is_bit_identical_to_sklearn(labels, weights):
    # Computed from our confusion counts (sklearn is not imported at run time):
    # the same double, not merely a close one.
    a, b = (np.array(column) for column in zip(*labels, strict=True))
    result = agreement.cohen_kappa(a, b, values=(0, 1, 2, 3, 4, 5), weights=weights)
    if result.value is not None:
        expected = cohen_kappa_score(a, b, labels=[0, 1, 2, 3, 4, 5], weights=weights)
        assert result.value == expected


def test_cohen_kappa_is_undefined_without_common_items():
    result = agreement.cohen_kappa([], [], values=(0, 1, 2))
    assert result.value is None
    assert result.undefined_reason == "no items in common"
    assert result.n_items == 0


def test_cohen_kappa_is_undefined_when_both_use_one_category():
    result = agreement.cohen_kappa([1, 1, 1], [1, 1, 1], values=(0, 1, 2))
    assert not result.defined
    assert result.undefined_reason == "both assessors used only category 1; chance agreement is 1"
    assert agreement.observed_agreement([1, 1, 1], [1, 1, 1]).value == 1.0


def test_cohen_kappa_is_zero_when_each_uses_a_different_single_category():
    assert agreement.cohen_kappa([0, 0], [2, 2], values=(0, 1, 2)).value == 0.0


def test_labels_outside_the_schema_are_rejected():
    with pytest.raises(ValueError, match=r"labels \[5\] not in \[0, 1, 2\]"):
        agreement.cohen_kappa([0, 5], [0, 1], values=(0, 1, 2))


def test_voorhees_overlap_is_intersection_over_union_of_relevant_sets():
    a, b = [2, 1, 0, 0, 1], [1, 0, 0, 2, 1]
    # A = {0, 1, 4}, B = {0, 3, 4}: |A and B| = 2, |A or B| = 4.
    result = agreement.voorhees_overlap(a, b, relevant_from=1)
    assert result.value == pytest.approx(0.5)
    assert result.note == "|A|=3, |B|=3, |A and B|=2"
    assert agreement.voorhees_overlap(a, b, relevant_from=2).value == 0.0


def test_voorhees_overlap_is_undefined_when_nothing_is_relevant():
    assert agreement.voorhees_overlap([0, 0], [0, 0]).undefined_reason == (
        "neither assessor labelled any item relevant"
    )
    assert agreement.voorhees_overlap([], []).undefined_reason == "no items in common"


def test_confusion_counts_equal_sklearn_and_keep_unused_categories():
    a, b = [0, 0, 1, 1, 1], [0, 1, 1, 1, 0]
    counts = agreement.confusion_counts(a, b, values=(0, 1, 2))
    assert counts.shape == (3, 3)
    np.testing.assert_array_equal(counts, sklearn_confusion_matrix(a, b, labels=[0, 1, 2]))
    assert counts[2].sum() == 0
    assert counts[:, 2].sum() == 0


def test_confusion_matrix_of_a_pair_is_indexed_by_schema_values():
    labels = make_labels(
        [
            ("ann", "1", "d1", 0),
            ("bob", "1", "d1", 1),
            ("ann", "1", "d2", 1),
            ("bob", "1", "d2", 1),
            ("ann", "2", "d3", 0),
            ("bob", "2", "d3", 0),
            ("cat", "1", "d1", 2),
        ]
    )
    matrix = agreement.confusion_matrix(
        labels, aspect=RELEVANCE, assessor_a="bob", assessor_b="ann"
    )
    assert matrix.index.tolist() == [0, 1, 2]
    assert matrix.columns.tolist() == [0, 1, 2]
    assert (matrix.index.name, matrix.columns.name) == ("bob", "ann")
    # rows are bob's labels: bob 1 / ann 0 on d1, 1/1 on d2, 0/0 on d3.
    assert matrix.to_numpy().tolist() == [[1, 0, 0], [1, 1, 0], [0, 0, 0]]
    one_topic = agreement.confusion_matrix(
        labels, aspect=RELEVANCE, assessor_a="bob", assessor_b="ann", query_id="2"
    )
    assert one_topic.to_numpy().sum() == 1


# --------------------------------------------------------------------------
# Pairwise frames


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pairwise_agreement_equals_sklearn_per_topic_and_over_campaign(seed):
    labels = make_random_labels(seed, n_docs=15)
    pairs = agreement.pairwise_agreement(labels)
    kappas = pairs[pairs.statistic.str.startswith("cohen_kappa")].set_index("statistic")
    weights = {
        "cohen_kappa": None,
        "cohen_kappa_linear": "linear",
        "cohen_kappa_quadratic": "quadratic",
    }
    aspects = {aspect.name: aspect for aspect in DEFAULT_ASPECTS}
    keys = ["aspect", "scope", "query_id", "assessor_a", "assessor_b"]
    checked = 0
    for (name, scope, topic, first, second), results in kappas.groupby(keys, dropna=False):
        aspect = aspects[name]
        a, b = common_items(labels, aspect, first, second, None if scope == "campaign" else topic)
        assert (results.n_items == len(a)).all()
        for statistic, result in results.iterrows():
            if np.isnan(result.value):
                assert isinstance(result.undefined_reason, str)
                continue
            expected = cohen_kappa_score(
                a, b, labels=list(aspect.values), weights=weights[statistic]
            )
            assert result.value == pytest.approx(expected)
            checked += 1
    assert checked > 100


def test_pairwise_values_are_nan_exactly_where_a_reason_is_given():
    pairs = agreement.pairwise_agreement(make_random_labels(4, n_docs=6, p_judge=0.5))
    assert pairs.undefined_reason.notna().any()
    assert (pairs.value.isna() == pairs.undefined_reason.notna()).all()


def test_pairwise_agreement_covers_every_aspect_and_statistic():
    labels = make_labels([("ann", "1", "d1", 1, 2, 1), ("bob", "1", "d1", 2, 2, 0)])
    pairs = agreement.pairwise_agreement(labels)
    per_scope = pairs[pairs.scope == "topic"].groupby("aspect").statistic.apply(set)
    kappa_family = {
        "observed_agreement",
        "p_expected",
        "cohen_kappa",
        "cohen_kappa_linear",
        "cohen_kappa_quadratic",
    }
    assert per_scope["relevance"] == {*kappa_family, "voorhees_overlap"}
    assert per_scope["relevance_binary"] == kappa_family
    assert per_scope["effectiveness"] == kappa_family
    assert set(pairs.scope) == {"topic", "campaign"}


def test_campaign_scope_pools_items_of_all_topics():
    labels = make_labels(
        [
            ("ann", "1", "d1", 0),
            ("bob", "1", "d1", 0),
            ("ann", "1", "d2", 2),
            ("bob", "1", "d2", 1),
            ("ann", "2", "d1", 2),
            ("bob", "2", "d1", 2),
            ("ann", "2", "d3", 1),
            ("bob", "2", "d3", 1),
        ]
    )
    pairs = agreement.pairwise_agreement(labels, aspects=[RELEVANCE])
    campaign = row(pairs, scope="campaign", query_id=None, statistic="cohen_kappa")
    assert campaign.n_items == 4
    expected = cohen_kappa_score([0, 2, 2, 1], [0, 1, 2, 1], labels=[0, 1, 2])
    assert campaign.value == pytest.approx(expected)
    topic_1 = row(pairs, scope="topic", query_id="1", statistic="observed_agreement")
    assert topic_1.value == pytest.approx(0.5)


def test_missing_aspect_codes_are_left_out():
    labels = make_labels(
        [
            ("ann", "1", "d1", 1, 2, 1),
            ("bob", "1", "d1", 0, -1, -1),
            ("ann", "1", "d2", 2, -2, 0),
            ("bob", "1", "d2", 2, 3, 0),
            ("ann", "1", "d3", 1, 1, 1),
            ("bob", "1", "d3", 1, 1, 1),
        ]
    )
    pairs = agreement.pairwise_agreement(labels, aspects=[EFFECTIVENESS, CREDIBILITY])
    effectiveness = row(
        pairs, aspect="effectiveness", scope="topic", statistic="observed_agreement"
    )
    assert effectiveness.n_items == 1  # only d3: -1 and -2 are no value
    credibility = row(pairs, aspect="credibility", scope="topic", statistic="observed_agreement")
    assert credibility.n_items == 2


def test_an_aspect_neither_rated_on_common_items_is_undefined():
    labels = make_labels([("ann", "1", "d1", 0), ("bob", "1", "d1", 0)])
    pairs = agreement.pairwise_agreement(labels, aspects=[EFFECTIVENESS])
    kappa = row(pairs, scope="topic", statistic="cohen_kappa")
    assert np.isnan(kappa.value)
    assert kappa.undefined_reason == "no items in common"


def test_pairs_without_a_common_item_in_a_topic_are_not_listed_for_it():
    labels = make_labels(
        [("ann", "1", "d1", 1), ("bob", "1", "d2", 1), ("ann", "2", "d1", 1), ("bob", "2", "d1", 0)]
    )
    pairs = agreement.pairwise_agreement(labels, aspects=[RELEVANCE])
    assert set(pairs[pairs.scope == "topic"].query_id) == {"2"}


def test_relevance_binary_splits_at_relevant_from():
    labels = make_labels(
        [
            ("ann", "1", "d1", 1),
            ("bob", "1", "d1", 2),
            ("ann", "1", "d2", 0),
            ("bob", "1", "d2", 1),
            ("ann", "1", "d3", 2),
            ("bob", "1", "d3", 1),
        ]
    )
    binary_at_2 = replace(aspects_for_schema(relevant_from=2)[1], name="relevance_at_2")
    pairs = agreement.pairwise_agreement(labels, aspects=[RELEVANCE_BINARY, binary_at_2])
    topic = pairs[pairs.scope == "topic"].set_index(["aspect", "statistic"]).value
    # at 1: (1, 1), (0, 1), (1, 1); at 2: (0, 1), (0, 0), (1, 0)
    assert topic["relevance_binary", "observed_agreement"] == pytest.approx(2 / 3)
    assert topic["relevance_at_2", "observed_agreement"] == pytest.approx(1 / 3)


def test_voorhees_overlap_is_reported_on_graded_relevance_from_relevant_from():
    labels = make_labels(
        [
            ("ann", "1", "d1", 1),
            ("bob", "1", "d1", 2),
            ("ann", "1", "d2", 0),
            ("bob", "1", "d2", 1),
            ("ann", "1", "d3", 2),
            ("bob", "1", "d3", 1),
        ]
    )
    graded_at_2 = replace(aspects_for_schema(relevant_from=2)[0], name="relevance_at_2")
    pairs = agreement.pairwise_agreement(labels, aspects=[RELEVANCE, graded_at_2])
    overlap = pairs[(pairs.scope == "topic") & (pairs.statistic == "voorhees_overlap")]
    # relevant from 1: ann {d1, d3}, bob {d1, d2, d3}; from 2: ann {d3}, bob {d1}
    assert overlap.set_index("aspect").value.to_dict() == {
        "relevance": pytest.approx(2 / 3),
        "relevance_at_2": 0.0,
    }


def test_label_values_outside_the_schema_raise_with_the_row():
    labels = make_labels([("ann", "1", "d1", 3), ("bob", "1", "d1", 1)])
    with pytest.raises(ValueError, match=r"relevance values outside the schema \[0, 1, 2\]"):
        agreement.pairwise_agreement(labels)


def test_duplicate_labels_raise():
    labels = make_labels([("ann", "1", "d1", 1), ("ann", "1", "d1", 2)])
    with pytest.raises(ValueError, match="duplicate labels"):
        agreement.group_agreement(labels)


def test_missing_columns_raise():
    labels = make_labels([("ann", "1", "d1", 1)]).drop(columns="credibility")
    with pytest.raises(ValueError, match=r"lacks columns \['credibility'\]"):
        agreement.pairwise_agreement(labels)


def test_aspect_rejects_a_schema_with_one_value():
    with pytest.raises(ValueError, match="at least two distinct"):
        Aspect("relevance", "relevance", (1,))


def test_four_grade_schema_is_accepted():
    aspects = aspects_for_schema((0, 1, 2, 3), {})
    labels = make_labels([("ann", "1", "d1", 3), ("bob", "1", "d1", 2)])
    pairs = agreement.pairwise_agreement(labels, aspects=aspects)
    assert set(pairs.aspect) == {"relevance", "relevance_binary"}


# --------------------------------------------------------------------------
# Fleiss' kappa


@pytest.mark.parametrize("raters", [3, 4, 6])
def test_fleiss_kappa_equals_statsmodels(raters):
    rng = np.random.default_rng(raters)
    for _ in range(10):
        table = rng.multinomial(raters, [0.5, 0.3, 0.2], size=15)
        result = agreement.fleiss_kappa(table)
        assert result.value == pytest.approx(statsmodels_fleiss_kappa(table))
        assert result.n_items == 15
        assert result.note == f"{raters} ratings per item"


@given(
    table=st.lists(
        # four raters' categories per item, counted
        st.lists(st.integers(0, 2), min_size=4, max_size=4).map(
            lambda ratings: [ratings.count(c) for c in range(3)]
        ),
        min_size=1,
        max_size=10,
    )
)
@settings(max_examples=100, deadline=None)
def test_fleiss_kappa_equals_statsmodels_or_says_why_not(table):
    result = agreement.fleiss_kappa(table)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = statsmodels_fleiss_kappa(np.array(table))
    if np.isfinite(expected):
        assert result.value == pytest.approx(expected)
    else:
        assert result.undefined_reason == "only one category used; chance agreement is 1"


def test_fleiss_kappa_uses_the_items_with_the_most_common_rating_count():
    table = np.array(
        [[3, 0], [1, 2], [2, 1], [0, 3], [2, 2], [4, 0], [1, 1], [0, 1]]
    )  # 3 ratings: 4 items; 4 ratings: 2; 2 ratings: 1; 1 rating: 1
    result = agreement.fleiss_kappa(table)
    assert result.value == pytest.approx(statsmodels_fleiss_kappa(table[:4]))
    assert result.n_items == 4
    assert result.note == "3 ratings per item; 3 other items rated more than once left out"


def test_fleiss_kappa_breaks_a_tie_in_rating_counts_towards_more_ratings():
    table = np.array([[3, 0], [1, 2], [2, 2], [4, 0]])
    assert agreement.fleiss_kappa(table).value == pytest.approx(statsmodels_fleiss_kappa(table[2:]))


@given(
    raters=st.integers(2, 4),
    items=st.lists(st.lists(st.integers(0, 2), min_size=4, max_size=4), min_size=1, max_size=8),
)
@settings(max_examples=60, deadline=None)
def test_fleiss_kappa_with_the_same_number_of_ratings_on_every_item_is_statsmodels(raters, items):
    """Two ratings an item included: there it is Scott's pi, which statsmodels computes."""
    table = np.array([[ratings[:raters].count(c) for c in range(3)] for ratings in items])
    result = agreement.fleiss_kappa(table)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = statsmodels_fleiss_kappa(table)
    if np.isfinite(expected):
        assert result.value == pytest.approx(expected)
        assert result.n_items == len(items)
    else:
        assert result.undefined_reason == "only one category used; chance agreement is 1"


def test_fleiss_kappa_with_two_ratings_per_item_is_scotts_pi():
    # p(0) = 5/8, p(1) = 3/8: P(E) = 17/32; P(A) = (1 + 0 + 1 + 1) / 4: pi = 7/15.
    table = [[0, 2], [1, 1], [2, 0], [2, 0]]
    result = agreement.fleiss_kappa(table)
    assert result.value == pytest.approx(7 / 15)
    assert result.value == pytest.approx(statsmodels_fleiss_kappa(np.array(table)))
    assert result.note == "2 ratings per item (Scott's pi)"


def test_fleiss_kappa_prefers_items_rated_more_than_twice_and_uses_pairs_only_without_them():
    table = np.array([[2, 0], [1, 1], [0, 2], [3, 0], [1, 2], [1, 0]])
    result = agreement.fleiss_kappa(table)
    assert result.value == pytest.approx(statsmodels_fleiss_kappa(table[3:5]))
    assert result.note == "3 ratings per item; 3 other items rated more than once left out"


def test_fleiss_kappa_is_undefined_without_an_item_rated_twice():
    result = agreement.fleiss_kappa([[1, 0], [0, 1]])
    assert result.value is None
    assert result.undefined_reason == "no item rated by two or more assessors"


def test_fleiss_kappa_is_undefined_with_one_category():
    result = agreement.fleiss_kappa([[0, 3, 0], [0, 3, 0]])
    assert result.undefined_reason == "only one category used; chance agreement is 1"
    assert result.n_items == 2


def test_group_fleiss_kappa_matches_statsmodels_on_a_labels_frame():
    labels = make_random_labels(11, n_topics=2, n_docs=20, n_assessors=5, p_judge=0.75)
    groups = agreement.group_agreement(labels, aspects=[RELEVANCE])
    for topic in [None, "0", "1"]:
        frame = labels if topic is None else labels[labels.query_id == topic]
        counts = pd.crosstab([frame.query_id, frame.doc_id], frame.relevance).reindex(
            columns=[0, 1, 2], fill_value=0
        )
        per_item = counts.sum(axis=1)
        sizes = per_item[per_item > 2].value_counts()
        k = sizes[sizes == sizes.max()].index.max()
        expected = statsmodels_fleiss_kappa(counts[per_item == k].to_numpy())
        result = row(groups, query_id=topic, statistic="fleiss_kappa")
        assert result.value == pytest.approx(expected)
        assert result.n_items == (per_item == k).sum()


# --------------------------------------------------------------------------
# Krippendorff's alpha


@pytest.mark.parametrize("seed", [5, 6])
@pytest.mark.parametrize("aspect", DEFAULT_ASPECTS, ids=lambda a: a.name)
def test_alpha_equals_krippendorff_package_with_missing_ratings(seed, aspect):
    labels = make_random_labels(seed, n_assessors=5, p_judge=0.6)
    groups = agreement.group_agreement(labels, aspects=[aspect])
    for topic in [None, "0", "1", "2"]:
        matrix = reliability_matrix(labels, aspect, topic)
        for level in ("nominal", "ordinal"):
            expected = krippendorff.alpha(
                reliability_data=matrix,
                value_domain=list(aspect.values),
                level_of_measurement=level,
            )
            result = row(
                groups, aspect=aspect.name, query_id=topic, statistic=f"krippendorff_alpha_{level}"
            )
            assert result.value == pytest.approx(expected)


@given(
    ratings=st.dictionaries(
        keys=st.tuples(st.sampled_from(["ann", "bob", "cat"]), st.integers(0, 5)),
        values=st.integers(-1, 2),
        max_size=18,
    ),
    level=st.sampled_from(["nominal", "ordinal"]),
)
@settings(max_examples=100, deadline=None)
def test_alpha_equals_krippendorff_package_or_says_why_not(ratings, level):
    labels = make_labels([(a, "1", f"d{doc}", v) for (a, doc), v in ratings.items()])
    groups = agreement.group_agreement(labels, aspects=[RELEVANCE])
    result = row(groups, query_id=None, statistic=f"krippendorff_alpha_{level}")
    if not isinstance(result.undefined_reason, str):
        matrix = reliability_matrix(labels, RELEVANCE, None)
        expected = krippendorff.alpha(
            reliability_data=matrix, value_domain=[0, 1, 2], level_of_measurement=level
        )
        assert result.value == pytest.approx(expected)
    else:
        assert np.isnan(result.value)
        assert result.undefined_reason in {
            "no item rated by two or more assessors",
            "only one category used; expected disagreement is 0",
        }


def test_alpha_is_undefined_when_no_item_has_two_ratings():
    result = agreement.krippendorff_alpha([[1, 0, 0], [0, 0, 1]], values=(0, 1, 2), level="nominal")
    assert result.undefined_reason == "no item rated by two or more assessors"
    assert result.n_items == 0


def test_alpha_is_undefined_with_one_category():
    result = agreement.krippendorff_alpha([[0, 2], [0, 3]], values=(0, 1), level="ordinal")
    assert result.undefined_reason == "only one category used; expected disagreement is 0"


def test_group_agreement_lists_every_topic_for_every_aspect():
    labels = make_labels([("ann", "1", "d1", 0), ("bob", "1", "d1", 0), ("ann", "2", "d2", 1)])
    groups = agreement.group_agreement(labels)
    effectiveness = groups[(groups.aspect == "effectiveness") & (groups.scope == "topic")]
    assert set(effectiveness.query_id) == {"1", "2"}
    assert (effectiveness.n_assessors == 0).all()
    assert effectiveness.undefined_reason.notna().all()
    relevance = row(
        groups, aspect="relevance", query_id="1", statistic="krippendorff_alpha_nominal"
    )
    assert relevance.n_assessors == 2


# --------------------------------------------------------------------------
# Worst first, flags, serialisation


def test_worst_first_orders_by_value_with_undefined_last():
    labels = make_labels(
        [
            ("ann", "1", "d1", 0),
            ("bob", "1", "d1", 2),
            ("ann", "1", "d2", 2),
            ("bob", "1", "d2", 0),
            ("ann", "2", "d1", 1),
            ("bob", "2", "d1", 1),
            ("ann", "3", "d1", 1),
            ("bob", "3", "d1", 1),
            ("ann", "3", "d2", 0),
            ("bob", "3", "d2", 0),
        ]
    )
    pairs = agreement.pairwise_agreement(labels, aspects=[RELEVANCE])
    ranked = agreement.worst_first(
        pairs[pairs.scope == "topic"], aspect="relevance", statistic="cohen_kappa"
    )
    assert ranked.query_id.tolist() == ["1", "3", "2"]
    assert ranked.value.iloc[:2].tolist() == pytest.approx([-1.0, 1.0])
    assert np.isnan(ranked.value.iloc[2])


def make_flag_labels(seed: int) -> pd.DataFrame:
    """ann, bob, cat agree closely; dan labels at random."""
    rng = np.random.default_rng(seed)
    rows = []
    for doc in range(40):
        truth = int(rng.integers(0, 3))
        for assessor in ("ann", "bob", "cat"):
            noisy = truth if rng.random() < 0.9 else int(rng.integers(0, 3))
            rows.append((assessor, "1", f"d{doc}", noisy))
        rows.append(("dan", "1", f"d{doc}", int(rng.integers(0, 3))))
    return make_labels(rows)


def test_assessor_agreement_flags_the_assessor_who_disagrees_with_the_others():
    pairs = agreement.pairwise_agreement(make_flag_labels(3), aspects=[RELEVANCE])
    table = agreement.assessor_agreement(pairs)
    assert list(table.columns) == list(agreement.ASSESSOR_COLUMNS)
    assert table.assessor.iloc[0] == "dan"  # lowest mean first
    assert table.set_index("assessor").flagged.to_dict() == {
        "dan": True,
        "ann": False,
        "bob": False,
        "cat": False,
    }
    dan = table.iloc[0]
    assert dan.n_pairs == 3
    assert dan.n_items == 120
    assert dan.flag_reason == "mean cohen_kappa below 0.4"


def test_assessor_agreement_flags_a_drop_below_the_others_median():
    pairs = agreement.pairwise_agreement(make_flag_labels(3), aspects=[RELEVANCE])
    lenient = FlagRule(min_value=-1.0, max_below_median=0.2)
    table = agreement.assessor_agreement(pairs, rule=lenient).set_index("assessor")
    assert table.flagged.to_dict() == {"dan": True, "ann": False, "bob": False, "cat": False}
    assert table.flag_reason["dan"] == "mean cohen_kappa more than 0.2 below the others' median"
    others = table.mean_value.drop("dan")
    assert table.median_of_others["dan"] == pytest.approx(others.median())


def test_assessor_agreement_ignores_pairs_with_too_few_items():
    labels = make_labels(
        [("ann", "1", "d1", 0), ("bob", "1", "d1", 2), ("ann", "1", "d2", 2), ("bob", "1", "d2", 0)]
    )
    pairs = agreement.pairwise_agreement(labels, aspects=[RELEVANCE])
    table = agreement.assessor_agreement(pairs, rule=FlagRule(min_items=3))
    assert table.mean_value.isna().all()
    assert not table.flagged.any()
    assert (
        table.undefined_reason.tolist()
        == ["no pair with a defined cohen_kappa on at least 3 common items"] * 2
    )
    flagged = agreement.assessor_agreement(pairs, rule=FlagRule(min_items=2))
    assert flagged.flagged.all()  # kappa -1 with 2 items


def test_agreement_to_dict_is_plain():
    result = agreement.cohen_kappa([], [], values=(0, 1))
    assert type(result.to_dict()["statistic"]) is str
    assert result.to_dict() == {
        "statistic": "cohen_kappa",
        "value": None,
        "n_items": 0,
        "undefined_reason": "no items in common",
        "note": None,
    }
    assert Agreement.undefined("x", 2, "why").n_items == 2


def test_agreement_summary_is_json_without_nan():
    labels = make_random_labels(9, n_docs=8, p_judge=0.5)
    pairs = agreement.pairwise_agreement(labels)
    groups = agreement.group_agreement(labels)
    summary = agreement.agreement_summary(pairs, groups)
    text = json.dumps(summary, allow_nan=False)
    decoded = json.loads(text)
    assert {r["scope"] for r in decoded["pairs"]} == {"campaign"}
    assert {r["aspect"] for r in decoded["groups"]} == {a.name for a in DEFAULT_ASPECTS}
    assert any(r["value"] is None and r["undefined_reason"] for r in decoded["pairs"])
    json.dumps([a.to_dict() for a in DEFAULT_ASPECTS], allow_nan=False)
    json.dumps(FlagRule().to_dict())


def test_statistic_names_are_stable():
    assert [s.value for s in Statistic] == [
        "observed_agreement",
        "p_expected",
        "cohen_kappa",
        "cohen_kappa_linear",
        "cohen_kappa_quadratic",
        "voorhees_overlap",
        "fleiss_kappa",
        "krippendorff_alpha_nominal",
        "krippendorff_alpha_ordinal",
    ]


def test_the_core_never_imports_scikit_learn_and_krippendorff_only_to_compute():
    """Commands and pages start fast (importing sklearn takes ~1 s): kappa is
    computed without it, krippendorff is imported when alpha is asked for."""
    code = (
        "import sys, judging.core.agreement as a; "
        "assert not {'sklearn', 'krippendorff'} & set(sys.modules); "
        "a.cohen_kappa([0, 1], [0, 1], values=(0, 1)); "
        "assert 'sklearn' not in sys.modules; "
        "a.krippendorff_alpha([[2, 0], [1, 1]], values=(0, 1), level='nominal'); "
        "assert 'krippendorff' in sys.modules"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
