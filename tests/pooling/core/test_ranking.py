"""Ranking runs by the decided rule (pure core): score descending, then docno descending."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pooling.core.ranking import PoolInputError, rank_runs
from pooling.core.spec import (
    PoolSpec,
)
from pooling.core.strategies import (
    build_pool,
    pool_tsv_lines,
)
from tests.pooling.generated_runs import (
    brute_force_depth_pool,
    brute_force_ranks,
    random_runs,
    runs_from_text,
)

# --------------------------------------------------------------------------
# Helpers


def pool_as_dict(pool: pd.DataFrame) -> dict[tuple[str, str], tuple[int, int]]:
    rows = pool[["query_id", "doc_id", "best_rank", "n_runs"]].itertuples(index=False)
    return {(topic, doc): (int(best), int(count)) for topic, doc, best, count in rows}


def tsv_text(pool: pd.DataFrame) -> str:
    return "".join(pool_tsv_lines(pool))


# --------------------------------------------------------------------------
# Ranking


def test_ranks_are_recomputed_from_scores_ignoring_the_rank_column():
    runs = runs_from_text("1 Q0 a 1 1.0 r\n1 Q0 b 2 3.0 r\n1 Q0 c 3 2.0 r\n")
    ranked = rank_runs(runs).table.to_pandas()
    assert ranked["doc_id"].tolist() == ["b", "c", "a"]
    assert ranked["rank"].tolist() == [1, 2, 3]


def test_score_ties_are_broken_by_docno_descending_in_byte_order():
    # "b" > "B" > "a10" > "a1" in byte order; "é" (0xc3 0xa9) is above every ASCII docno.
    runs = runs_from_text(
        "1 Q0 a1 1 5 r\n1 Q0 B 2 5 r\n1 Q0 b 3 5 r\n1 Q0 a10 4 5 r\n1 Q0 é 5 5 r\n1 Q0 z 6 9 r\n"
    )
    ranked = rank_runs(runs).table.to_pandas()
    assert ranked["doc_id"].tolist() == ["z", "é", "b", "a10", "a1", "B"]


def test_ranks_match_a_brute_force_sort_in_any_row_order():
    runs = random_runs(1)
    ranked = rank_runs(runs).table.to_pandas()
    got = {
        (run, topic, doc): rank
        for run, topic, doc, rank in ranked[["run_id", "query_id", "doc_id", "rank"]].itertuples(
            index=False
        )
    }
    assert got == brute_force_ranks(runs)


def test_ranks_match_a_brute_force_sort_for_rows_written_in_score_order():
    # Run files come in score order with ties in any docno order: the sort is
    # skipped and only the ties are reordered.
    runs = random_runs(20).sort_values(
        ["run_id", "query_id", "score"], ascending=[True, True, False], kind="stable"
    )
    ranked = rank_runs(runs).table.to_pandas()
    got = {
        (run, topic, doc): rank
        for run, topic, doc, rank in ranked[["run_id", "query_id", "doc_id", "rank"]].itertuples(
            index=False
        )
    }
    assert got == brute_force_ranks(runs)


def test_ties_in_a_file_written_in_score_order_are_broken_by_docno():
    runs = runs_from_text("1 Q0 a 1 5 r\n1 Q0 c 2 5 r\n1 Q0 b 3 4 r\n2 Q0 y 1 1 r\n2 Q0 z 2 1 r\n")
    assert rank_runs(runs).table.column("doc_id").to_pylist() == ["c", "a", "b", "z", "y"]


@st.composite
def small_runs(draw: st.DrawFn) -> pd.DataFrame:
    """Up to 4 runs over 2 topics, docnos from a tiny alphabet (with non-ASCII),
    few distinct scores (with -0.0), rows in any order."""
    docnos = st.text(alphabet="aAbé0", min_size=1, max_size=3)
    rows = []
    for run in range(draw(st.integers(1, 4))):
        for topic in ("1", "2"):
            for doc in draw(st.lists(docnos, max_size=8, unique=True)):
                score = draw(st.sampled_from([-0.0, 0.0, 1.0, 2.5, -3.0]))
                rows.append((f"r{run}", topic, doc, score))
    frame = pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"])
    return frame.iloc[draw(st.permutations(range(len(frame))))] if len(frame) else frame


@settings(max_examples=60, deadline=None)
@given(runs=small_runs(), depth=st.integers(1, 6))
def test_depth_pool_equals_brute_force_on_any_small_runs(runs: pd.DataFrame, depth: int):
    if runs.empty:
        with pytest.raises(PoolInputError):
            build_pool(runs, PoolSpec(depth=depth))
        return
    pool = build_pool(runs, PoolSpec(depth=depth))
    topics = set(runs["query_id"])
    assert pool_as_dict(pool) == brute_force_depth_pool(runs, dict.fromkeys(topics, depth))


@settings(max_examples=80, deadline=None)
@given(runs=small_runs(), depth=st.integers(1, 6))
def test_ranks_cut_at_a_depth_match_brute_force_for_rows_in_score_order(runs, depth):
    # The presorted path looks for ties only within the depth and in blocks
    # running past it.
    assume(not runs.empty)
    runs = runs.sort_values(
        ["run_id", "query_id", "score"], ascending=[True, True, False], kind="stable"
    )
    ranked = rank_runs(runs, max_depth=depth).table.to_pandas()
    got = {
        (run, topic, doc): rank
        for run, topic, doc, rank in ranked[["run_id", "query_id", "doc_id", "rank"]].itertuples(
            index=False
        )
    }
    assert got == {key: rank for key, rank in brute_force_ranks(runs).items() if rank <= depth}


def test_rank_runs_keeps_only_ranks_within_max_depth():
    runs = random_runs(2)
    ranked = rank_runs(runs, max_depth=5).table.to_pandas()
    expected = {key: rank for key, rank in brute_force_ranks(runs).items() if rank <= 5}
    assert len(ranked) == len(expected)
    assert ranked["rank"].max() == 5


def test_a_tie_across_the_depth_cut_is_broken_before_cutting():
    runs = runs_from_text("1 Q0 a 1 5 r\n1 Q0 b 2 4 r\n1 Q0 c 3 4 r\n1 Q0 d 4 4 r\n")
    assert rank_runs(runs, max_depth=2).table.column("doc_id").to_pylist() == ["a", "d"]


def test_negative_zero_ties_with_zero():
    runs = runs_from_text("1 Q0 a 1 -0.0 r\n1 Q0 b 2 0.0 r\n")
    assert rank_runs(runs).table.column("doc_id").to_pylist() == ["b", "a"]
