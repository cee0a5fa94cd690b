"""Pool reusability of a sampled (stratified) pool: the leave-one-out core against
re-pooling by brute force and scoring with `evaluate_sample` at the whole pool's
inclusion probabilities, and a tiny pool worked by hand."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pooling.core.ranking import pooled_documents, rank_runs
from scoring.core.analysis.reusability import (
    INFERRED,
    ReusabilityError,
    report_measure,
    reusability,
    sampled_reusability,
)
from scoring.core.evaluation import evaluate
from scoring.core.measures.catalog import TREC
from scoring.core.measures.columns import PlainQrels, PlainRun, plain_strings
from scoring.core.measures.rankings import EvalOptions
from scoring.core.sample_eval import evaluate_sample
from tests.scoring.core.analysis.test_reusability import DOCS, TOPICS, draw_runs, pool_of, run_frame


def stratified_frame(rows: Mapping[tuple[str, str], tuple[int, int]]) -> pd.DataFrame:
    """(topic, docno) -> (stratum, label), label -1 for pooled and not sampled."""
    records = [(topic, doc, stratum, label) for (topic, doc), (stratum, label) in rows.items()]
    return pd.DataFrame(records, columns=["query_id", "doc_id", "stratum", "relevance"])


def shares(qrels: pd.DataFrame) -> pd.DataFrame:
    """sample_eval's inclusion probability of each (topic, stratum): sampled / pooled."""
    grouped = qrels.assign(sampled=qrels["relevance"] >= 0).groupby(["query_id", "stratum"])
    probability = grouped["sampled"].sum() / grouped["sampled"].size()
    return probability.rename("inclusion_probability").reset_index()


def inferred(qrels, runs, measure: str, inclusion: pd.DataFrame | None) -> np.ndarray:
    values = evaluate_sample(qrels, runs, inclusion=inclusion)
    by_name = {m.requested.names[0]: m.summary for m in values.measures}
    return by_name[measure][:, 0]


def bpref(qrels, runs, options: EvalOptions) -> np.ndarray:
    return evaluate(qrels, runs, TREC.select(["bpref"]), options).measures[0].summary[:, 0]


def brute_force(qrels, runs, depth, measure, unit_of_run, options, inclusion):
    """Each unit left out by re-pooling: the documents the other units' runs rank
    within the deepest rank, and those no run pooled, keep their rows (stratum,
    label); the unit's runs are scored at the whole pool's probabilities."""
    probabilities = shares(qrels) if inclusion is None else inclusion
    everyone = pool_of(runs, depth)
    pairs = list(zip(qrels["query_id"], qrels["doc_id"], strict=True))
    without = [np.full(len(runs), np.nan), np.full(len(runs), np.nan)]
    removed = {}
    for unit in sorted(set(unit_of_run)):
        members = [i for i, u in enumerate(unit_of_run) if u == unit]
        others = pool_of([run for i, run in enumerate(runs) if unit_of_run[i] != unit], depth)
        keep = np.array([pair in others or pair not in everyone for pair in pairs], dtype=bool)
        removed[unit] = int(np.count_nonzero(~keep))
        mine = [runs[i] for i in members]
        kept = qrels[keep].reset_index(drop=True)
        without[0][members] = inferred(kept, mine, measure, probabilities)
        without[1][members] = bpref(kept, mine, options)
    return without, removed


# --------------------------------------------------------------------------
# By hand

# Depth 2 (the deepest rank sampled). Stratum 1 is judged in full; stratum 2
# sampled one of two: d2 pooled and not sampled, d4 (pooled by a run not given,
# say) sampled and relevant. A alone pools d2, B alone d3.
HAND_QRELS = stratified_frame(
    {("1", "d1"): (1, 1), ("1", "d2"): (2, -1), ("1", "d3"): (1, 1), ("1", "d4"): (2, 1)}
)
HAND_RUNS = [
    run_frame("A", {"1": [("d2", 3.0), ("d1", 2.0), ("d4", 1.0)]}),
    run_frame("B", {"1": [("d3", 3.0), ("d1", 2.0)]}),
]
# sample_eval's smoothing of a stratum's precision with one document above, sampled, relevant.
Q = (1 + 0.00001) / (1 + 0.00003)


