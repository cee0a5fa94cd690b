"""Pool reusability: the leave-one-out core against re-pooling by brute force, and a
case worked by hand."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pooling.core.ranking import pooled_documents, rank_runs
from scoring.core.analysis.ranks import ranks
from scoring.core.analysis.reusability import (
    JUDGED_AT,
    ReusabilityError,
    qrels_subset,
    reusability,
)
from scoring.core.evaluation import evaluate
from scoring.core.measures.catalog import TREC
from scoring.core.measures.columns import PlainQrels, PlainRun, plain_strings, qrels_columns
from scoring.core.measures.rankings import EvalOptions


def run_frame(tag: str, rows: Mapping[str, Sequence[tuple[str, float]]]) -> pd.DataFrame:
    records = [(topic, doc, score, tag) for topic, docs in rows.items() for doc, score in docs]
    return pd.DataFrame(records, columns=["query_id", "doc_id", "score", "run_id"])


def qrels_frame(rows: Mapping[tuple[str, str], int]) -> pd.DataFrame:
    records = [(topic, doc, label) for (topic, doc), label in rows.items()]
    return pd.DataFrame(records, columns=["query_id", "doc_id", "relevance"])


def pool_of(runs: list[pd.DataFrame], depth) -> set[tuple[str, str]]:
    """The depth-k pool of `runs`, built by the pooler."""
    if not runs:
        return set()
    ranked = rank_runs(pd.concat(runs, ignore_index=True))
    pooled = pooled_documents(ranked, depth)
    topics, docs = pooled.column("query_id").to_pylist(), pooled.column("doc_id").to_pylist()
    return set(zip(topics, docs, strict=True))


def summaries(qrels: pd.DataFrame, runs: list[pd.DataFrame], measure: str, options: EvalOptions):
    """measure, bpref and measure -J for each run, as evaluate gives them."""
    requested = TREC.select([measure])[0]
    plain = evaluate(qrels, runs, [requested, TREC.select(["bpref"])[0]], options)
    condensed = evaluate(
        qrels, runs, [requested], EvalOptions(**{**vars(options), "judged_only": True})
    )
    values = [m.summary[:, 0] for m in plain.measures]
    if measure == "bpref":
        values = values[:1]
    return [*values, condensed.measures[0].summary[:, 0]]


def brute_force(qrels, runs, depth, measure, unit_of_run, options):
    """Each unit left out by re-pooling: the pool of the other units' runs, the
    qrels kept where that pool has the document or no run pooled it at all, and
    the unit's runs scored on them."""
    everyone = pool_of(runs, depth)
    pairs = list(zip(qrels["query_id"], qrels["doc_id"], strict=True))
    without = None
    removed = {}
    for unit in sorted(set(unit_of_run)):
        members = [i for i, u in enumerate(unit_of_run) if u == unit]
        others = pool_of([run for i, run in enumerate(runs) if unit_of_run[i] != unit], depth)
        keep = np.array([pair in others or pair not in everyone for pair in pairs], dtype=bool)
        removed[unit] = int(np.count_nonzero(~keep))
        values = summaries(qrels[keep], [runs[i] for i in members], measure, options)
        if without is None:
            without = [np.full(len(runs), np.nan) for _ in values]
        for column, scored in zip(without, values, strict=True):
            column[members] = scored
    return without, removed


# --------------------------------------------------------------------------
# By hand


HAND_QRELS = qrels_frame({("1", "d1"): 1, ("1", "d2"): 0, ("1", "d3"): 1, ("1", "d4"): 0})
HAND_RUNS = [
    run_frame("A", {"1": [("d1", 3.0), ("d2", 2.0), ("d4", 1.0)]}),
    run_frame("B", {"1": [("d3", 3.0), ("d1", 2.0)]}),
]


