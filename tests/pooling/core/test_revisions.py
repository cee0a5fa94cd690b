"""Re-planning a pool while it is judged (pure core): nothing judged is lost, queues
keep their order, and the new plan's inclusion probabilities are right."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from pooling.core.ranking import rank_runs
from pooling.core.revisions import REVISION_COLUMNS, Redraw, redraws, revise, sample_keeping_spec
from pooling.core.spec import PoolSpec, Stratum, parse_strata
from pooling.core.strategies import pool_from_ranked
from tests.pooling.generated_runs import random_runs, runs_from_text

RUNS = runs_from_text(
    "1 Q0 a 1 9 r\n1 Q0 b 2 8 r\n1 Q0 c 3 7 r\n1 Q0 d 4 6 r\n1 Q0 e 5 5 r\n"
    "2 Q0 v 1 9 r\n2 Q0 w 2 8 r\n2 Q0 x 3 7 r\n"
)


def as_current(pool: pd.DataFrame) -> pd.DataFrame:
    return pool.assign(retired=False, revision=1)[list(REVISION_COLUMNS)]


def judged(*pairs: str) -> pd.DataFrame:
    return pd.DataFrame([p.split("/") for p in pairs], columns=["query_id", "doc_id"])


def topic(frame: pd.DataFrame, query_id: str) -> pd.DataFrame:
    return frame[frame["query_id"] == query_id]


def plan(spec: PoolSpec, topics=("1",)) -> pd.DataFrame:
    pool = pool_from_ranked(rank_runs(RUNS), spec)
    return pool[pool["query_id"].isin(topics)]


def test_shrinking_a_topic_keeps_what_was_judged_and_the_queue_order():
    """The Decision-track cut: depth 4 to depth 2 for topic 1."""
    before = as_current(plan(PoolSpec(depth=4, order="docno")))  # a b c d, orders 1-4
    revision = revise(before, plan(PoolSpec(depth=2)), judged=judged("1/a", "1/c"), revision=2)
    rows = revision.entries.set_index("doc_id")
    assert rows.loc[["a", "b"], "order"].tolist() == [1, 2]  # their places are kept
    assert rows.loc[["a", "b"], "sampled"].all()
    # No longer pooled, judged (c) or not (d): retired, out of the queue, place kept.
    assert rows.loc[["c", "d"], "retired"].all()
    assert not rows.loc[["c", "d"], "sampled"].any()
    assert rows.loc[["c", "d"], "order"].tolist() == [3, 4]
    assert revision.summary.to_dict("records") == [
        {
            "query_id": "1",
            "to_judge_before": 4,
            "to_judge_after": 2,
            "leaving": 1,
            "joining": 0,
            "judged_kept": 2,
            "judged_out_of_sample": 1,
            "new_judgments": 0,
        }
    ]
    assert revision.cost == 0


def test_extending_a_topic_adds_documents_after_the_last_place():
    before = as_current(plan(PoolSpec(depth=2, order="docno")))
    revision = revise(before, plan(PoolSpec(depth=5, seed=3)), judged=judged("1/a"), revision=2)
    rows = revision.entries.set_index("doc_id")
    assert rows.loc[["a", "b"], "order"].tolist() == [1, 2]
    assert sorted(rows.loc[["c", "d", "e"], "order"]) == [3, 4, 5]
    assert (rows["revision"] == 2).all()
    assert revision.cost == 3
    assert revision.summary.loc[0, "joining"] == 3


def test_a_retired_entry_comes_back_when_the_plan_pools_it_again():
    before = as_current(plan(PoolSpec(depth=4, order="docno")))
    shrunk = revise(before, plan(PoolSpec(depth=2)), judged=judged("1/c"), revision=2)
    extended = revise(shrunk.entries, plan(PoolSpec(depth=4)), judged=judged("1/c"), revision=3)
    rows = extended.entries.set_index("doc_id")
    assert not rows["retired"].any()
    assert rows["sampled"].all()
    assert rows["order"].is_unique
    assert rows.loc[["a", "b"], "order"].tolist() == [1, 2]
    assert min(rows.loc[["c", "d"], "order"]) > 4  # places are never reused


def test_lowering_rates_keeps_a_subset_with_the_new_probabilities():
    runs = random_runs(11, runs=6, topics=2, docs=80, depth=40)
    ranked = rank_runs(runs)
    old_spec = PoolSpec(depth=3, strata=parse_strata("4-40:0.6"), seed=7)
    new_spec = PoolSpec(depth=3, strata=parse_strata("4-40:0.3"), seed=7)
    old = pool_from_ranked(ranked, old_spec)
    new = pool_from_ranked(ranked, new_spec)
    revision = revise(as_current(old), new, judged=None, revision=2)
    drawn_before = set(zip(*old[old["sampled"]][["query_id", "doc_id"]].T.values, strict=True))
    after = revision.entries
    drawn_after = set(zip(*after[after["sampled"]][["query_id", "doc_id"]].T.values, strict=True))
    assert drawn_after < drawn_before  # nested: shrinking only removes
    merged = after.merge(new, on=["query_id", "doc_id"], suffixes=("", "_new"))
    assert (merged["inclusion_probability"] == merged["inclusion_probability_new"]).all()
    assert (merged["sampled"] == merged["sampled_new"]).all()
    # Horvitz-Thompson: the drawn entries of each stratum, weighted by 1/p, count the stratum.
    for (_, _), stratum in after[~after["retired"]].groupby(["query_id", "stratum"]):
        drawn = stratum[stratum["sampled"]]
        assert (1 / drawn["inclusion_probability"]).sum() == pytest.approx(len(stratum))


def test_inclusion_probabilities_after_a_cut_match_the_draws_over_many_seeds():
    """Brute force: over many seeds, with the first half of each queue judged before
    the cut, each document ends in the sample as often as its stored probability says."""
    runs = random_runs(5, runs=4, topics=1, docs=30, depth=12)
    ranked = rank_runs(runs)
    seeds = 500
    in_sample: Counter = Counter()
    stored: dict[str, float] = {}
    for seed in range(seeds):
        old = pool_from_ranked(ranked, PoolSpec(strata=parse_strata("1-12:0.5"), seed=seed))
        queue = old[old["sampled"]].sort_values("order")
        done = queue.head(len(queue) // 2)[["query_id", "doc_id"]]
        new = pool_from_ranked(ranked, PoolSpec(strata=parse_strata("1-12:0.25"), seed=seed))
        after = revise(as_current(old), new, judged=done, revision=2).entries
        for doc, probability in after[after["sampled"]][["doc_id", "inclusion_probability"]].values:
            in_sample[doc] += 1
            stored[doc] = probability
    assert len(set(stored.values())) == 1
    probability = next(iter(stored.values()))
    for doc in stored:
        assert in_sample[doc] / seeds == pytest.approx(probability, abs=0.09), doc  # 4.5 sd


def spec(depth: int | None, strata: str) -> PoolSpec:
    return PoolSpec(depth=depth, strata=parse_strata(strata), seed=7)


def test_a_sampled_stratum_given_other_bounds_is_drawn_again():
    current = spec(10, "11-100:0.5")
    assert redraws(current, spec(10, "11-40:0.5")) == [
        Redraw(Stratum(11, 40, 0.5), (Stratum(11, 100, 0.5),))
    ]
    assert redraws(current, spec(20, "21-100:0.5")) == [
        Redraw(Stratum(21, 100, 0.5), (Stratum(11, 100, 0.5),))
    ]


def test_the_same_bounds_or_ranks_pooled_in_full_are_no_redraw():
    assert redraws(spec(10, "11-100:0.5"), spec(10, "11-100:0.25")) == []
    assert redraws(spec(10, "11-100:0.5"), spec(10, "")) == []  # a plain cut to depth 10
    assert redraws(spec(10, "11-100:0.5"), spec(10, "11-40:1.0")) == []  # in full
    assert redraws(spec(100, ""), spec(10, "11-40:0.5")) == []  # everything was drawn


def test_a_redraw_adds_documents_and_puts_judged_ones_out_of_the_sample():
    """Issue 23: 11-100:0.5 cut to 11-40:0.5 cost new judgments and judged documents."""
    runs = random_runs(3, runs=5, topics=3, docs=400, depth=100)
    ranked = rank_runs(runs)
    old = pool_from_ranked(ranked, spec(10, "11-100:0.5"))
    done = old[old["sampled"]].sort_values(["query_id", "order"]).groupby("query_id").head(30)
    cut = revise(
        as_current(old), pool_from_ranked(ranked, spec(10, "11-40:0.5")), judged=done, revision=2
    )
    assert cut.summary["new_judgments"].sum() > 0
    assert cut.summary["judged_out_of_sample"].sum() > 0
    keeping = sample_keeping_spec(
        spec(10, "11-100:0.5"), spec(10, "11-40:0.5"), cut.entries, as_current(old)
    )
    assert keeping is not None
    assert keeping.depth == 10
    [stratum] = keeping.strata
    assert (stratum.lo, stratum.hi) == (11, 100)  # the same bounds ...
    assert 0 < stratum.rate < 0.5  # ... at a lower rate
    # ... drawing about as many documents as the redraw, at most as many.
    drawn_by_cut = cut.entries[cut.entries["sampled"] & (cut.entries["best_rank"] > 10)]
    kept = revise(as_current(old), pool_from_ranked(ranked, keeping), judged=done, revision=2)
    drawn_kept = kept.entries[kept.entries["sampled"] & (kept.entries["best_rank"] > 10)]
    assert len(drawn_by_cut) * 0.9 <= len(drawn_kept) <= len(drawn_by_cut)
    assert kept.cost == 0  # nested: nothing new to judge


def test_no_sample_keeping_plan_is_offered_without_a_redraw_or_a_lower_rate():
    runs = random_runs(3, runs=5, topics=2, docs=400, depth=100)
    ranked = rank_runs(runs)
    old = as_current(pool_from_ranked(ranked, spec(10, "11-100:0.5")))
    rate_cut = pool_from_ranked(ranked, spec(10, "11-100:0.25"))
    plan_cut = revise(old, rate_cut, judged=None, revision=2).entries
    assert (
        sample_keeping_spec(spec(10, "11-100:0.5"), spec(10, "11-100:0.25"), plan_cut, old) is None
    )
    # A redraw that draws more than the current rate could: no lower rate to offer.
    denser = revise(old, pool_from_ranked(ranked, spec(10, "11-90:0.9")), judged=None, revision=2)
    assert redraws(spec(10, "11-100:0.5"), spec(10, "11-90:0.9"))
    assert (
        sample_keeping_spec(spec(10, "11-100:0.5"), spec(10, "11-90:0.9"), denser.entries, old)
        is None
    )