def test_a_document_only_the_run_pooled_leaves_the_pool_sampled_or_not():
    report = sampled_reusability(
        HAND_QRELS, HAND_RUNS, depth=2, measure=report_measure("infAP", sampled=True)
    )
    assert report.sampled
    assert (report.pooled, report.pooled_judged) == (3, 2)  # d1, d2, d3; d4 is no run's
    by_run = report.by_run
    assert list(by_run.removed) == [1, 1]
    assert list(by_run.removed_judged) == [0, 1]
    assert list(by_run.removed_relevant) == [0, 1]
    infap, bp = by_run.measures
    assert [infap.label, bp.label] == ["infAP", "bpref"]  # no -J for inferred measures
    # R = 2 / 1 (stratum 1) + 1 / (1/2) (stratum 2) = 4: each stratum weighs 1/2.
    # A, full: d1 at 2 under unsampled d2 (1/2 + 1/2 x 1/3); d4 at 3 under d2, d1.
    a_full = 0.5 * (2 / 3) / 2 + 0.5 * (1 / 3 + (Q + 1 / 3) / 3)
    # A without d2: d1 at 2 has no pooled document above; d4 at 3 has d1.
    a_without = 0.5 * (1 / 2) / 2 + 0.5 * (1 / 3 + Q / 3)
    # B, full: d3 at 1, d1 at 2 under d3; d4 not retrieved.
    b_full = 0.5 * (1 + 1 / 2 + Q / 2) / 2
    # B without d3: R = 1 + 2 = 3 (stratum 2 keeps its probability 1/2, though
    # every document left in it is sampled); d1 at 2 under an unpooled d3.
    b_without = (1 / 3) * (1 / 2)
    assert infap.full == pytest.approx([a_full, b_full], rel=1e-12)
    assert infap.without == pytest.approx([a_without, b_without], rel=1e-12)
    # bpref: judged relevant d1, d3, d4, no judged non-relevant document.
    assert list(bp.full) == pytest.approx([2 / 3, 2 / 3])
    assert list(bp.without) == pytest.approx([2 / 3, 1 / 2])
    # Top 10 judged: A's d2 was never judged; B loses d3.
    assert list(report.judged[10]) == pytest.approx([2 / 3, 1.0])
    assert list(by_run.judged_without[10]) == pytest.approx([2 / 3, 1 / 2])
    # With every judgment, the numbers of sample_eval (exactly: the same estimates).
    assert list(infap.full) == list(inferred(HAND_QRELS, HAND_RUNS, "infAP", None))


def test_the_depth_k_rule_would_keep_the_unsampled_document():
    """The difference from a depth-k pool: there a -1 line is never taken out."""
    plain = HAND_QRELS.drop(columns="stratum")
    report = reusability(plain, HAND_RUNS, depth=2, measure=TREC.select(["map"])[0])
    assert list(report.by_run.removed) == [0, 1]


def test_given_probabilities_are_used_and_kept():
    # Stratum 2 drawn at 0.25 (say its other documents were not retrieved by these runs).
    inclusion = pd.DataFrame(
        {"query_id": ["1", "1"], "stratum": [1, 2], "inclusion_probability": [1.0, 0.25]}
    )
    measure = report_measure("infNDCG", sampled=True)
    report = sampled_reusability(
        HAND_QRELS, HAND_RUNS, depth=2, measure=measure, inclusion=inclusion
    )
    ndcg = report.by_run.measures[0]
    assert ndcg.label == "infNDCG"
    assert list(ndcg.full) == list(inferred(HAND_QRELS, HAND_RUNS, "infNDCG", inclusion))
    without, _ = brute_force(HAND_QRELS, HAND_RUNS, 2, "infNDCG", [0, 1], EvalOptions(), inclusion)
    assert ndcg.without == pytest.approx(without[0], rel=1e-12)