def test_a_run_that_alone_found_a_relevant_document_loses_it():
    # Depth 2: A pools d1, d2; B pools d3, d1. Only A pooled d2 (not relevant),
    # only B pooled d3 (relevant).
    report = reusability(HAND_QRELS, HAND_RUNS, depth=2, measure=TREC.select(["map"])[0])
    by_run = report.by_run
    assert report.pooled == 3  # d4 is judged, but nobody pooled it
    assert list(by_run.removed) == [1, 1]
    assert list(by_run.removed_relevant) == [0, 1]
    ap, bpref, condensed = by_run.measures
    assert [ap.label, bpref.label, condensed.label] == ["map", "bpref", "map -J"]
    # A: d1 relevant at 1 of 2 relevant, with or without d2: 0.5.
    # B: d3, d1 both relevant: 1.0; without d3 (now unjudged) d1 at 2 of 1 relevant: 0.5.
    assert list(ap.full) == [0.5, 1.0]
    assert list(ap.without) == [0.5, 0.5]
    assert list(ap.change) == [0.0, -0.5]
    # B falls to a tie with A, and A comes first by tag.
    assert list(ap.rank) == [2, 1]
    assert list(ap.rank_without) == [2, 2]
    assert ap.largest_drop() == 1
    assert ap.largest_rank_drop() == 1
    # Condensed, B's unjudged d3 is dropped first: d1 at 1 of 1 relevant.
    assert list(condensed.without) == [0.5, 1.0]
    # bpref: A finds one of the two relevant documents; B's d1 has no judged
    # non-relevant document above it, with d3 relevant or unjudged.
    assert list(bpref.full) == [0.5, 1.0]
    assert list(bpref.without) == [0.5, 1.0]
    # Top 10: every document is judged; without its own, A has d2 unjudged, B d3.
    assert list(report.judged[10]) == [1.0, 1.0]
    assert list(by_run.judged_without[10]) == [pytest.approx(2 / 3), 0.5]
    # Both at 0.5 without: Kendall's tau is undefined; tau_AP averages the two
    # orders of the tie (one right, one wrong).
    assert ap.tau is None
    assert ap.tau_ap == 0.0


def test_groups_leave_their_runs_out_together():
    runs = [*HAND_RUNS, run_frame("C", {"1": [("d3", 1.0)]})]
    groups = {"A": "team1", "B": "team2", "C": "team2"}
    report = reusability(HAND_QRELS, runs, depth=2, measure=TREC.select(["map"])[0], groups=groups)
    # As runs, nobody but B and C pools d3; as a group, team2 alone did.
    assert list(report.by_run.removed) == [1, 0, 0]
    assert report.by_group is not None
    assert report.by_group.names == ("team1", "team2")
    assert list(report.by_group.unit_of_run) == [0, 1, 1]
    assert list(report.by_group.removed) == [1, 1]
    assert list(report.by_group.measures[0].without) == [0.5, 0.5, 0.0]


def test_runs_sharing_a_tag_prefix_are_not_grouped_unless_asked():
    runs = [*HAND_RUNS, run_frame("B2", {"1": [("d3", 1.0)]})]
    report = reusability(HAND_QRELS, runs, depth=2, measure=TREC.select(["map"])[0])
    assert report.by_group is None
    assert list(report.by_run.removed) == [1, 0, 0]


def test_refusals():
    measure = TREC.select(["map"])[0]
    with pytest.raises(ReusabilityError, match="run 'B' has no group"):
        reusability(HAND_QRELS, HAND_RUNS, depth=2, measure=measure, groups={"A": "x"})
    with pytest.raises(ReusabilityError, match="two runs have the tag 'A'"):
        reusability(HAND_QRELS, [HAND_RUNS[0], HAND_RUNS[0]], depth=2, measure=measure)
    with pytest.raises(ReusabilityError, match="at least 1"):
        reusability(HAND_QRELS, HAND_RUNS, depth=0, measure=measure)
    with pytest.raises(ReusabilityError, match="no topic of run 'C' is in the qrels"):
        reusability(
            HAND_QRELS, [*HAND_RUNS, run_frame("C", {"2": [("d1", 1.0)]})], depth=2, measure=measure
        )
    with pytest.raises(ReusabilityError, match="one value"):
        reusability(HAND_QRELS, HAND_RUNS, depth=2, measure=TREC.select(["P"])[0])


