"""Pool construction: depth-k and stratified pools, shuffled. Pure core, no Django.

A pool is built in four steps, each a function below:

1. rank the runs (`pooling.core.ranking.rank_runs`: score descending, then docno
   descending in byte order; the rank column of a run file is ignored);
2. `stratify`: one row per (topic, docno) ranked within the pooled depth,
   with its best rank, run count and stratum, and its place in the seeded
   draw order of that stratum;
3. `sample`: in each (topic, stratum), the first `round_half_up(rate *
   size)` documents of the draw order are sampled; a depth-k pool is one
   stratum 1-k at rate 1.0, so everything in it is sampled;
4. presentation order, over the sampled entries of each topic: a seeded
   random permutation (default) or docno order.

`build_pool(runs, spec)` does all four; `pool_from_run_files(paths, spec)`
starts from TREC run files; `add_runs_to_pool(pool, runs, spec)` returns
the entries a late run adds to a depth-k pool.

Pool frame (`POOL_COLUMNS`), one row per (topic, docno):

- query_id, doc_id (str)
- best_rank (int64): the smallest rank any run gives the document;
- n_runs (int64): how many runs rank it within the topic's pooled depth
  (the bottom of its last stratum);
- stratum (int64): 1-based number of its stratum in `spec.strata_for(topic)`;
- inclusion_probability (float64): drawn / size of that (topic, stratum);
- sampled (bool): drawn for judging;
- order (Int64, nullable): 1-based presentation position among the sampled
  entries of the topic; missing (<NA>) for unsampled entries, which nobody
  judges;
- batch (int64): 0 for the entries of the first build, 1, 2, ... for those
  added by each later `add_runs_to_pool`.

Rows are sorted by topic (numeric ids numerically, then the others), then
order, then, for the unsampled entries that have none, docno.

Randomness. Every random choice uses its own PCG64 stream, seeded from a
BLAKE2b hash of (seed, purpose, topic, ...): the draw of a stratum from
(seed, topic, stratum bounds), the presentation order of a topic from
(seed, topic, first order value). So a topic's pool does not depend on
which other topics or strata exist, and raising a stratum's rate keeps
every document drawn at the lower rate (draws are nested). Only raw 64-bit
outputs of the bit generator are used (NumPy keeps those stable across
releases), and ties among them fall back to docno order, so the same runs
and spec give the same pool, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pooling.core.ranking import (
    FilesDone,
    PoolInputError,
    RankedRuns,
    RunsLike,
    pooled_documents,
    rank_run_files,
    rank_runs,
    topic_positions,
)
from pooling.core.spec import RATE_UNIT, PoolSpec, PoolSpecError, Stratum
from workbench.core.topic_ids import topic_sort_key

__all__ = [
    "POOL_COLUMNS",
    "TSV_HEADER",
    "PoolInputError",
    "add_runs_to_pool",
    "build_pool",
    "draw_counts",
    "order_tsv_lines",
    "pool_from_ranked",
    "pool_from_run_files",
    "pool_of_judged",
    "pool_tsv_lines",
    "rate_units_per_row",
    "sample",
    "sort_pool",
    "stratify",
    "write_pool_tsv",
]

POOL_COLUMNS = (
    "query_id",
    "doc_id",
    "best_rank",
    "n_runs",
    "stratum",
    "inclusion_probability",
    "sampled",
    "order",
    "batch",
)
TSV_HEADER = (
    "topic",
    "docno",
    "best_rank",
    "n_runs",
    "stratum",
    "inclusion_probability",
    "sampled",
    "order",
)


# --------------------------------------------------------------------------
# Random streams


def _random_keys(size: int, name: tuple[object, ...]) -> np.ndarray:
    """`size` raw 64-bit outputs of the PCG64 stream called `name`.

    The name is hashed with BLAKE2b into the stream's entropy, so streams of
    different names are independent and one name always gives the same keys.
    """
    text = json.dumps(name, separators=(",", ":")).encode()
    entropy = int.from_bytes(hashlib.blake2b(text, digest_size=16).digest(), "little")
    return np.random.PCG64(np.random.SeedSequence(entropy)).random_raw(size)


def _keys_from_streams(group: np.ndarray, stream_names: Sequence[tuple[object, ...]]) -> np.ndarray:
    """A random key per row: group g's rows take, in row order, the keys of
    the stream `stream_names[g]`."""
    sizes = np.bincount(group, minlength=len(stream_names))
    keys = np.empty(len(group), dtype=np.uint64)
    keys[np.argsort(group, kind="stable")] = np.concatenate(
        [np.empty(0, np.uint64)]
        + [_random_keys(int(size), name) for size, name in zip(sizes, stream_names, strict=True)]
    )
    return keys


def _positions_within(group: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """1-based position of each row in its group sorted by `keys`; equal keys
    keep row order. With random keys, a uniform random permutation."""
    # Sort by key, then stably by group: the same order as lexsort((keys,
    # group)), faster because the group pass is a radix sort on small ints.
    # Random keys are distinct, so the key sort need not be stable (several
    # times faster); it is when two keys are equal, to keep row order.
    by_key = np.argsort(keys)
    sorted_keys = keys[by_key]
    if np.any(sorted_keys[1:] == sorted_keys[:-1]):
        by_key = np.argsort(keys, kind="stable")
    small = np.uint16 if group.max(initial=0) < 2**16 else np.int64
    order = by_key[np.argsort(group[by_key].astype(small), kind="stable")]
    sizes = np.bincount(group)
    starts = np.cumsum(sizes) - sizes
    positions = np.empty(len(group), dtype=np.int64)
    positions[order] = np.arange(len(group)) - starts[group[order]] + 1
    return positions


# --------------------------------------------------------------------------
# Building a pool


def build_pool(runs: RunsLike, spec: PoolSpec) -> pd.DataFrame:
    """The pool of `runs` (columns run_id, query_id, doc_id, score) under `spec`.

    Returns the pool frame described in the module docstring. Raises
    PoolInputError when `runs` is empty or lacks a column.
    """
    return pool_from_ranked(rank_runs(runs, max_depth=spec.max_depth), spec)


def pool_from_run_files(
    paths: Sequence[str | Path], spec: PoolSpec, *, progress: FilesDone | None = None
) -> pd.DataFrame:
    """The pool of TREC run files (one run per file), for `make_pool`.

    Files are read with `run_files.read_run` in parallel threads; `progress`
    is called with 1 after each file (pass `tqdm(total=len(paths)).update`).
    Raises `InputError` listing the problems of every bad file.
    """
    ranked = rank_run_files(paths, max_depth=spec.max_depth, progress=progress)
    return pool_from_ranked(ranked, spec)


def pool_from_ranked(ranked: RankedRuns, spec: PoolSpec) -> pd.DataFrame:
    """The pool of runs already ranked (at least down to `spec.max_depth`)."""
    return sample(stratify(ranked, spec, order_full_strata=False), spec)


def stratify(ranked: RankedRuns, spec: PoolSpec, *, order_full_strata: bool = True) -> pd.DataFrame:
    """The documents of every stratum, and their place in the stratum's draw order.

    Columns: query_id, doc_id, best_rank, n_runs, stratum (as in the pool
    frame), size (documents in that topic and stratum) and draw (1-based
    position in the stratum's seeded draw order: a sample of k documents is
    those with draw <= k). Sorted by topic, then docno.

    A stratum at rate 1.0 is drawn whole whatever the order, so building a
    pool skips ordering it (`order_full_strata=False`: draw is 1 there);
    scaling the rates down needs that order, so it is kept by default.
    """
    topics = sorted(pc.unique(ranked.table.column("query_id")).to_pylist(), key=topic_sort_key)
    strata = [spec.strata_for(topic) for topic in topics]
    depths = {topic: spec.pooled_depth(topic) for topic in topics}
    same_depth = len(set(depths.values())) == 1
    documents = pooled_documents(ranked, spec.max_depth if same_depth else depths).to_pandas()
    # Rows come sorted by topic, so factorizing numbers them in `topics` order.
    topic_index = pd.factorize(documents["query_id"])[0].astype(np.int64)
    stratum = _stratum_numbers(topic_index, documents["best_rank"].to_numpy(), strata)
    in_stratum = stratum > 0
    documents = documents[in_stratum].reset_index(drop=True)
    topic_index, stratum = topic_index[in_stratum], stratum[in_stratum]

    # One draw per (topic, stratum), from a stream named by its bounds.
    most_strata = max(len(topic_strata) for topic_strata in strata)
    group_keys, group = np.unique(topic_index * most_strata + stratum - 1, return_inverse=True)
    bounds = [strata[key // most_strata][key % most_strata] for key in group_keys.tolist()]
    documents["stratum"] = stratum
    documents["size"] = np.bincount(group)[group]
    ordered = np.array([order_full_strata or b.rate < 1.0 for b in bounds], dtype=bool)[group]
    draw = np.ones(len(group), dtype=np.int64)
    if ordered.any():
        kept, ordered_group = np.unique(group[ordered], return_inverse=True)
        stream_names = [
            (spec.seed, "draw", topics[group_keys[g] // most_strata], bounds[g].lo, bounds[g].hi)
            for g in kept.tolist()
        ]
        draw[ordered] = _positions_within(
            ordered_group, _keys_from_streams(ordered_group, stream_names)
        )
    documents["draw"] = draw
    return documents


def _stratum_numbers(
    topic_index: np.ndarray, best_rank: np.ndarray, strata_per_topic: list[tuple[Stratum, ...]]
) -> np.ndarray:
    """1-based number of each row's stratum in its topic's strata, 0 when in none."""
    span = max(strata[-1].hi for strata in strata_per_topic) + 1
    bounds = np.array(
        [
            (topic * span + stratum.lo, topic * span + stratum.hi, number)
            for topic, strata in enumerate(strata_per_topic)
            for number, stratum in enumerate(strata, start=1)
        ],
        dtype=np.int64,
    )
    lows, highs, numbers = bounds.T
    # One topic's strata are ordered and disjoint: the only stratum that can
    # hold a rank is the last one starting at or before it.
    position = topic_index * span + best_rank
    candidate = np.maximum(np.searchsorted(lows, position, side="right") - 1, 0)
    inside = (lows[candidate] <= position) & (position <= highs[candidate])
    return np.where(inside, numbers[candidate], 0)


def draw_counts(sizes: np.ndarray, rate_units: np.ndarray) -> np.ndarray:
    """How many documents to draw from strata of `sizes` at rates in millionths.

    round_half_up(rate * size), exact in integers (Python's round would take
    2.5 to 2, and rate * size in floats can land just below .5), and at
    least one from a non-empty stratum with a positive rate, so that no
    stratum in the pool is left without a judged document.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    rate_units = np.asarray(rate_units, dtype=np.int64)
    drawn = (2 * rate_units * sizes + RATE_UNIT) // (2 * RATE_UNIT)
    return np.where((sizes > 0) & (rate_units > 0), np.maximum(drawn, 1), 0)


