"""What a pool will cost before it is built. Pure core, no Django.

Everything here starts from runs ranked once (`pooling.core.ranking.rank_runs`,
`rank_run_caches` or `rank_run_files`), cut at the deepest rank asked about:
the best rank of each (topic, docno) is computed once, and every depth is
then a count over it.

- `whatif`: pool size per topic and in total for a list of depths and pool
  specs, and the judgments still needed given those already made;
- `fit_depth`, `fit_depth_per_topic`, `fit_scale`: the largest depth, or
  the largest scale factor on the strata rates, whose pool fits a budget;
- `run_contributions`, `run_overlap`: what each run brings to a depth-k pool.

Frames taken here:

- judged: `query_id, doc_id` (strings), one row per document already judged
  in a topic (other columns are ignored, repeats are harmless).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pooling.core.ranking import RankedRuns, pooled_documents
from pooling.core.spec import PoolSpec, spec_label
from pooling.core.strategies import draw_counts, pool_from_ranked, rate_units_per_row, stratify
from workbench.core.topic_ids import topic_sort_key

DEFAULT_DEPTHS = tuple(range(10, 101, 10))
COUNT_COLUMNS = ("candidates", "pool_size", "judged", "needed")


# --------------------------------------------------------------------------
# The budget against what is spent


def pool_cost(entries: pd.DataFrame, judged: pd.DataFrame | None) -> int:
    """The new judgments a pool frame asks for: its sampled entries nobody judged yet."""
    sampled = entries["sampled"].to_numpy(dtype=bool)
    return int((sampled & ~judged_mask(entries, judged)).sum())


# --------------------------------------------------------------------------
# What-if table


@dataclass(frozen=True)
class WhatIf:
    """Pool sizes under several schemes.

    per_topic columns: scheme (str: "depth 10" or the spec's strata),
    depth (Int64: the depth, <NA> for a spec), query_id, then the counts:
    candidates (documents in the pool, sampled or not), pool_size (sampled
    documents, the judgments the pool asks for), judged (of those, already
    judged) and needed (pool_size - judged). Rows by scheme (depths
    ascending, then the specs as given), then topic. totals: the same
    without query_id, summed over topics.
    """

    per_topic: pd.DataFrame
    totals: pd.DataFrame


def whatif(
    ranked: RankedRuns,
    *,
    depths: Sequence[int] = DEFAULT_DEPTHS,
    specs: Sequence[PoolSpec] = (),
    judged: pd.DataFrame | None = None,
) -> WhatIf:
    """Pool sizes for each depth in `depths` and each spec in `specs`.

    `ranked` must hold ranks down to the deepest depth and spec. A spec's
    numbers are those of the pool it builds (its seed decides which
    documents are sampled, and so how many of them are already judged).
    """
    if any(depth < 1 for depth in depths):
        raise ValueError(f"depths must be at least 1: {list(depths)}")
    parts = []
    if depths:
        parts.append(_depth_counts(ranked, sorted(set(depths)), judged))
    for spec in specs:
        parts.append(_spec_counts(ranked, spec, judged))
    if not parts:
        raise ValueError("give at least one depth or spec")
    per_topic = pd.concat(parts, ignore_index=True)
    totals = per_topic.groupby(["scheme", "depth"], sort=False, dropna=False)[
        list(COUNT_COLUMNS)
    ].sum()
    return WhatIf(per_topic, totals.reset_index())


def _depth_counts(
    ranked: RankedRuns, depths: list[int], judged: pd.DataFrame | None
) -> pd.DataFrame:
    topics, pool_size, needed = _depth_curves(ranked, judged, max(depths))
    # Columns of the curves are depths 0..the deepest the runs go (any deeper
    # depth is the same pool); keep the asked ones, depth-major.
    columns = np.minimum(depths, pool_size.shape[1] - 1)
    pool_size, needed = pool_size[:, columns].T.ravel(), needed[:, columns].T.ravel()
    return pd.DataFrame(
        {
            "scheme": np.repeat([f"depth {depth}" for depth in depths], len(topics)),
            "depth": pd.array(np.repeat(depths, len(topics)), dtype="Int64"),
            "query_id": np.tile(topics, len(depths)),
            "candidates": pool_size,
            "pool_size": pool_size,
            "judged": pool_size - needed,
            "needed": needed,
        }
    )


def _depth_curves(
    ranked: RankedRuns, judged: pd.DataFrame | None, limit: int
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The topics, and pool_size[t, d] and needed[t, d] for each topic t and
    every depth d in 0..limit: one cumulative histogram of best ranks.

    The curves stop at the runs' deepest rank, past which nothing changes, so
    their memory follows the data, not the depth asked for."""
    ranked.require_depth(limit)
    limit = max(min(limit, ranked.deepest_rank), 1)
    documents = pooled_documents(ranked, limit)
    topics = sorted(pc.unique(documents.column("query_id")).to_pylist(), key=topic_sort_key)
    topic_index = pc.index_in(documents.column("query_id"), value_set=pa.array(topics, pa.string()))
    topic_index = topic_index.to_numpy().astype(np.int64)
    best_rank = documents.column("best_rank").to_numpy()
    unjudged = ~judged_mask(documents, judged)
    pool_size = _cumulative_counts(topic_index, best_rank, len(topics), limit)
    needed = _cumulative_counts(topic_index[unjudged], best_rank[unjudged], len(topics), limit)
    return topics, pool_size, needed


def _cumulative_counts(
    topic_index: np.ndarray, best_rank: np.ndarray, n_topics: int, limit: int
) -> np.ndarray:
    """counts[t, d]: documents of topic t with best rank <= d, for d in 0..limit."""
    width = limit + 1
    histogram = np.bincount(topic_index * width + best_rank, minlength=n_topics * width)
    return histogram.reshape(n_topics, width).cumsum(axis=1)


def _spec_counts(ranked: RankedRuns, spec: PoolSpec, judged: pd.DataFrame | None) -> pd.DataFrame:
    pool = pool_from_ranked(ranked, spec)
    sampled = pool["sampled"].to_numpy()
    judged_sampled = sampled & judged_mask(pool, judged)
    counts = pd.DataFrame(
        {
            "query_id": pool["query_id"],
            "candidates": 1,
            "pool_size": sampled.astype(np.int64),
            "judged": judged_sampled.astype(np.int64),
        }
    )
    per_topic = counts.groupby("query_id", sort=False).sum().reset_index()
    per_topic["needed"] = per_topic["pool_size"] - per_topic["judged"]
    per_topic.insert(0, "scheme", spec_label(spec))
    per_topic.insert(1, "depth", pd.array([pd.NA] * len(per_topic), dtype="Int64"))
    return per_topic


# --------------------------------------------------------------------------
# Fitting a budget


@dataclass(frozen=True)
class DepthFit:
    """The largest depth whose pool needs at most the budget, and that pool's numbers."""

    depth: int
    pool_size: int
    needed: int


@dataclass(frozen=True)
class ScaleFit:
    """The largest scale factor on the strata rates whose pool fits the budget."""

    factor: float
    spec: PoolSpec
    pool_size: int
    needed: int


def fit_depth(
    ranked: RankedRuns, budget: int, *, judged: pd.DataFrame | None = None
) -> DepthFit | None:
    """The largest depth, the same for every topic, whose pool needs <= `budget`
    new judgments (documents already judged cost nothing).

    None when even depth 1 needs more. The depth is at most the rank the
    runs were cut at (or, uncut, their deepest rank): deeper pools are the
    same pool.
    """
    _, pool_size, needed = _depth_curves(ranked, judged, ranked.depth or ranked.deepest_rank)
    return _largest_fitting_depth(pool_size.sum(axis=0), needed.sum(axis=0), budget)


def fit_depth_per_topic(
    ranked: RankedRuns, budget: int | Mapping[str, int], *, judged: pd.DataFrame | None = None
) -> pd.DataFrame:
    """For each topic, the largest depth whose pool of that topic fits its budget.

    `budget` is one budget for every topic or one per topic (topics left out
    get 0). Columns: query_id, depth (0 when not even depth 1 fits),
    pool_size, needed; rows by topic. The depths can be given to
    `PoolSpec(topic_depths=...)`.
    """
    limit = ranked.depth or ranked.deepest_rank
    topics, pool_size, needed = _depth_curves(ranked, judged, limit)
    rows = []
    for index, topic in enumerate(topics):
        topic_budget = budget if isinstance(budget, int) else budget.get(topic, 0)
        fit = _largest_fitting_depth(pool_size[index], needed[index], topic_budget)
        rows.append((topic, *((fit.depth, fit.pool_size, fit.needed) if fit else (0, 0, 0))))
    return pd.DataFrame(rows, columns=["query_id", "depth", "pool_size", "needed"])


def _largest_fitting_depth(
    pool_size: np.ndarray, needed: np.ndarray, budget: int
) -> DepthFit | None:
    """Needed judgments never decrease with depth: the last depth within budget."""
    depth = int(np.searchsorted(needed, budget, side="right")) - 1
    if depth < 1:
        return None
    return DepthFit(depth, int(pool_size[depth]), int(needed[depth]))


def fit_scale(
    ranked: RankedRuns,
    spec: PoolSpec,
    budget: int,
    *,
    judged: pd.DataFrame | None = None,
    step: float = 0.01,
) -> ScaleFit | None:
    """The largest multiple of `step` by which to scale the rates of
    `spec.strata` (see `PoolSpec.scaled`) so that the pool needs <= `budget`
    new judgments; None when even `step` needs more.

    Draws are nested (a higher rate keeps every document of a lower one), so
    needed judgments never decrease with the factor, and the numbers are
    those of the pool `spec.scaled(factor)` builds with the same seed. The
    factor stops where every rate reaches 1.0.
    """
    if not step > 0:
        raise ValueError(f"step must be positive, not {step}")
    needed_at = _needed_by_factor(ranked, spec, judged)
    # Past the factor that takes the smallest rate to 1.0, nothing changes.
    positive = [s.rate for s in spec.strata if s.rate > 0]
    steps = max(1, math.ceil(round(1 / (min(positive) * step), 6))) if positive else 1
    # Binary search for the last step count n whose factor n * step fits.
    if needed_at(step)[1] > budget:
        return None
    low, high = 1, steps
    while low < high:
        middle = (low + high + 1) // 2
        if needed_at(round(middle * step, 9))[1] <= budget:
            low = middle
        else:
            high = middle - 1
    factor = round(low * step, 9)
    pool_size, needed = needed_at(factor)
    return ScaleFit(factor, spec.scaled(factor), pool_size, needed)


def _needed_by_factor(
    ranked: RankedRuns, spec: PoolSpec, judged: pd.DataFrame | None
) -> Callable[[float], tuple[int, int]]:
    """A function factor -> (pool_size, needed) for `spec.scaled(factor)`.

    Stratifies once; each call only recounts, per (topic, stratum), how many
    of its first k documents in draw order are not judged yet.
    """
    stratified = stratify(ranked, spec)
    unjudged = ~judged_mask(stratified, judged)
    groups = stratified.groupby(["query_id", "stratum"], sort=False).ngroup().to_numpy()
    by_draw = np.lexsort((stratified["draw"].to_numpy(), groups))
    cumulative = np.r_[0, np.cumsum(unjudged[by_draw])]
    first_row = np.r_[0, np.cumsum(np.bincount(groups))[:-1]]
    heads = stratified.iloc[by_draw[first_row]]

    def counts(factor: float) -> tuple[int, int]:
        units = rate_units_per_row(
            heads["query_id"], heads["stratum"].to_numpy(), spec.scaled(factor)
        )
        drawn = draw_counts(heads["size"].to_numpy(), units)
        needed = cumulative[first_row + drawn] - cumulative[first_row]
        return int(drawn.sum()), int(needed.sum())

    return counts


# --------------------------------------------------------------------------
# Per-run statistics


def run_contributions(ranked: RankedRuns, *, depth: int) -> pd.DataFrame:
    """What each run brings to the depth-`depth` pool.

    Columns: run_id, documents ((topic, docno) pairs it ranks <= depth),
    unique (of those, the ones no other run ranks <= depth). Rows by run_id.
    """
    runs, pair, _ = _run_pair_codes(ranked, depth)
    n_runs = np.bincount(pair)[pair]
    run_ids = _run_ids(ranked)
    return pd.DataFrame(
        {
            "run_id": run_ids,
            "documents": np.bincount(runs, minlength=len(run_ids)),
            "unique": np.bincount(runs[n_runs == 1], minlength=len(run_ids)),
        }
    )


def judged_share(
    ranked: RankedRuns, judged: pd.DataFrame | None, *, ks: Sequence[int]
) -> pd.DataFrame:
    """How much of each run's top k is judged, for each k: a run whose top
    documents are mostly unjudged is scored on guesses.

    Columns: run_id, k, documents ((topic, docno) pairs it ranks <= k),
    judged (of those, judged by anyone), share (the mean over the run's
    topics of each topic's judged share, as the reusability report counts it;
    NaN for a run with nothing ranked). Rows by run_id, then k ascending.
    """
    run_ids = _run_ids(ranked)
    frames = []
    for k in sorted(set(ks)):
        ranked.require_depth(k)
        table = ranked.table.filter(pc.less_equal(ranked.table.column("rank"), k))
        runs = pc.index_in(table.column("run_id"), value_set=pa.array(run_ids)).to_numpy()
        done = judged_mask(table, judged)
        documents = np.bincount(runs, minlength=len(run_ids))
        hits = np.bincount(runs[done], minlength=len(run_ids))
        # Each (run, topic) weighs the same, however many documents the run returned.
        topic, _ = pd.factorize(table.column("query_id").to_pandas())
        group = runs.astype(np.int64) * (int(topic.max(initial=-1)) + 1) + topic
        groups, inverse = np.unique(group, return_inverse=True)
        topic_share = np.bincount(inverse, done) / np.bincount(inverse)
        run_of_group = groups // (int(topic.max(initial=-1)) + 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.bincount(run_of_group, topic_share, minlength=len(run_ids)) / np.bincount(
                run_of_group, minlength=len(run_ids)
            )
        frames.append(
            pd.DataFrame(
                {"run_id": run_ids, "k": k, "documents": documents, "judged": hits, "share": share}
            )
        )
    if not frames:
        raise ValueError("give at least one k")
    return (
        pd.concat(frames, ignore_index=True)
        .sort_values(["run_id", "k"], kind="stable")
        .reset_index(drop=True)
    )


