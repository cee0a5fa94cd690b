"""One ranking rule: the pooler and the scorer rank every run alike, by `rank_order`."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pooling.core.ranking import rank_runs
from scoring.core.measures.rankings import EvalOptions, Judgments, rank_and_judge
from workbench.core.ranking_rule import rank_order

# Docnos that differ only in case, in a byte past ASCII, or by a prefix; the
# same docnos are drawn for every topic, so they repeat across topics.
DOCNOS = ["a", "A", "b", "B", "a1", "a10", "a2", "ä", "Ä", "é", "e", "z", "Z", "ÿ", "ſ", "𝔘", "d/1"]  # noqa: RUF001
TOPICS = ["1", "2", "10", "007", "7", "b", "B", "é"]
scores = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5]),  # ties, and 0.0 equal to -0.0
    st.floats(allow_nan=False, allow_infinity=False),
)


@st.composite
def run_sets(draw: st.DrawFn) -> list[list[tuple[str, str, float]]]:
    """Runs of (topic, docno, score) rows: each docno at most once per topic of a run."""
    runs = []
    for _ in range(draw(st.integers(1, 3))):
        topics = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=6, unique=True))
        rows = []
        for topic in topics:
            docnos = draw(st.lists(st.sampled_from(DOCNOS), min_size=1, max_size=12, unique=True))
            rows.extend((topic, docno, draw(scores)) for docno in docnos)
        if draw(st.booleans()):  # a run file as written: each topic together, best first
            rows.sort(key=lambda row: (topics.index(row[0]), -row[2]))
        else:
            rows = draw(st.permutations(rows))
        runs.append(rows)
    return runs


def by_the_rule(rows: list[tuple[str, str, float]]) -> dict[str, list[str]]:
    """Each topic's docnos as the rule ranks them, sorted in plain Python."""
    topics: dict[str, list[tuple[float, bytes, str]]] = defaultdict(list)
    for topic, docno, score in rows:
        topics[topic].append((score, docno.encode(), docno))
    return {
        topic: [d for *_, d in sorted(entries, reverse=True)] for topic, entries in topics.items()
    }


def pooler_ranking(runs: list[list[tuple[str, str, float]]]) -> dict[tuple[int, str], list[str]]:
    rows = [
        (f"run{i}", topic, docno, score)
        for i, run in enumerate(runs)
        for topic, docno, score in run
    ]
    table = pa.table(
        dict(zip(("run_id", "query_id", "doc_id", "score"), zip(*rows, strict=True), strict=True))
    )
    ranked = rank_runs(table).table.to_pylist()
    result: dict[tuple[int, str], list[str]] = defaultdict(list)
    for row in ranked:  # sorted by run, topic and rank
        result[int(row["run_id"][3:]), row["query_id"]].append(row["doc_id"])
    return dict(result)


def scorer_ranking(runs: list[list[tuple[str, str, float]]]) -> dict[tuple[int, str], list[str]]:
    """The scorer's ranking, read back from qrels that give each (topic, docno) its own label."""
    pairs = sorted({(topic, docno) for run in runs for topic, docno, _ in run})
    qrels = pa.table(
        {
            "query_id": [topic for topic, _ in pairs],
            "doc_id": [docno for _, docno in pairs],
            "relevance": list(range(len(pairs))),
        }
    )
    tables = [
        pa.table(
            {
                "query_id": [topic for topic, _, _ in run],
                "doc_id": [docno for _, docno, _ in run],
                "score": pa.array([score for *_, score in run], pa.float64()),
                "run_id": [f"run{i}"] * len(run),
            }
        )
        for i, run in enumerate(runs)
    ]
    judgments = Judgments(qrels, 1)
    ranked = rank_and_judge(judgments, tables, EvalOptions())
    topics = judgments.topics
    result: dict[tuple[int, str], list[str]] = defaultdict(list)
    for group, label in zip(ranked.row_group, ranked.row_label, strict=True):  # by group, rank
        run, topic = ranked.group_run[group], topics[ranked.group_topic[group]]
        result[int(run), topic].append(pairs[label][1])
    return dict(result)


@settings(max_examples=200, deadline=None)
@given(run_sets())
def test_pooler_and_scorer_rank_every_run_identically(runs):
    pooled, scored = pooler_ranking(runs), scorer_ranking(runs)
    assert pooled == scored
    expected = {
        (i, topic): docnos
        for i, run in enumerate(runs)
        for topic, docnos in by_the_rule(run).items()
    }
    assert pooled == expected


@settings(max_examples=100, deadline=None)
@given(run_sets(), st.integers(0, 5))
def test_arrow_str_and_bytes_docnos_rank_alike_and_a_cut_keeps_the_top(runs, depth):
    rows = [(i, topic, docno, score) for i, run in enumerate(runs) for topic, docno, score in run]
    codes = {
        key: code for code, key in enumerate(sorted({(i, t) for i, t, _, _ in rows}, reverse=True))
    }
    group = np.array([codes[i, t] for i, t, _, _ in rows])
    score = np.array([s for *_, s in rows])
    docnos = [d for _, _, d, _ in rows]
    whole = rank_order(group, score, pa.array(docnos))
    for plain_docnos in (np.array(docnos, dtype=object), np.array([d.encode() for d in docnos])):
        plain = rank_order(group, score, plain_docnos)  # str, and NUL-padded UTF-8 bytes
        assert np.array_equal(whole.order, plain.order)
        assert np.array_equal(whole.rank, plain.rank)
    cut = rank_order(group, score, np.array(docnos, dtype=object), max_depth=depth)
    kept = whole.rank <= depth
    assert np.array_equal(cut.order, whole.order[kept])
    assert np.array_equal(cut.rank, whole.rank[kept])
    assert np.array_equal(group[whole.order], np.sort(group))  # groups by code, ascending


def test_groups_come_out_by_code_and_ties_by_docno_descending():
    group = np.array([5, 5, 5, 2, 2])
    score = np.array([1.0, 1.0, 0.5, 3.0, 3.0])
    ranked = rank_order(group, score, np.array(["B", "b", "z", "a", "a10"], dtype=object))
    assert ranked.order.tolist() == [4, 3, 1, 0, 2]
    assert ranked.rank.tolist() == [1, 2, 1, 2, 3]


def test_a_negative_cut_is_refused():
    with pytest.raises(ValueError, match="at least 0"):
        rank_order(np.zeros(1), np.zeros(1), np.array(["a"], dtype=object), max_depth=-1)
