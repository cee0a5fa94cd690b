"""The pooling simulator's core: what it counts at each budget, the rankings judged
again by the judgments so far, the teams' documents, and active's estimate."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd
import pytest

from pooling.core.adaptive import ActiveSample
from scoring.core.evaluation import evaluate, evaluate_ranked
from scoring.core.measures.catalog import TREC
from scoring.core.measures.rankings import EvalOptions, Judgments, rank_and_judge
from scoring.core.pool_estimates import MapEstimator
from scoring.core.pool_simulation import Settings, SimulationError, simulate
from scoring.core.qrels import read_qrels
from tests.pooling.generated_runs import brute_force_ranks, random_runs
from workbench.core.run_files import read_run

MAP = TREC.select(["map"])[0]
# Topic 1: A ranks a (relevant), b, c (relevant); B ranks c, d (relevant), e.
# Topic 2: only B ranks x (relevant). f (relevant) is ranked by nobody.
QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n1 0 d 1\n1 0 f 1\n2 0 x 1\n2 0 y 0\n"
RUNS = {
    "A": "1 Q0 a 1 3 A\n1 Q0 b 2 2 A\n1 Q0 c 3 1 A\n",
    "B": "1 Q0 c 1 3 B\n1 Q0 d 2 2 B\n1 Q0 e 3 1 B\n2 Q0 x 1 2 B\n2 Q0 z 2 1 B\n",
    "C": "1 Q0 b 1 9 C\n1 Q0 a 2 8 C\n2 Q0 y 1 1 C\n",
}


def qrels() -> pd.DataFrame:
    return read_qrels(QRELS.encode())


def runs() -> list:
    return [read_run(text.encode(), name=tag).table for tag, text in RUNS.items()]


def settings(**changes) -> Settings:
    values = {"strategies": ("depth",), "budgets": (3, 100), "measure": MAP, "depth": None}
    return Settings(**(values | changes))


def test_each_budget_counts_judgments_relevant_found_and_their_share_of_the_qrels():
    simulation = simulate(qrels(), runs(), settings())
    assert (simulation.topics, simulation.relevant_total, simulation.relevant_candidates) == (
        2,
        5,
        4,
    )
    assert simulation.candidates.n_docs == 8  # a b c d e, x y z
    [result] = simulation.strategies
    first, last = result.budgets
    # depth, in turns: topic 1 by best rank then docno descending (c b a d e),
    # topic 2 likewise (y x z)
    assert [simulation.candidates.name_of(d) for d in result.order] == [
        ("1", "c"),
        ("2", "y"),
        ("1", "b"),
        ("2", "x"),
        ("1", "a"),
        ("2", "z"),
        ("1", "d"),
        ("1", "e"),
    ]
    assert result.found.tolist() == [1, 1, 1, 2, 3, 3, 4, 4]
    assert (first.budget, first.judged, first.relevant, first.recall) == (3, 3, 1, 1 / 5)
    # the candidates run out: 8 judgments, every relevant candidate found, not f
    assert (last.budget, last.judged, last.relevant, last.recall) == (100, 8, 4, 4 / 5)


def test_the_judgments_so_far_score_as_the_qrels_rows_judged_with_the_rest_marked_unjudged():
    simulation = simulate(qrels(), runs(), settings(budgets=(2,)))
    [result] = simulation.strategies
    judged = {simulation.candidates.name_of(d) for d in result.order}
    lines = [line.split() for line in QRELS.splitlines()]
    partial = "".join(f"{t} 0 {d} {r if (t, d) in judged else -1}\n" for t, _, d, r in lines)
    expected = evaluate(read_qrels(partial.encode()), runs(), [MAP], EvalOptions(complete=True))
    assert result.budgets[0].scores.tolist() == pytest.approx(
        expected.measures[0].summary[:, 0].tolist()
    )
    full = evaluate(qrels(), runs(), [MAP], EvalOptions(complete=True))
    assert simulation.truth.tolist() == pytest.approx(full.measures[0].summary[:, 0].tolist())


def test_with_every_candidate_judged_the_runs_rank_as_under_the_qrels():
    simulation = simulate(qrels(), runs(), settings(strategies=("mtf", "bandit")))
    for result in simulation.strategies:
        assert result.budgets[-1].tau == 1.0
        assert result.budgets[-1].tau_ap == 1.0


@pytest.mark.parametrize("measure", ["map", "bpref", "ndcg_cut.10", "P.5", "recip_rank"])
def test_rankings_judged_again_score_as_a_fresh_evaluation_of_the_same_labels(measure):
    frame = random_runs(3, runs=4, topics=3, docs=30, depth=20)
    tables = [
        read_run(
            "".join(
                f"{t} Q0 {d} 0 {s} {r}\n" for r, t, d, s in group.itertuples(index=False)
            ).encode(),
            name=str(run),
        ).table
        for run, group in frame.groupby("run_id")
    ]
    rng = np.random.default_rng(3)
    pairs = frame[["query_id", "doc_id"]].drop_duplicates()
    base = pd.DataFrame(
        {
            "query_id": pairs["query_id"],
            "doc_id": pairs["doc_id"],
            "relevance": rng.integers(0, 3, len(pairs)),
        }
    )
    requested = TREC.select([measure])
    options = EvalOptions(complete=True)
    ranked = rank_and_judge(Judgments(base, 1), tables, options, with_judgment_rows=True)
    for _ in range(3):
        other = base.assign(
            relevance=np.where(rng.random(len(base)) < 0.4, -1, rng.integers(0, 3, len(base)))
        )
        again = evaluate_ranked(ranked.relabelled(Judgments(other, 1)), requested)
        fresh = evaluate(other, tables, requested, options)
        assert again.measures[0].summary.tolist() == fresh.measures[0].summary.tolist()


def test_relabelling_refuses_qrels_of_other_rows():
    base = qrels()
    ranked = rank_and_judge(Judgments(base, 1), runs(), EvalOptions(), with_judgment_rows=True)
    with pytest.raises(ValueError, match="same rows"):
        ranked.relabelled(Judgments(base.iloc[:-1], 1))


def test_teams_are_credited_with_the_relevant_documents_only_their_runs_rank():
    groups = {"A": "one", "C": "one", "B": "two"}
    simulation = simulate(qrels(), runs(), settings(groups=groups))
    assert [(t.name, t.runs, t.unique_relevant) for t in simulation.teams] == [
        ("one", ("A", "C"), 1),  # a (c is B's too)
        ("two", ("B",), 2),  # d, x
    ]
    last = simulation.strategies[0].budgets[-1]
    assert last.team_found.tolist() == [1, 2]
    alone = simulate(qrels(), runs(), settings())
    assert [t.unique_relevant for t in alone.teams] == [0, 2, 0]  # a is A's and C's


def test_a_run_tag_given_twice_names_the_second_run():
    tables = runs()
    with pytest.raises(SimulationError, match="run tag 'A' is also the tag of run 1") as caught:
        simulate(qrels(), [*tables, tables[0]], settings())
    assert caught.value.run == 3


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"strategies": ("greedy",)}, "unknown strategy 'greedy'"),
        ({"budgets": (10, 0)}, "budget: 0 is not a positive number"),
        ({"budgets": ()}, "budget: none given"),
        ({"allocation": "fair"}, "unknown allocation 'fair'"),
        ({"depth": 0}, "depth must be at least 1"),
    ],
)
def test_settings_that_cannot_be_replayed_say_why(changes, message):
    with pytest.raises(SimulationError, match=message):
        simulate(qrels(), runs(), settings(**changes))


def test_order_lines_give_every_judgment_with_its_position():
    simulation = simulate(qrels(), runs(), settings(strategies=("depth", "mtf"), budgets=(2,)))
    lines = list(simulation.order_lines())
    assert lines[:2] == ["depth 1 c 1\n", "depth 2 y 2\n"]
    assert [line.split()[0] for line in lines] == ["depth", "depth", "mtf", "mtf"]
    assert [line.split()[3] for line in lines[2:]] == ["1", "2"]


# --------------------------------------------------------------------------
# Active's estimate


def brute_force_stat_ap(frame, labels, sampled, inclusion, topics) -> dict[str, float]:
    """statAP's map of each run, by loops (scoring.core.pool_estimates' docstring)."""
    ranks = brute_force_ranks(frame)
    by_group = defaultdict(list)
    for (run, topic, doc), rank in ranks.items():
        by_group[run, topic].append((rank, doc))
    total = defaultdict(float)
    for (topic, doc), pi in inclusion.items():
        if (topic, doc) in sampled and labels.get((topic, doc), 0) >= 1:
            total[topic] += 1 / pi
    result = {}
    for run in sorted(set(frame["run_id"])):
        aps = []
        for topic in topics:
            numerator = 0.0
            seen = [
                (r, d)
                for r, d in sorted(by_group.get((run, topic), []))
                if (topic, d) in sampled and labels.get((topic, d), 0) >= 1
            ]
            for k, (rank, doc) in enumerate(seen):
                above = sum(1 / inclusion[topic, d] for _, d in seen[:k])
                numerator += (1 + above) / (inclusion[topic, doc] * rank)
            aps.append(numerator / total[topic] if total[topic] > 0 else 0.0)
        result[run] = sum(aps) / len(topics)
    return result


def estimator_for(
    q: pd.DataFrame, tables: list, simulation
) -> tuple[MapEstimator, tuple[str, ...]]:
    """The simulator's estimator over its candidates, and the run tags it reports."""
    from scoring.core.pool_simulation import _Universe  # the simulator's own qrels rows

    c = simulation.candidates
    columns = (q[name].to_numpy(dtype=object) for name in ("query_id", "doc_id"))
    universe = _Universe(c, *columns, q["relevance"].to_numpy(), 1)
    options = EvalOptions(complete=True)
    ranked = rank_and_judge(universe.judgments(None), tables, options, with_judgment_rows=True)
    return MapEstimator(ranked, c.n_docs, c), ranked.run_tags