@dataclass(frozen=True)
class RunOverlap:
    """Square frames indexed by run_id both ways.

    shared: (topic, docno) pairs both runs rank <= depth (the diagonal is a
    run's own count); jaccard: shared / size of the union, 1.0 on the diagonal.
    """

    shared: pd.DataFrame
    jaccard: pd.DataFrame


def run_overlap(ranked: RankedRuns, *, depth: int, chunk: int = 65_536) -> RunOverlap:
    """Pairwise overlap of the runs' depth-`depth` pools.

    Counts with a runs x documents incidence matrix multiplied by its
    transpose, `chunk` documents at a time to bound memory.
    """
    runs, pair, n_pairs = _run_pair_codes(ranked, depth)
    run_ids = _run_ids(ranked)
    shared = np.zeros((len(run_ids), len(run_ids)), dtype=np.float64)
    by_pair = np.argsort(pair, kind="stable")
    runs, pair = runs[by_pair], pair[by_pair]
    bounds = np.searchsorted(pair, np.arange(0, n_pairs + chunk, chunk))
    for start, stop in itertools.pairwise(bounds.tolist()):
        incidence = np.zeros((len(run_ids), chunk), dtype=np.float32)
        incidence[runs[start:stop], pair[start:stop] % chunk] = 1.0
        shared += incidence @ incidence.T
    counts = np.rint(shared).astype(np.int64)
    own = np.diag(counts)
    union = own[:, None] + own[None, :] - counts
    jaccard = np.divide(counts, union, out=np.ones_like(counts, dtype=np.float64), where=union > 0)
    index = pd.Index(run_ids, name="run_id")
    return RunOverlap(
        pd.DataFrame(counts, index=index, columns=index),
        pd.DataFrame(jaccard, index=index, columns=index),
    )


