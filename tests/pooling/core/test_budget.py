"""Budget tables (pure core): what-if, fitting a budget, per-run statistics."""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from pooling.core.budget import (
    fit_depth,
    fit_depth_per_topic,
    fit_scale,
    judged_share,
    pool_cost,
    run_contributions,
    run_overlap,
    whatif,
)
from pooling.core.ledger import BudgetState
from pooling.core.ranking import rank_runs
from pooling.core.spec import CDS_2014, PoolSpec, parse_strata
from pooling.core.strategies import build_pool
from tests.pooling.generated_runs import brute_force_ranks, random_runs, runs_from_text

SPEC = PoolSpec(depth=3, strata=parse_strata("4-15:0.5 16-40:0.2"), seed=4)


@pytest.fixture(scope="module")
def runs() -> pd.DataFrame:
    return random_runs(31, runs=6, topics=3, docs=120, depth=40)


@pytest.fixture(scope="module")
def judged(runs: pd.DataFrame) -> pd.DataFrame:
    """Every third distinct (topic, docno) of the runs, plus one not in any run."""
    pairs = runs[["query_id", "doc_id"]].drop_duplicates().sort_values(["query_id", "doc_id"])
    extra = pd.DataFrame({"query_id": ["1"], "doc_id": ["never-retrieved"]})
    return pd.concat([pairs.iloc[::3], extra], ignore_index=True)


def best_ranks(runs: pd.DataFrame) -> dict[tuple[str, str], int]:
    best: dict[tuple[str, str], int] = {}
    for (_, topic, doc), rank in brute_force_ranks(runs).items():
        best[topic, doc] = min(rank, best.get((topic, doc), rank))
    return best


def judged_set(judged: pd.DataFrame) -> set[tuple[str, str]]:
    return set(zip(judged["query_id"], judged["doc_id"], strict=True))


def needed_at(
    runs: pd.DataFrame, judged: pd.DataFrame, depth: int, topic: str | None = None
) -> int:
    done = judged_set(judged)
    return sum(
        1
        for (t, doc), rank in best_ranks(runs).items()
        if rank <= depth and (t, doc) not in done and topic in (None, t)
    )


# --------------------------------------------------------------------------
# What-if


def test_whatif_depth_rows_match_brute_force(runs, judged):
    table = whatif(rank_runs(runs, max_depth=40), depths=[1, 5, 40], judged=judged).per_topic
    best, done = best_ranks(runs), judged_set(judged)
    for row in table.itertuples(index=False):
        pool = {key for key, rank in best.items() if key[0] == row.query_id and rank <= row.depth}
        assert row.scheme == f"depth {row.depth}"
        assert (row.candidates, row.pool_size) == (len(pool), len(pool))
        assert row.judged == len(pool & done)
        assert row.needed == len(pool - done)
    assert len(table) == 3 * 3


def test_whatif_spec_rows_count_the_pool_the_spec_builds(runs, judged):
    table = whatif(rank_runs(runs, max_depth=40), depths=[], specs=[SPEC], judged=judged)
    pool = build_pool(runs, SPEC)
    done = judged_set(judged)
    for row in table.per_topic.itertuples(index=False):
        entries = pool[pool["query_id"] == row.query_id]
        sampled = set(
            zip(
                entries.loc[entries["sampled"], "query_id"],
                entries.loc[entries["sampled"], "doc_id"],
                strict=True,
            )
        )
        assert row.scheme == "1-3:1.0 4-15:0.5 16-40:0.2"
        assert pd.isna(row.depth)
        assert row.candidates == len(entries)
        assert row.pool_size == len(sampled)
        assert row.judged == len(sampled & done)
        assert row.needed == len(sampled - done)


def test_whatif_totals_sum_the_topics(runs, judged):
    result = whatif(rank_runs(runs, max_depth=40), depths=[10, 20], specs=[SPEC], judged=judged)
    summed = result.per_topic.groupby("scheme", sort=False)[["pool_size", "needed"]].sum()
    assert result.totals["scheme"].tolist() == [
        "depth 10",
        "depth 20",
        "1-3:1.0 4-15:0.5 16-40:0.2",
    ]
    assert result.totals.set_index("scheme")[["pool_size", "needed"]].equals(summed)
    assert result.totals.loc[0, "needed"] == needed_at(runs, judged, 10)


def test_whatif_needs_ranks_as_deep_as_asked(runs):
    with pytest.raises(ValueError, match="ranked only down to rank 10"):
        whatif(rank_runs(runs, max_depth=10), depths=[20])


def test_whatif_of_a_tiny_run_by_hand():
    runs = runs_from_text("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n")
    judged = pd.DataFrame({"query_id": ["1"], "doc_id": ["b"]})
    totals = whatif(rank_runs(runs), depths=[1, 2, 3], judged=judged).totals
    assert totals[["pool_size", "judged", "needed"]].values.tolist() == [
        [1, 0, 1],
        [2, 1, 1],
        [3, 1, 2],
    ]


# --------------------------------------------------------------------------
# Fitting a budget