def test_the_map_estimate_is_statap_over_the_sample():
    frame = random_runs(11, runs=4, topics=3, docs=25, depth=15)
    rng = np.random.default_rng(11)
    docs = frame[["query_id", "doc_id"]].drop_duplicates()
    labels = {(t, d): int(rng.integers(0, 2)) for t, d in docs.itertuples(index=False)}
    q = pd.DataFrame(
        [(t, d, r) for (t, d), r in labels.items()], columns=["query_id", "doc_id", "relevance"]
    )
    tables = tables_of(frame)
    simulation = simulate(q, tables, settings(budgets=(1,)))
    c = simulation.candidates
    names = [c.name_of(d) for d in range(c.n_docs)]
    sampled = rng.random(c.n_docs) < 0.5
    inclusion = np.where(sampled, rng.uniform(0.2, 1.0, c.n_docs), 0.0)
    relevant = np.array([labels.get(name, 0) >= 1 for name in names])
    estimator, tags = estimator_for(q, tables, simulation)
    got = estimator.mean_ap(sampled, relevant, inclusion)
    expected = brute_force_stat_ap(
        frame,
        labels,
        {names[d] for d in np.flatnonzero(sampled)},
        {names[d]: inclusion[d] for d in np.flatnonzero(sampled)},
        sorted(set(frame["query_id"])),
    )
    assert got.tolist() == pytest.approx([expected[tag] for tag in tags])
    # Every candidate in the sample for certain: the map of the qrels' labels of the pool.
    every = np.ones(c.n_docs, dtype=bool)
    exact = estimator.mean_ap(every, relevant, np.ones(c.n_docs))
    assert exact.tolist() == pytest.approx(simulation.pool_truth.tolist())