def _run_ids(ranked: RankedRuns) -> list[str]:
    return sorted(pc.unique(ranked.table.column("run_id")).to_pylist())


def _run_pair_codes(ranked: RankedRuns, depth: int) -> tuple[np.ndarray, np.ndarray, int]:
    """For each ranked row within `depth`: its run's index in sorted run ids,
    and a code for its (topic, docno) pair; and the number of pairs."""
    if depth < 1:
        raise ValueError(f"depth must be at least 1, not {depth}")
    ranked.require_depth(depth)
    table = ranked.table
    table = table.filter(pc.less_equal(table.column("rank"), depth))
    runs = pc.index_in(table.column("run_id"), value_set=pa.array(_run_ids(ranked)))
    topic, _ = pd.factorize(table.column("query_id").to_pandas())
    doc, docs = pd.factorize(table.column("doc_id").to_pandas())
    _, pair = np.unique(topic.astype(np.int64) * len(docs) + doc, return_inverse=True)
    return runs.to_numpy().astype(np.int64), pair, int(pair.max(initial=-1)) + 1


# --------------------------------------------------------------------------
# Helpers


def judged_mask(documents: pa.Table | pd.DataFrame, judged: pd.DataFrame | None) -> np.ndarray:
    """Whether each (query_id, doc_id) row of `documents` is in `judged`."""
    if judged is None or not len(judged):
        return np.zeros(len(documents), dtype=bool)
    if isinstance(documents, pa.Table):
        documents = documents.select(["query_id", "doc_id"]).to_pandas()
    keys = pd.MultiIndex.from_frame(documents[["query_id", "doc_id"]].astype(str))
    done = pd.MultiIndex.from_frame(judged[["query_id", "doc_id"]].astype(str))
    return np.asarray(keys.isin(done))