def test_a_topic_left_without_rows_is_no_longer_a_qrels_topic():
    plain = PlainQrels(*qrels_columns(qrels_frame({("1", "a"): 1, ("2", "b"): 1})))
    subset = qrels_subset(plain, np.array([False, True]))
    assert subset.query_id.values.values == ["2"]
    assert list(subset.query_id.codes) == [0]


# --------------------------------------------------------------------------
# Against brute force

MEASURES = ["map", "P.5", "ndcg_cut.10", "recip_rank", "bpref", "Rprec", "ndcg", "infAP"]
TOPICS = ["1", "2", "3"]
DOCS = [f"d{i}" for i in range(8)]


def draw_runs(draw) -> list[pd.DataFrame]:
    """1-5 runs over TOPICS, each ranking up to 6 of DOCS a topic with tied scores."""
    runs = []
    for r in range(draw(st.integers(1, 5))):
        rows = {}
        for topic in draw(st.lists(st.sampled_from(TOPICS), min_size=1, unique=True)):
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
            rows[topic] = [(doc, float(draw(st.integers(1, 3)))) for doc in docs]
        runs.append(run_frame(f"run{r}", rows))
    return runs


@st.composite
def collections(draw):
    runs = draw_runs(draw)
    n_runs = len(runs)
    # Two documents no run retrieves: judged, pooled by nobody, never taken out.
    labels = draw(
        st.dictionaries(
            st.tuples(st.sampled_from(TOPICS), st.sampled_from([*DOCS, "x1", "x2"])),
            st.integers(0, 2),
            min_size=3,
            max_size=30,
        )
    )
    for run in runs:  # every run has a qrels topic (or it is refused)
        if not set(run["query_id"]) & {topic for topic, _ in labels}:
            labels[(run["query_id"].iloc[0], "x2")] = 0
    depth = draw(
        st.one_of(
            st.integers(1, 4),
            st.dictionaries(st.sampled_from(TOPICS), st.integers(1, 4)),
        )
    )
    groups = draw(st.lists(st.sampled_from(["g0", "g1", "g2"]), min_size=n_runs, max_size=n_runs))
    return runs, qrels_frame(labels), depth, groups


@given(collection=collections(), measure=st.sampled_from(MEASURES), complete=st.booleans())
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_leaving_out_equals_re_pooling_without_the_unit(collection, measure, complete):
    runs, qrels, depth, group_of_run = collection
    options = EvalOptions(complete=complete)
    groups = {f"run{r}": group for r, group in enumerate(group_of_run)}
    report = reusability(
        qrels,
        runs,
        depth=depth,
        measure=TREC.select([measure])[0],
        groups=groups,
        options=options,
    )
    full = summaries(qrels, runs, measure, options)
    for leave_out, unit_of_run in [
        (report.by_run, list(range(len(runs)))),
        (report.by_group, [report.by_group.names.index(g) for g in group_of_run]),
    ]:
        without, removed = brute_force(qrels, runs, depth, measure, unit_of_run, options)
        assert list(leave_out.removed) == [removed.get(u, 0) for u in range(len(leave_out.names))]
        for scores, full_values, without_values in zip(
            leave_out.measures, full, without, strict=True
        ):
            assert scores.full == pytest.approx(full_values, nan_ok=True, rel=1e-12)
            assert scores.without == pytest.approx(without_values, nan_ok=True, rel=1e-12)


