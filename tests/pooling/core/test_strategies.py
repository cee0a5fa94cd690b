"""Pool construction (pure core): ranking, depth-k and stratified pools, order, late runs."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from pooling.core.ranking import PoolInputError, rank_run_caches, rank_run_files
from pooling.core.spec import (
    PoolSpec,
    PoolSpecError,
    Stratum,
    parse_pool_spec,
    parse_strata,
)
from pooling.core.strategies import (
    POOL_COLUMNS,
    add_runs_to_pool,
    build_pool,
    draw_counts,
    pool_from_run_files,
    pool_of_judged,
    pool_tsv_lines,
    write_pool_tsv,
)
from tests.pooling.generated_runs import (
    brute_force_depth_pool,
    random_runs,
    runs_from_text,
)
from workbench.core.problems import InputError
from workbench.core.run_files import read_run, write_run_cache

# --------------------------------------------------------------------------
# Helpers


def pool_as_dict(pool: pd.DataFrame) -> dict[tuple[str, str], tuple[int, int]]:
    rows = pool[["query_id", "doc_id", "best_rank", "n_runs"]].itertuples(index=False)
    return {(topic, doc): (int(best), int(count)) for topic, doc, best, count in rows}


def tsv_text(pool: pd.DataFrame) -> str:
    return "".join(pool_tsv_lines(pool))


# --------------------------------------------------------------------------
# Depth-k pools


def test_depth_pool_of_two_tiny_runs_by_hand():
    runs = runs_from_text(
        "1 Q0 a 1 3 r1\n1 Q0 b 2 2 r1\n1 Q0 c 3 1 r1\n2 Q0 x 1 1 r1\n",
        "1 Q0 c 1 9 r2\n1 Q0 d 2 8 r2\n1 Q0 a 3 7 r2\n",
    )
    pool = build_pool(runs, PoolSpec(depth=2, order="docno"))
    assert pool[["query_id", "doc_id", "best_rank", "n_runs"]].values.tolist() == [
        ["1", "a", 1, 1],
        ["1", "b", 2, 1],
        ["1", "c", 1, 1],
        ["1", "d", 2, 1],
        ["2", "x", 1, 1],
    ]
    assert pool["stratum"].tolist() == [1] * 5
    assert pool["inclusion_probability"].tolist() == [1.0] * 5
    assert pool["sampled"].all()
    assert pool["order"].tolist() == [1, 2, 3, 4, 1]
    assert list(pool.columns) == list(POOL_COLUMNS)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_depth_pool_equals_brute_force_union_of_top_k(seed: int):
    runs = random_runs(seed)
    pool = build_pool(runs, PoolSpec(depth=7))
    assert pool_as_dict(pool) == brute_force_depth_pool(runs, dict.fromkeys("123", 7))
    assert pool["sampled"].all()


def test_per_topic_depths_override_the_depth():
    runs = random_runs(6)
    spec = parse_pool_spec(depth="5", topic_depths=["2:12", "3:1"])
    pool = build_pool(runs, spec)
    assert pool_as_dict(pool) == brute_force_depth_pool(runs, {"1": 5, "2": 12, "3": 1})


def test_n_runs_counts_runs_within_the_pooled_depth_only():
    runs = runs_from_text("1 Q0 a 1 9 r1\n1 Q0 b 2 8 r1\n", "1 Q0 b 1 9 r2\n1 Q0 a 2 8 r2\n")
    pool = build_pool(runs, PoolSpec(depth=1))
    assert pool_as_dict(pool) == {("1", "a"): (1, 1), ("1", "b"): (1, 1)}


def test_topics_are_sorted_numerically_then_as_text():
    runs = runs_from_text("10 Q0 a 1 1 r\n9 Q0 a 1 1 r\ncovid-2 Q0 a 1 1 r\n2 Q0 a 1 1 r\n")
    pool = build_pool(runs, PoolSpec(depth=1))
    assert pool["query_id"].tolist() == ["2", "9", "10", "covid-2"]


# --------------------------------------------------------------------------
# Stratified pools


def test_draw_counts_round_half_up_and_draw_at_least_one():
    sizes = np.array([3, 5, 1, 0, 4, 10, 7])
    rates = np.array([0.5, 0.5, 0.1, 0.5, 0.0, 0.25, 1.0])
    units = np.rint(rates * 1_000_000).astype(np.int64)
    assert draw_counts(sizes, units).tolist() == [2, 3, 1, 0, 0, 3, 7]


def test_stratum_sizes_draws_and_inclusion_probabilities_are_exact():
    runs = random_runs(7, runs=8, topics=3, docs=200, depth=60)
    spec = PoolSpec(depth=3, strata=parse_strata("4-10:0.5 11-30:0.3 31-60:0.05"))
    pool = build_pool(runs, spec)
    best = {
        key: best
        for key, (best, _) in brute_force_depth_pool(runs, dict.fromkeys("123", 60)).items()
    }
    bounds = [(1, 3, 1.0), (4, 10, 0.5), (11, 30, 0.3), (31, 60, 0.05)]
    for topic in "123":
        for number, (lo, hi, rate) in enumerate(bounds, start=1):
            members = {doc for (t, doc), rank in best.items() if t == topic and lo <= rank <= hi}
            rows = pool[(pool["query_id"] == topic) & (pool["stratum"] == number)]
            assert set(rows["doc_id"]) == members
            size = len(members)
            drawn = max(1, int(np.floor(rate * size + 0.5))) if size else 0
            assert rows["sampled"].sum() == drawn
            assert (rows["inclusion_probability"] == drawn / size).all()


def test_documents_outside_every_stratum_are_not_pooled_when_gaps_are_allowed():
    runs = runs_from_text("1 Q0 a 1 6 r\n1 Q0 b 2 5 r\n1 Q0 c 3 4 r\n1 Q0 d 4 3 r\n1 Q0 e 5 2 r\n")
    pool = build_pool(runs, PoolSpec(strata=parse_strata("1-1:1.0 4-5:1.0"), allow_gaps=True))
    assert sorted(pool["doc_id"]) == ["a", "d", "e"]
    assert pool.set_index("doc_id")["stratum"].to_dict() == {"a": 1, "d": 2, "e": 2}


def test_unsampled_entries_have_no_order_and_come_last():
    runs = random_runs(8, topics=1, docs=200, depth=80)
    pool = build_pool(runs, PoolSpec(depth=5, strata=(Stratum(6, 80, 0.2),)))
    unsampled = pool[~pool["sampled"]]
    assert len(unsampled) > 0
    assert unsampled["order"].isna().all()
    assert sorted(pool.loc[pool["sampled"], "order"]) == list(range(1, pool["sampled"].sum() + 1))
    assert pool["sampled"].tolist() == sorted(pool["sampled"], reverse=True)
    assert unsampled["doc_id"].tolist() == sorted(unsampled["doc_id"])


def test_depth_then_strata_is_the_same_pool_as_the_strata_written_out():
    runs = random_runs(9, docs=150, depth=50)
    with_depth = build_pool(runs, PoolSpec(depth=10, strata=parse_strata("11-50:0.4"), seed=3))
    written_out = build_pool(runs, PoolSpec(strata=parse_strata("1-10:1.0 11-50:0.4"), seed=3))
    assert tsv_text(with_depth) == tsv_text(written_out)


def test_raising_a_rate_keeps_every_document_drawn_at_the_lower_rate():
    runs = random_runs(10, docs=300, depth=100)
    low = build_pool(runs, PoolSpec(strata=parse_strata("1-100:0.3"), seed=1))
    high = build_pool(runs, PoolSpec(strata=parse_strata("1-100:0.6"), seed=1))
    drawn_low = set(map(tuple, low.loc[low["sampled"], ["query_id", "doc_id"]].values))
    drawn_high = set(map(tuple, high.loc[high["sampled"], ["query_id", "doc_id"]].values))
    assert drawn_low < drawn_high


# --------------------------------------------------------------------------
# Determinism and seeds


def test_same_runs_and_seed_give_a_byte_identical_tsv_whatever_the_row_order():
    runs = random_runs(11, docs=200, depth=60)
    spec = PoolSpec(depth=5, strata=parse_strata("6-60:0.3"), seed=42)
    first = tsv_text(build_pool(runs, spec))
    again = tsv_text(build_pool(runs.iloc[::-1].reset_index(drop=True), spec))
    assert first == again


def test_another_seed_gives_another_sample_and_order():
    runs = random_runs(12, docs=200, depth=60)
    one = build_pool(runs, PoolSpec(strata=parse_strata("1-60:0.5"), seed=1))
    two = build_pool(runs, PoolSpec(strata=parse_strata("1-60:0.5"), seed=2))
    assert set(one.loc[one["sampled"], "doc_id"]) != set(two.loc[two["sampled"], "doc_id"])
    depth_one = build_pool(runs, PoolSpec(depth=20, seed=1)).set_index(["query_id", "doc_id"])
    depth_two = build_pool(runs, PoolSpec(depth=20, seed=2)).set_index(["query_id", "doc_id"])
    assert not depth_one["order"].equals(depth_two["order"].reindex(depth_one.index))


def test_adding_a_topic_leaves_the_other_topics_unchanged():
    runs = random_runs(13, topics=3, docs=200, depth=60)
    spec = PoolSpec(depth=5, strata=parse_strata("6-60:0.3"), seed=5)
    all_topics = build_pool(runs, spec)
    two_topics = build_pool(runs[runs["query_id"] != "3"], spec)
    kept = all_topics[all_topics["query_id"] != "3"].reset_index(drop=True)
    assert tsv_text(kept) == tsv_text(two_topics)


def test_shuffled_order_is_uncorrelated_with_best_rank_and_docno():
    rng = np.random.default_rng(14)
    docs = np.array([f"doc{i:05d}" for i in range(5000)])
    # Two runs whose union is 5000 documents, docno order tied to rank.
    runs = pd.DataFrame(
        {
            "run_id": np.repeat(["r1", "r2"], 2500),
            "query_id": "1",
            "doc_id": docs,
            "score": np.r_[np.arange(2500, 0, -1), np.arange(2500, 0, -1)].astype(float),
        }
    )
    pool = build_pool(runs, PoolSpec(depth=2500, seed=int(rng.integers(1000))))
    assert len(pool) == 5000
    rank_rho = spearmanr(pool["order"].astype(float), pool["best_rank"]).statistic
    docno_rho = spearmanr(pool["order"].astype(float), pool["doc_id"].rank()).statistic
    assert abs(rank_rho) < 0.05
    assert abs(docno_rho) < 0.05


def test_topics_are_shuffled_independently():
    one_topic = "".join(f"1 Q0 d{i:03d} {i} {-i} r\n" for i in range(1, 101))
    runs = runs_from_text(one_topic + one_topic.replace("1 Q0", "2 Q0"))
    pool = build_pool(runs, PoolSpec(depth=100))
    orders = pool.pivot(index="doc_id", columns="query_id", values="order")
    assert not orders["1"].equals(orders["2"])


def test_docno_order_mode_presents_documents_in_byte_order():
    runs = runs_from_text("1 Q0 b 1 3 r\n1 Q0 B 2 2 r\n1 Q0 a 3 1 r\n")
    pool = build_pool(runs, PoolSpec(depth=3, order="docno"))
    assert pool["doc_id"].tolist() == ["B", "a", "b"]
    assert pool["order"].tolist() == [1, 2, 3]


# --------------------------------------------------------------------------
# Late runs


def test_adding_a_run_keeps_existing_entries_and_adds_exactly_its_new_documents():
    runs = random_runs(15, runs=5, docs=120, depth=40)
    late = random_runs(16, runs=1, docs=120, depth=40).assign(run_id="late")
    late = pd.concat([late, late.assign(query_id="new-topic")], ignore_index=True)
    spec = PoolSpec(depth=10, seed=7)
    pool = build_pool(runs, spec)
    before = pool.copy()
    added = add_runs_to_pool(pool, late, spec)

    pd.testing.assert_frame_equal(pool, before)
    fresh = pool_as_dict(build_pool(pd.concat([runs, late], ignore_index=True), spec))
    expected_new = {key: value for key, value in fresh.items() if key not in pool_as_dict(pool)}
    assert pool_as_dict(added) == expected_new
    assert (added["batch"] == 1).all()
    assert (pool["batch"] == 0).all()
    for topic, rows in added.groupby("query_id"):
        existing = pool.loc[pool["query_id"] == topic, "order"]
        start = int(existing.max()) if len(existing) else 0
        assert sorted(rows["order"]) == list(range(start + 1, start + len(rows) + 1))


def test_adding_a_run_twice_adds_nothing_the_second_time():
    runs = random_runs(17, runs=3)
    spec = PoolSpec(depth=5)
    pool = build_pool(runs, spec)
    assert len(add_runs_to_pool(pool, runs[runs["run_id"] == "run0"], spec)) == 0


def test_adding_a_run_to_a_sampled_pool_is_refused():
    runs = random_runs(18)
    spec = PoolSpec(depth=2, strata=parse_strata("3-20:0.5"))
    with pytest.raises(PoolSpecError, match="rebuild"):
        add_runs_to_pool(build_pool(runs, spec), runs, spec)


# --------------------------------------------------------------------------
# Pools of judgments made elsewhere


def test_a_pool_of_imported_judgments_says_where_it_came_from_and_has_no_depth():
    spec = PoolSpec(source="judgments imported from nist.qrels", order="docno")
    assert PoolSpec.from_dict(spec.to_dict()) == spec
    assert spec.to_dict()["source"] == "judgments imported from nist.qrels"
    assert "source" not in PoolSpec(depth=20).to_dict()  # stored specs of built pools unchanged
    assert spec.is_depth_only
    assert not spec.accepts_late_runs
    assert PoolSpec(depth=20).accepts_late_runs
    with pytest.raises(PoolSpecError, match="no depth or strata"):
        PoolSpec(depth=5, source="x")
    with pytest.raises(PoolSpecError, match="holds imported judgments"):
        add_runs_to_pool(
            pool_of_judged(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"]})), [], spec
        )


def test_pool_of_judged_pairs_judges_every_entry_in_docno_order():
    pairs = pd.DataFrame(
        {"query_id": ["10", "2", "2", "2", "10"], "doc_id": ["z", "b", "B", "a", "z"]}
    )
    pool = pool_of_judged(pairs)
    assert list(pool.columns) == list(POOL_COLUMNS)
    assert pool[["query_id", "doc_id"]].values.tolist() == [
        ["2", "B"],
        ["2", "a"],
        ["2", "b"],
        ["10", "z"],
    ]
    assert pool["order"].tolist() == [1, 2, 3, 1]
    assert pool["sampled"].all()
    assert set(pool["stratum"]) == {1}
    assert set(pool["inclusion_probability"]) == {1.0}
    assert set(pool["best_rank"]) == set(pool["n_runs"]) == set(pool["batch"]) == {0}


# --------------------------------------------------------------------------
# Input errors


def test_empty_runs_frame_is_a_clear_error():
    empty = pd.DataFrame({"run_id": [], "query_id": [], "doc_id": [], "score": []})
    with pytest.raises(PoolInputError, match="no rows"):
        build_pool(empty, PoolSpec(depth=10))


def test_runs_frame_without_a_column_is_a_clear_error():
    with pytest.raises(PoolInputError, match="lacks the column"):
        build_pool(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"]}), PoolSpec(depth=10))


@pytest.mark.parametrize(
    ("score", "message"),
    [("high", "column score of the runs frame is not double"), (float("nan"), "missing values")],
)
def test_runs_frame_with_a_bad_score_is_a_clear_error(score, message):
    runs = pd.DataFrame({"run_id": ["r"], "query_id": ["1"], "doc_id": ["a"], "score": [score]})
    with pytest.raises(PoolInputError, match=message):
        build_pool(runs, PoolSpec(depth=10))


def test_no_run_files_is_a_clear_error():
    with pytest.raises(PoolInputError, match="no run files"):
        pool_from_run_files([], PoolSpec(depth=10))


# --------------------------------------------------------------------------
# From files, and the TSV export


def test_pool_from_run_files_reads_ranks_and_reports_progress(tmp_path: Path):
    (tmp_path / "a.txt").write_text("1 Q0 x 1 2 ta\n1 Q0 y 2 1 ta\n")
    (tmp_path / "b.txt").write_text("1 Q0 y 1 2 tb\n1 Q0 z 2 1 tb\n")
    steps: list[int] = []
    paths = [tmp_path / "a.txt", tmp_path / "b.txt"]
    pool = pool_from_run_files(paths, PoolSpec(depth=1), progress=steps.append)
    assert pool_as_dict(pool) == {("1", "x"): (1, 1), ("1", "y"): (1, 1)}
    assert steps == [1, 1]


def test_pool_from_run_files_lists_the_problems_of_every_bad_file(tmp_path: Path):
    (tmp_path / "good.txt").write_text("1 Q0 x 1 2 good\n")
    (tmp_path / "bad.txt").write_text("1 Q0 x 1 2 bad\n1 Q0 x 2 1 bad\n")
    (tmp_path / "worse.txt").write_text("1 Q0 x 1 high worse\n")
    (tmp_path / "copy.txt").write_text("1 Q0 y 1 2 good\n")
    (tmp_path / "two.txt").write_text("1 Q0 y 1 2 t1\n1 Q0 z 1 2 t2\n")
    paths = sorted(tmp_path.iterdir())
    with pytest.raises(InputError) as raised:
        pool_from_run_files(paths, PoolSpec(depth=10))
    message = str(raised.value)
    assert "bad.txt:2: docno 'x' appears twice" in message
    assert "worse.txt:1: score 'high' is not a number" in message
    assert "run tag 'good' is also the tag of" in message
    assert "two.txt: more than one run tag ('t1', 't2')" in message
    assert raised.value.total == 4


def test_rank_run_files_keeps_only_the_depth_asked_for(tmp_path: Path):
    (tmp_path / "a.txt").write_text("".join(f"1 Q0 d{i} {i} {-i} a\n" for i in range(1, 51)))
    ranked = rank_run_files([tmp_path / "a.txt"], max_depth=7)
    assert ranked.table.column("rank").to_pylist() == list(range(1, 8))


def test_cached_runs_rank_like_the_run_files(tmp_path: Path):
    texts = ["1 Q0 a 1 2 ta\n1 Q0 b 2 2 ta\n2 Q0 c 1 1 ta\n", "1 Q0 b 1 3 tb\n1 Q0 d 2 1 tb\n"]
    paths, caches = [], []
    for index, text in enumerate(texts):
        paths.append(tmp_path / f"{index}.txt")
        paths[-1].write_text(text)
        caches.append(tmp_path / f"{index}.parquet")
        write_run_cache(read_run(paths[-1]), caches[-1])
    from_files = rank_run_files(paths, max_depth=5).table.to_pylist()
    assert rank_run_caches(caches, max_depth=5).table.to_pylist() == from_files
    assert from_files[:2] == [
        {"run_id": "ta", "query_id": "1", "doc_id": "b", "rank": 1},
        {"run_id": "ta", "query_id": "1", "doc_id": "a", "rank": 2},
    ]


def test_tsv_export_by_hand():
    runs = runs_from_text(
        "1 Q0 a 1 9 r1\n1 Q0 b 2 8 r1\n1 Q0 c 3 7 r1\n1 Q0 d 4 6 r1\n",
        "1 Q0 b 1 9 r2\n",
    )
    spec = PoolSpec(depth=1, strata=parse_strata("2-4:0.5"), order="docno")
    pool = build_pool(runs, spec)
    lines = tsv_text(pool).splitlines()
    assert (
        lines[0]
        == "topic\tdocno\tbest_rank\tn_runs\tstratum\tinclusion_probability\tsampled\torder"
    )
    assert lines[1] == "1\ta\t1\t1\t1\t1.0\t1\t1"
    assert lines[2] == "1\tb\t1\t2\t1\t1.0\t1\t2"
    # c and d form stratum 2 (size 2, rate 0.5): one is drawn, the other has no order.
    drawn, left = lines[3].split("\t"), lines[4].split("\t")
    assert {drawn[1], left[1]} == {"c", "d"}
    assert drawn[4:] == ["2", "0.5", "1", "3"]
    assert left[4:] == ["2", "0.5", "0", ""]
    assert len(lines) == 5


def test_tsv_writer_writes_to_a_path_or_a_stream(tmp_path: Path):
    pool = build_pool(random_runs(19), PoolSpec(depth=3, strata=parse_strata("4-20:0.3")))
    stream = io.StringIO()
    assert write_pool_tsv(pool, stream) == len(pool)
    write_pool_tsv(pool, tmp_path / "pool.tsv")
    assert (tmp_path / "pool.tsv").read_text() == stream.getvalue()
    probabilities = pd.read_csv(io.StringIO(stream.getvalue()), sep="\t")["inclusion_probability"]
    assert probabilities.tolist() == pool["inclusion_probability"].tolist()


def test_tsv_is_the_same_for_a_pool_read_back_from_records_in_any_order():
    # As the Django side reads PoolEntry.values(): order None becomes NaN in a float column.
    pool = build_pool(random_runs(21), PoolSpec(depth=3, strata=parse_strata("4-20:0.3")))
    records = pool.astype(object).where(pool.notna(), None).to_dict("records")
    read_back = pd.DataFrame.from_records(records).sample(frac=1.0, random_state=1)
    assert tsv_text(read_back) == tsv_text(pool)