def test_fit_depth_is_the_largest_depth_within_budget(runs, judged):
    ranked = rank_runs(runs, max_depth=40)
    for budget in (needed_at(runs, judged, 1), needed_at(runs, judged, 7), 100, 10_000):
        fit = fit_depth(ranked, budget, judged=judged)
        assert fit is not None
        assert fit.needed == needed_at(runs, judged, fit.depth) <= budget
        assert fit.depth == 40 or needed_at(runs, judged, fit.depth + 1) > budget


def test_fit_depth_exact_fit_uses_the_whole_budget(runs):
    ranked = rank_runs(runs, max_depth=40)
    no_judgments = pd.DataFrame({"query_id": [], "doc_id": []})
    budget = needed_at(runs, no_judgments, 9)
    fit = fit_depth(ranked, budget)
    assert fit is not None
    assert fit.needed == budget
    assert fit.pool_size == budget
    assert fit.depth >= 9


def test_fit_depth_with_a_budget_smaller_than_any_pool_is_none(runs):
    ranked = rank_runs(runs, max_depth=40)
    depth_one = len({key for key, rank in best_ranks(runs).items() if rank == 1})
    assert fit_depth(ranked, depth_one - 1) is None
    assert fit_depth(ranked, depth_one).depth >= 1
    assert fit_depth(ranked, 0) is None


def test_fit_depth_counts_already_judged_documents_as_free(runs):
    ranked = rank_runs(runs, max_depth=40)
    everything = pd.DataFrame(list(best_ranks(runs)), columns=["query_id", "doc_id"])
    fit = fit_depth(ranked, 0, judged=everything)
    assert fit is not None
    assert fit.depth == 40
    assert fit.needed == 0


def test_fit_depth_per_topic_matches_brute_force(runs, judged):
    ranked = rank_runs(runs, max_depth=40)
    budgets = {"1": 30, "2": needed_at(runs, judged, 4, topic="2"), "3": 0}
    table = fit_depth_per_topic(ranked, budgets, judged=judged).set_index("query_id")
    for topic, budget in budgets.items():
        depth = table.loc[topic, "depth"]
        if depth == 0:
            assert needed_at(runs, judged, 1, topic) > budget
            continue
        assert table.loc[topic, "needed"] == needed_at(runs, judged, depth, topic) <= budget
        assert depth == 40 or needed_at(runs, judged, depth + 1, topic) > budget
    assert table.loc["3", "depth"] == 0
    assert table.loc["2", "depth"] >= 4


def test_fit_scale_matches_the_pool_of_the_scaled_spec(runs, judged):
    ranked = rank_runs(runs, max_depth=40)
    for budget in (90, 150, 200):
        fit = fit_scale(ranked, SPEC, budget, judged=judged)
        assert fit is not None
        pool = build_pool(runs, fit.spec)
        sampled = pool[pool["sampled"]]
        done = judged_set(judged)
        needed = sum(
            1 for key in zip(sampled["query_id"], sampled["doc_id"], strict=True) if key not in done
        )
        assert (fit.pool_size, fit.needed) == (len(sampled), needed)
        assert fit.needed <= budget
        next_step = build_pool(runs, SPEC.scaled(round(fit.factor + 0.01, 9)))
        next_sampled = next_step[next_step["sampled"]]
        next_needed = sum(
            1
            for key in zip(next_sampled["query_id"], next_sampled["doc_id"], strict=True)
            if key not in done
        )
        assert next_needed > budget or fit.factor >= 1 / 0.2


def test_fit_scale_with_a_budget_below_the_smallest_pool_is_none(runs):
    ranked = rank_runs(runs, max_depth=40)
    depth_part = sum(1 for rank in best_ranks(runs).values() if rank <= 3)
    assert fit_scale(ranked, SPEC, depth_part) is None


def test_fit_scale_stops_where_every_rate_reaches_one(runs):
    fit = fit_scale(rank_runs(runs, max_depth=500), CDS_2014, 10**9)
    assert fit is not None
    assert fit.factor == 2.0
    assert all(stratum.rate == 1.0 for stratum in fit.spec.strata)


# --------------------------------------------------------------------------
# Per-run statistics


def brute_force_run_sets(runs: pd.DataFrame, depth: int) -> dict[str, set[tuple[str, str]]]:
    sets: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for (run, topic, doc), rank in brute_force_ranks(runs).items():
        if rank <= depth:
            sets[run].add((topic, doc))
    return sets


def test_run_contributions_match_brute_force(runs):
    table = run_contributions(rank_runs(runs, max_depth=40), depth=10).set_index("run_id")
    sets = brute_force_run_sets(runs, 10)
    for run, documents in sets.items():
        others = set().union(*(s for r, s in sets.items() if r != run))
        assert table.loc[run, "documents"] == len(documents)
        assert table.loc[run, "unique"] == len(documents - others)
    assert sorted(table.index) == sorted(sets)