def test_a_larger_collection_against_brute_force_with_plain_columns():
    """12 runs x 5 topics x 40 documents from 90, depth 10, teams of three;
    the core is given plain columns (as the command line reads files), brute
    force pandas frames."""
    rng = np.random.default_rng(15)
    topics = [str(t) for t in range(401, 406)]
    runs = []
    for r in range(12):
        rows = {}
        for topic in topics:
            docs = rng.choice(90, size=40, replace=False)
            scores = np.round(rng.normal(size=40), 1)  # ties for the docno rule
            rows[topic] = [(f"doc{d:03d}", float(s)) for d, s in zip(docs, scores, strict=True)]
        runs.append(run_frame(f"team{r // 3}_r{r % 3}", rows))
    labels = {
        (topic, f"doc{d:03d}"): int(rng.integers(0, 3))
        for topic in topics
        for d in rng.choice(90, size=60, replace=False)
    }
    qrels = qrels_frame(labels)
    tags = [str(run["run_id"].iloc[0]) for run in runs]
    groups = {tag: tag.split("_")[0] for tag in tags}
    plain_runs = [
        PlainRun(
            plain_strings(run["query_id"]),
            plain_strings(run["doc_id"]),
            run["score"].to_numpy(),
            tag,
        )
        for run, tag in zip(runs, tags, strict=True)
    ]
    plain_qrels = PlainQrels.of(qrels["query_id"], qrels["doc_id"], relevance=qrels["relevance"])
    report = reusability(
        plain_qrels, plain_runs, depth=10, measure=TREC.select(["map"])[0], groups=groups
    )
    options = EvalOptions()
    for leave_out, unit_of_run in [
        (report.by_run, list(range(12))),
        (report.by_group, [r // 3 for r in range(12)]),
    ]:
        without, removed = brute_force(qrels, runs, 10, "map", unit_of_run, options)
        assert list(leave_out.removed) == [removed[u] for u in range(len(leave_out.names))]
        assert sum(removed.values()) > 0
        for scores, without_values in zip(leave_out.measures, without, strict=True):
            assert scores.without == pytest.approx(without_values, rel=1e-12)
            # The rank without: the unit's runs at their leave-out scores, the others at full.
            for unit in set(unit_of_run):
                members = np.array(unit_of_run) == unit
                mixed = np.where(members, scores.without, scores.full)
                assert list(scores.rank_without[members]) == list(ranks(tags, mixed)[members])
        # Judged shares by brute force: each (run, topic)'s top k against the qrels
        # minus what the run's unit alone pooled.
        for k in JUDGED_AT:
            expected = []
            for r, run in enumerate(runs):
                others = pool_of(
                    [x for i, x in enumerate(runs) if unit_of_run[i] != unit_of_run[r]], 10
                )
                everyone = pool_of(runs, 10)
                shares = []
                for topic, ranked in run.groupby("query_id"):
                    top = ranked.sort_values(["score", "doc_id"], ascending=False).head(k)
                    judged = [
                        (topic, doc) in labels
                        and ((topic, doc) in others or (topic, doc) not in everyone)
                        for doc in top["doc_id"]
                    ]
                    shares.append(np.mean(judged))
                expected.append(np.mean(shares))
            assert leave_out.judged_without[k] == pytest.approx(expected, rel=1e-12)


def test_many_ties_in_scores_still_count_each_document_once():
    # Every run gives every document the same score: the docno rule decides the
    # top k, and a document pooled by two runs of one group is that group's alone.
    rows = {"1": [(doc, 1.0) for doc in DOCS]}
    runs = [run_frame(tag, rows) for tag in ("a", "b")]
    qrels = qrels_frame({("1", doc): 1 for doc in DOCS})
    report = reusability(
        qrels, runs, depth=3, measure=TREC.select(["P.5"])[0], groups={"a": "g", "b": "g"}
    )
    assert list(report.by_run.removed) == [0, 0]
    assert report.by_group is not None
    assert list(report.by_group.removed) == [3]  # d7, d6, d5: docno descending
    for a, b in itertools.pairwise(report.by_group.measures[0].without):
        assert a == b