def rate_units_per_row(query_id: pd.Series, stratum: np.ndarray, spec: PoolSpec) -> np.ndarray:
    """The rate (in millionths) of each row's stratum under `spec`."""
    codes, topics = pd.factorize(query_id)
    table = np.zeros((len(topics), len(spec.strata) + 1), dtype=np.int64)
    for index, topic in enumerate(topics):
        units = [s.rate_units for s in spec.strata_for(str(topic))]
        table[index, : len(units)] = units
    return table[codes, np.asarray(stratum) - 1]


def sample(
    stratified: pd.DataFrame,
    spec: PoolSpec,
    *,
    order_after: Mapping[str, int] | None = None,
    batch: int = 0,
) -> pd.DataFrame:
    """Draw each stratum's sample and give the sampled entries their order.

    Takes the frame of `stratify` (rows sorted by topic then docno) and
    returns the pool frame (module docstring). Orders start after
    `order_after[topic]` (default 0) and entries get `batch`.
    """
    size = stratified["size"].to_numpy()
    rate_units = rate_units_per_row(stratified["query_id"], stratified["stratum"], spec)
    drawn = draw_counts(size, rate_units)
    sampled = stratified["draw"].to_numpy() <= drawn
    topic, topics = pd.factorize(stratified["query_id"])
    after = np.array([(order_after or {}).get(str(t), 0) for t in topics], dtype=np.int64)
    position = _presentation_positions(topic, topics, after, sampled, spec)
    order = np.where(sampled, after[topic] + position, 0)
    pool = stratified.drop(columns=["size", "draw"])
    pool["inclusion_probability"] = drawn / size
    pool["sampled"] = sampled
    pool["order"] = pd.arrays.IntegerArray(order, mask=~sampled)  # <NA> where unsampled
    pool["batch"] = np.full(len(pool), batch, dtype=np.int64)
    return pool.iloc[_rows_in_pool_order(topic, sampled, position)].reset_index(drop=True)