def test_run_contributions_by_hand():
    runs = runs_from_text("1 Q0 a 1 2 r1\n1 Q0 b 2 1 r1\n", "1 Q0 a 1 2 r2\n1 Q0 c 2 1 r2\n")
    table = run_contributions(rank_runs(runs), depth=2)
    assert table.values.tolist() == [["r1", 2, 1], ["r2", 2, 1]]


def test_judged_share_matches_brute_force(runs, judged):
    table = judged_share(rank_runs(runs, max_depth=40), judged, ks=[25, 5])
    done = set(judged[["query_id", "doc_id"]].itertuples(index=False, name=None))
    assert table["k"].tolist() == [5, 25] * 6  # by run, k ascending
    for k in (5, 25):
        for run, documents in brute_force_run_sets(runs, k).items():
            row = table[(table["run_id"] == run) & (table["k"] == k)].iloc[0]
            assert row["documents"] == len(documents)
            assert row["judged"] == len(documents & done)
            topics = sorted({topic for topic, _ in documents})
            shares = [
                len({d for d in documents & done if d[0] == t})
                / len({d for d in documents if d[0] == t})
                for t in topics
            ]
            assert row["share"] == pytest.approx(sum(shares) / len(shares))


def test_judged_share_weighs_each_topic_the_same():
    """Topic 1 returns one judged document, topic 2 three unjudged: half of the
    topics' shares (0.5), not a quarter of the documents."""
    runs = runs_from_text("1 Q0 a 1 3 r1\n2 Q0 b 1 3 r1\n2 Q0 c 2 2 r1\n2 Q0 d 3 1 r1\n")
    judged = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"]})
    [row] = judged_share(rank_runs(runs), judged, ks=[3]).itertuples(index=False)
    assert (row.documents, row.judged, row.share) == (4, 1, 0.5)


def test_judged_share_with_nothing_judged_is_zero():
    runs = runs_from_text("1 Q0 a 1 2 r1\n1 Q0 b 2 1 r1\n")
    table = judged_share(rank_runs(runs), None, ks=[1, 2])
    assert table[["documents", "judged", "share"]].values.tolist() == [[1, 0, 0.0], [2, 0, 0.0]]
    with pytest.raises(ValueError, match="ranked only down to rank 2"):
        judged_share(rank_runs(runs, max_depth=2), None, ks=[3])


def test_run_overlap_matches_brute_force(runs):
    overlap = run_overlap(rank_runs(runs, max_depth=40), depth=10, chunk=50)
    sets = brute_force_run_sets(runs, 10)
    for a, b in combinations(sorted(sets), 2):
        shared = len(sets[a] & sets[b])
        assert overlap.shared.loc[a, b] == overlap.shared.loc[b, a] == shared
        assert overlap.jaccard.loc[a, b] == pytest.approx(shared / len(sets[a] | sets[b]))
    assert np.diag(overlap.jaccard.values).tolist() == [1.0] * len(sets)
    assert np.diag(overlap.shared.values).tolist() == [len(sets[r]) for r in sorted(sets)]


# --------------------------------------------------------------------------
# The budget against what is spent


def test_budget_state_compares_costs_with_what_is_left():
    state = BudgetState(budget=60, judgments=40, adjudications=4)
    assert (state.spent, state.remaining) == (44, 16)
    assert state.over_by(16) == 0
    assert state.over_by(73) == 57
    assert state.describe() == "budget 60: 44 spent, 16 left"
    uncounted = BudgetState(budget=60, judgments=40, adjudications=4, counts_adjudications=False)
    assert (uncounted.spent, uncounted.remaining) == (40, 20)


def test_an_overspent_budget_has_nothing_left_for_any_cost():
    state = BudgetState(budget=10, judgments=12)
    assert state.remaining == -2
    assert state.over_by(0) == 0
    assert state.over_by(3) == 3


def test_without_a_budget_nothing_is_over():
    state = BudgetState(budget=None, judgments=7)
    assert (state.remaining, state.over_by(10**6)) == (None, 0)
    assert state.describe() == "7 judgments made; no budget set"


def test_pool_cost_counts_sampled_entries_nobody_judged():
    entries = pd.DataFrame(
        {
            "query_id": ["1", "1", "1", "2"],
            "doc_id": ["a", "b", "c", "a"],
            "sampled": [True, True, False, True],
        }
    )
    judged = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["b", "b"]})
    assert pool_cost(entries, judged) == 2
    assert pool_cost(entries, None) == 3


def test_depths_far_past_the_runs_cost_what_the_runs_hold():
    """depth=1,000,000 used to allocate a histogram per depth asked: 36 TiB."""
    runs = random_runs(5, runs=3, topics=2, docs=40, depth=30)
    ranked = rank_runs(runs, max_depth=10**9)
    table = whatif(ranked, depths=[10, 30, 1_000_000, 10**9]).totals
    sizes = dict(zip(table["depth"].astype(int), table["pool_size"], strict=True))
    assert sizes[1_000_000] == sizes[10**9] == sizes[30]
    assert fit_depth(ranked, 10**12).depth == ranked.deepest_rank
