"""The numpy-only agreement path (`judging.core.agreement_statistics`) equals the frame
path of `judging.core.agreement` that the agreement pages use."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judging.core import agreement
from judging.core.agreement_statistics import (
    FlagRule,
    PairValue,
    Statistic,
    aspects_for_schema,
    assessor_scores,
    campaign_pair_values,
)

GRADED, BINARY, EFFECTIVENESS, _ = aspects_for_schema()
LABEL = st.one_of(st.none(), st.sampled_from([-2, -1, 0, 1, 2]))


@st.composite
def labels(draw):
    """(assessor, query_id, doc_id, relevance, effectiveness) rows, one per assessor and item."""
    rows = []
    for topic in ("1", "2"):
        for doc in range(draw(st.integers(0, 8))):
            raters = draw(st.sets(st.sampled_from(["ann", "ben", "cat", "dan"]), max_size=4))
            for assessor in sorted(raters):
                effectiveness = draw(st.one_of(st.none(), st.integers(-2, 3)))
                rows.append((assessor, topic, f"d{doc}", draw(LABEL), effectiveness))
    return rows


@settings(max_examples=150, deadline=None)
@given(
    rows=labels(),
    aspect=st.sampled_from([GRADED, BINARY, EFFECTIVENESS]),
    statistic=st.sampled_from(
        [Statistic.COHEN_KAPPA, Statistic.COHEN_KAPPA_QUADRATIC, Statistic.P_OBSERVED]
    ),
)
def test_campaign_pairs_equal_the_frames_campaign_rows(rows, aspect, statistic):
    ratings = [
        (a, q, d, rel if aspect.column == "relevance" else eff) for a, q, d, rel, eff in rows
    ]
    light = campaign_pair_values(ratings, aspect, statistic)
    frame = pd.DataFrame(
        rows, columns=["assessor", "query_id", "doc_id", "relevance", "effectiveness"]
    )
    pairs = agreement.pairwise_agreement(frame, aspects=[aspect])
    chosen = pairs[(pairs.scope == "campaign") & (pairs.statistic == statistic)]
    expected = [
        (row.assessor_a, row.assessor_b, row.value, row.n_items)
        for row in chosen.itertuples(index=False)
    ]
    assert [(p.assessor_a, p.assessor_b, p.n_items) for p in light] == [
        (a, b, n) for a, b, _, n in expected
    ]
    for pair, (_, _, value, _) in zip(light, expected, strict=True):
        assert pair.value == pytest.approx(value, nan_ok=True, abs=1e-12)


def test_labels_outside_the_schema_are_refused():
    with pytest.raises(ValueError, match=r"relevance values \[7.0\] outside \[0, 1, 2\]"):
        campaign_pair_values([("ann", "1", "d", 7), ("ben", "1", "d", 1)], GRADED, "cohen_kappa")


def test_two_labels_of_one_assessor_for_one_item_are_refused():
    with pytest.raises(ValueError, match="two labels of 'ann'"):
        campaign_pair_values([("ann", "1", "d", 1), ("ann", "1", "d", 0)], GRADED, "cohen_kappa")


@st.composite
def pair_values(draw):
    names = ["ann", "ben", "cat", "dan", "eve"]
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if draw(st.booleans()):
                value = draw(st.one_of(st.just(math.nan), st.floats(-1, 1)))
                pairs.append(PairValue(a, b, value, draw(st.integers(0, 30))))
    return pairs


def _frame_oracle(pairs: list[PairValue], rule: FlagRule) -> pd.DataFrame:
    """The rule as pandas states it: mean over usable pairs, median of the others."""
    sides = pd.DataFrame(
        [(who, p.value, p.n_items) for p in pairs for who in (p.assessor_a, p.assessor_b)],
        columns=["assessor", "value", "n_items"],
    )
    usable = sides[sides.value.notna() & (sides.n_items >= rule.min_items)]
    means = usable.groupby("assessor").value.mean().reindex(sorted(sides.assessor.unique()))
    median = {who: means.drop(who).median() for who in means.index}
    flagged = {
        who: (means[who] < rule.min_value) or (means[who] < median[who] - rule.max_below_median)
        for who in means.index
    }
    return pd.DataFrame({"mean": means, "median": pd.Series(median), "flagged": flagged})


@settings(max_examples=200, deadline=None)
@given(pairs=pair_values(), min_value=st.floats(-1, 1), below=st.floats(0, 1))
def test_assessor_scores_follow_the_rule(pairs, min_value, below):
    rule = FlagRule(min_items=10, min_value=min_value, max_below_median=below)
    scores = assessor_scores(pairs, rule)
    oracle = _frame_oracle(pairs, rule)
    assert sorted(s.assessor for s in scores) == list(oracle.index)
    for score in scores:
        expected = oracle.loc[score.assessor]
        assert score.mean_value == pytest.approx(expected["mean"], nan_ok=True, abs=1e-12)
        assert score.median_of_others == pytest.approx(expected["median"], nan_ok=True, abs=1e-12)
        assert (score.flag_reason is not None) == bool(expected["flagged"])
        assert (score.undefined_reason is None) == (not math.isnan(score.mean_value))
    means = [s.mean_value for s in scores]
    defined = [m for m in means if not math.isnan(m)]
    assert means[: len(defined)] == sorted(defined)  # lowest first, undefined last