def _presentation_positions(
    topic: np.ndarray,
    topics: Sequence[object],
    after: np.ndarray,
    sampled: np.ndarray,
    spec: PoolSpec,
) -> np.ndarray:
    """1-based place of each sampled row in its topic's presentation order,
    0 for the others; rows sorted by topic then docno, `topic` numbering
    them by `topics`. A shuffled order comes from a stream per topic named
    by the seed, the topic and the order value (`after`) it continues."""
    group = topic[sampled]
    if spec.order == "shuffled":
        names = [(spec.seed, "order", str(t), int(a)) for t, a in zip(topics, after, strict=True)]
        keys = _keys_from_streams(group, names)
    else:
        keys = np.arange(len(group), dtype=np.uint64)  # row order is docno order
    position = np.zeros(len(topic), dtype=np.int64)
    position[sampled] = _positions_within(group, keys)
    return position


def _rows_in_pool_order(topic: np.ndarray, sampled: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Row indices in `sort_pool` order, for rows sorted by topic then docno:
    each topic's sampled rows by position, then its other rows as they come.
    Placed directly, without a sort."""
    sizes = np.bincount(topic)
    starts = np.cumsum(sizes) - sizes
    n_sampled = np.bincount(topic[sampled], minlength=len(sizes))
    unsampled_before = np.cumsum(~sampled) - ~sampled  # unsampled rows before each row
    unsampled_place = unsampled_before - unsampled_before[starts][topic]  # ... in its topic
    place = np.where(sampled, position - 1, n_sampled[topic] + unsampled_place)
    rows = np.empty(len(topic), dtype=np.int64)
    rows[starts[topic] + place] = np.arange(len(topic))
    return rows


def sort_pool(pool: pd.DataFrame) -> pd.DataFrame:
    """Rows by topic (numeric ids numerically first), then order, then (for
    the unsampled, which have no order) docno; a fresh 0..n-1 index."""
    topic = topic_positions(pa.array(pool["query_id"], pa.string()))
    doc = pd.factorize(pool["doc_id"], sort=True)[0]
    return pool.iloc[np.lexsort((doc, _order_key(pool), topic))].reset_index(drop=True)


def _order_key(pool: pd.DataFrame) -> np.ndarray:
    """The order column with <NA> after every order value."""
    order = pool["order"].astype("Int64")  # also from floats with NaN, or objects with None
    return order.fillna(np.iinfo(np.int64).max).to_numpy(dtype=np.int64)


# --------------------------------------------------------------------------
# Pools of judgments made elsewhere


def pool_of_judged(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pool frame of (query_id, doc_id) pairs judged elsewhere, such as a
    published qrels file: every entry sampled, stratum 1, inclusion
    probability 1, presented in docno order (byte order); best_rank and
    n_runs are 0, as no run ranked them. Repeated pairs count once.
    """
    frame = pairs[["query_id", "doc_id"]].astype(str).drop_duplicates()
    frame = frame.sort_values(["query_id", "doc_id"]).reset_index(drop=True)
    n = len(frame)
    frame["best_rank"] = np.zeros(n, dtype=np.int64)
    frame["n_runs"] = np.zeros(n, dtype=np.int64)
    frame["stratum"] = np.ones(n, dtype=np.int64)
    frame["inclusion_probability"] = np.ones(n)
    frame["sampled"] = np.ones(n, dtype=bool)
    frame["order"] = pd.array(frame.groupby("query_id").cumcount() + 1, dtype="Int64")
    frame["batch"] = np.zeros(n, dtype=np.int64)
    return sort_pool(frame[list(POOL_COLUMNS)])


# --------------------------------------------------------------------------
# Late runs


def add_runs_to_pool(pool: pd.DataFrame, runs: RunsLike, spec: PoolSpec) -> pd.DataFrame:
    """The entries late `runs` add to an existing depth-k `pool`; only those.

    `pool` is the existing pool frame (at least query_id, doc_id, order; and
    batch if kept). Documents already in the pool are left as they are (their
    judgments with them), even where a late run ranks them higher. The new
    entries get best_rank and n_runs over the late runs (no earlier run
    ranked them within the depth, or they would be pooled), the next batch
    number, and order values after the topic's largest, shuffled among
    themselves with their own stream (or in docno order). Raises
    PoolSpecError for a spec that samples (a rate below 1.0): adding to a
    sample would change every inclusion probability, so rebuild instead.
    """
    if spec.source:
        raise PoolSpecError(
            "this pool holds imported judgments, not the runs' documents: "
            "build a pool from the runs to pool them"
        )
    if not spec.is_depth_only:
        raise PoolSpecError(
            "late runs can be added only to a pool that judges every pooled document "
            "(every rate 1.0); rebuild a sampled pool instead"
        )
    stratified = stratify(rank_runs(runs, max_depth=spec.max_depth), spec)
    existing = pd.MultiIndex.from_frame(pool[["query_id", "doc_id"]].astype(str))
    keys = pd.MultiIndex.from_frame(stratified[["query_id", "doc_id"]])
    new = stratified[~keys.isin(existing)].reset_index(drop=True)
    orders = pool["order"].astype("Int64").groupby(pool["query_id"].astype(str)).max().fillna(0)
    batch = int(pool["batch"].max()) + 1 if "batch" in pool and len(pool) else 1
    return sample(new, spec, order_after={str(t): int(o) for t, o in orders.items()}, batch=batch)


# --------------------------------------------------------------------------
# TSV export


def pool_tsv_lines(pool: pd.DataFrame) -> Iterator[str]:
    """The pool as TSV lines, each ending in a newline, header first.

    Columns `TSV_HEADER`; rows sorted as `sort_pool` does (topic, then
    order, then docno for the unsampled). Byte-stable formatting: integers
    in decimal; inclusion_probability as Python's `repr` of the double (the
    shortest text that reads back to the same number: 1.0, 0.8,
    0.6666666666666666); sampled as 1 or 0; order empty for unsampled rows.
    """
    yield "\t".join(TSV_HEADER) + "\n"
    if not len(pool):
        return
    rows = sort_pool(pool)
    probability = rows["inclusion_probability"].to_numpy(dtype=np.float64)
    distinct, which = np.unique(probability, return_inverse=True)
    columns = [
        pa.array(rows["query_id"].to_numpy(dtype=object), pa.string()),
        pa.array(rows["doc_id"].to_numpy(dtype=object), pa.string()),
        *(
            pc.cast(pa.array(rows[c].to_numpy(dtype=np.int64)), pa.string())
            for c in ("best_rank", "n_runs", "stratum")
        ),
        pa.array(np.array([repr(float(p)) for p in distinct], dtype=object)[which], pa.string()),
        pa.array(np.where(rows["sampled"].to_numpy(dtype=bool), "1", "0"), pa.string()),
        pc.fill_null(pc.cast(pa.array(rows["order"].astype("Int64")), pa.string()), ""),
    ]
    for line in pc.binary_join_element_wise(*columns, "\t").to_pylist():
        yield line + "\n"


def write_pool_tsv(pool: pd.DataFrame, out: IO[str] | str | Path) -> int:
    """Write `pool_tsv_lines(pool)` to a text stream or a path; returns the row count."""
    if isinstance(out, str | Path):
        with open(out, "w", encoding="utf-8", newline="") as stream:
            return write_pool_tsv(pool, stream)
    out.writelines(pool_tsv_lines(pool))
    return len(pool)


def order_tsv_lines(entries: pd.DataFrame) -> Iterator[str]:
    """Each topic's documents to judge in presentation order: `topic order docno` lines."""
    yield "topic\torder\tdocno\n"
    to_judge = sort_pool(entries[entries["sampled"]])
    for query_id, order, doc_id in zip(
        to_judge["query_id"], to_judge["order"], to_judge["doc_id"], strict=True
    ):
        yield f"{query_id}\t{order}\t{doc_id}\n"