def test_measures_and_refusals():
    assert report_measure("infAP", sampled=True).measure.name == "infAP"
    with pytest.raises(ReusabilityError, match="inferred measure, infAP or infNDCG"):
        report_measure("map", sampled=True)
    with pytest.raises(ReusabilityError, match="this pool samples nothing"):
        report_measure("infAP", sampled=False)
    with pytest.raises(ReusabilityError, match="name one cutoff"):
        report_measure("P", sampled=False)
    with pytest.raises(ReusabilityError, match="inferred measure"):
        sampled_reusability(HAND_QRELS, HAND_RUNS, depth=2, measure=TREC.select(["map"])[0])
    with pytest.raises(ReusabilityError, match="stratum column"):
        sampled_reusability(
            HAND_QRELS.drop(columns="stratum"),
            HAND_RUNS,
            depth=2,
            measure=report_measure("infAP", sampled=True),
        )
    half = pd.DataFrame({"query_id": ["1"], "stratum": [1], "inclusion_probability": [1.0]})
    with pytest.raises(ReusabilityError, match="stratum 2: no inclusion probability"):
        sampled_reusability(
            HAND_QRELS,
            HAND_RUNS,
            depth=2,
            measure=report_measure("infAP", sampled=True),
            inclusion=half,
        )


# --------------------------------------------------------------------------
# Against brute force


@st.composite
def collections(draw):
    runs = draw_runs(draw)
    n_runs = len(runs)
    # x1, x2: no run retrieves them (pooled by runs not given), never taken out.
    labels = draw(
        st.dictionaries(
            st.tuples(st.sampled_from(TOPICS), st.sampled_from([*DOCS, "x1", "x2"])),
            st.tuples(st.integers(1, 3), st.integers(-1, 2)),
            min_size=3,
            max_size=30,
        )
    )
    for run in runs:  # every run has a qrels topic (or it is refused)
        if not set(run["query_id"]) & {topic for topic, _ in labels}:
            labels[(run["query_id"].iloc[0], "x2")] = (1, 0)
    # Every (topic, stratum) has a sampled document: a probability in (0, 1].
    for topic, stratum in {(t, s) for (t, _), (s, _) in labels.items()}:
        labels[(topic, f"s{stratum}")] = (stratum, draw(st.integers(0, 2)))
    depth = draw(
        st.one_of(st.integers(1, 4), st.dictionaries(st.sampled_from(TOPICS), st.integers(1, 4)))
    )
    groups = draw(st.lists(st.sampled_from(["g0", "g1", "g2"]), min_size=n_runs, max_size=n_runs))
    qrels = stratified_frame(labels)
    inclusion = None
    if draw(st.booleans()):
        strata = qrels[["query_id", "stratum"]].drop_duplicates()
        rates = draw(
            st.lists(
                st.sampled_from([0.1, 0.25, 0.5, 1.0]), min_size=len(strata), max_size=len(strata)
            )
        )
        inclusion = strata.assign(inclusion_probability=rates).reset_index(drop=True)
    return runs, qrels, depth, groups, inclusion