def test_active_reports_its_estimate_against_both_truths_at_each_budget():
    simulation = simulate(
        qrels(), runs(), settings(strategies=("active", "depth"), budgets=(4, 100))
    )
    active, depth = simulation.strategies
    assert all(b.estimate is None for b in depth.budgets)
    for budget in active.budgets:
        estimate = budget.estimate
        assert estimate is not None
        assert estimate.error.tolist() == pytest.approx(
            (estimate.estimate - simulation.truth).tolist()
        )
        assert estimate.pool_error.tolist() == pytest.approx(
            (estimate.estimate - simulation.pool_truth).tolist()
        )
    n = simulation.candidates.n_docs
    whole = ActiveSample(
        sampled=np.ones(n, bool),
        relevant=np.ones(n, bool),
        inclusion=np.ones(n),
        replicate_sampled=np.ones((10, n), bool),
        replicate_inclusion=np.ones((10, n)),
    )
    assert len(ActiveSample.concatenate([whole, whole]).sampled) == 2 * n


def tables_of(frame: pd.DataFrame) -> list:
    return [
        read_run(
            "".join(f"{t} Q0 {d} 0 {s} {r}\n" for r, t, d, s in g.itertuples(index=False)).encode(),
            name=r,
        ).table
        for r, g in frame.groupby("run_id")
    ]


def test_the_jackknife_standard_error_covers_the_error_on_generated_runs():
    """Over 40 runs, about two thirds of the estimates should be within one
    standard error of the pool's map, and nearly all within two."""
    frame = random_runs(5, runs=40, topics=6, docs=200, depth=60)
    rng = np.random.default_rng(5)
    docs = frame[["query_id", "doc_id"]].drop_duplicates()
    q = docs.assign(relevance=(rng.random(len(docs)) < 0.25).astype(int))
    tables = [
        read_run(
            "".join(f"{t} Q0 {d} 0 {s} {r}\n" for r, t, d, s in g.itertuples(index=False)).encode(),
            name=r,
        ).table
        for r, g in frame.groupby("run_id")
    ]
    simulation = simulate(q, tables, settings(strategies=("active",), budgets=(400,)))
    estimate = simulation.strategies[0].budgets[0].estimate
    assert estimate is not None
    assert 0.45 <= estimate.within(1, pool=True) <= 0.9
    assert estimate.within(2, pool=True) >= 0.8
    assert 0 < estimate.mean_standard_error < 1