@given(collection=collections(), measure=st.sampled_from(INFERRED), complete=st.booleans())
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_leaving_out_equals_re_pooling_at_the_pools_probabilities(collection, measure, complete):
    runs, qrels, depth, group_of_run, inclusion = collection
    options = EvalOptions(complete=complete)
    groups = {f"run{r}": group for r, group in enumerate(group_of_run)}
    report = sampled_reusability(
        qrels,
        runs,
        depth=depth,
        measure=report_measure(measure, sampled=True),
        inclusion=inclusion,
        groups=groups,
        options=options,
    )
    full = [inferred(qrels, runs, measure, inclusion), bpref(qrels, runs, options)]
    assert report.by_group is not None
    for leave_out, unit_of_run in [
        (report.by_run, list(range(len(runs)))),
        (report.by_group, [report.by_group.names.index(g) for g in group_of_run]),
    ]:
        without, removed = brute_force(qrels, runs, depth, measure, unit_of_run, options, inclusion)
        assert list(leave_out.removed) == [removed.get(u, 0) for u in range(len(leave_out.names))]
        for scores, full_values, without_values in zip(
            leave_out.measures, full, without, strict=True
        ):
            assert list(scores.full) == pytest.approx(list(full_values), nan_ok=True, rel=1e-12)
            assert list(scores.without) == pytest.approx(
                list(without_values), nan_ok=True, rel=1e-9, abs=1e-12
            )


def test_a_seeded_stratified_pool_against_brute_force_with_plain_columns():
    """10 runs x 4 topics x 40 documents from 90, ties in the scores; the pool is
    stratified as the pooler does it: ranks 1-5 judged in full, 6-20 sampled at
    0.3; the core is given plain columns, brute force pandas frames."""
    rng = np.random.default_rng(23)
    topics = [str(t) for t in range(401, 405)]
    runs = []
    for r in range(10):
        rows = {}
        for topic in topics:
            docs = rng.choice(90, size=40, replace=False)
            scores = np.round(rng.normal(size=40), 1)
            rows[topic] = [(f"doc{d:03d}", float(s)) for d, s in zip(docs, scores, strict=True)]
        runs.append(run_frame(f"team{r // 3}_r{r % 3}", rows))
    pooled = pooled_documents(rank_runs(pd.concat(runs, ignore_index=True)), 20).to_pandas()
    stratum = np.where(pooled["best_rank"] <= 5, 1, 2)
    sampled = (stratum == 1) | (rng.random(len(pooled)) < 0.3)
    label = np.where(sampled, rng.integers(0, 3, size=len(pooled)), -1)
    qrels = pd.DataFrame(
        {
            "query_id": pooled["query_id"],
            "doc_id": pooled["doc_id"],
            "stratum": stratum,
            "relevance": label,
        }
    )
    tags = [str(run["run_id"].iloc[0]) for run in runs]
    plain_runs = [
        PlainRun(
            plain_strings(run["query_id"]),
            plain_strings(run["doc_id"]),
            run["score"].to_numpy(),
            tag,
        )
        for run, tag in zip(runs, tags, strict=True)
    ]
    plain_qrels = PlainQrels.of(
        qrels["query_id"], qrels["doc_id"], stratum=qrels["stratum"], relevance=qrels["relevance"]
    )
    groups = {tag: tag.split("_")[0] for tag in tags}
    report = sampled_reusability(
        plain_qrels,
        plain_runs,
        depth=20,
        measure=report_measure("infAP", sampled=True),
        groups=groups,
    )
    assert report.by_group is not None
    for leave_out, unit_of_run in [
        (report.by_run, list(range(10))),
        (report.by_group, [r // 3 for r in range(10)]),
    ]:
        without, removed = brute_force(qrels, runs, 20, "infAP", unit_of_run, EvalOptions(), None)
        assert list(leave_out.removed) == [removed[u] for u in range(len(leave_out.names))]
        assert sum(removed.values()) > 0
        # Unsampled documents leave too, not only judged ones.
        assert leave_out.removed.sum() > leave_out.removed_judged.sum()
        for scores, without_values in zip(leave_out.measures, without, strict=True):
            assert scores.without == pytest.approx(without_values, rel=1e-9)
    # A unit that took nothing out keeps its full scores to the last bit.
    infap = report.by_run.measures[0]
    untouched = report.by_run.removed == 0
    assert list(infap.without[untouched]) == list(infap.full[untouched])
