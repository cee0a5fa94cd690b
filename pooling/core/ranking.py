"""Rank submitted runs and find each pooled document's best rank. Pure core, no Django.

Runs are ranked by the decided rule, `ranking_rule.rank_order` (score
descending, then docno descending in byte order; the rank column ignored),
the function the scorer ranks with too; this module gives it the group code
of each (run, topic) and turns its order into the ranked table.

Both the pool builder (`pooling.core.strategies`) and the budget tables
(`pooling.core.budget`) start here: runs are ranked once, cut at the deepest rank
anything will look at, and reduced to one row per (topic, docno).

Frames used here:

- runs: `run_id, query_id, doc_id` (strings), `score` (float64); one row per
  document a run retrieved for a topic. A pandas DataFrame or an Arrow table.
- ranked (`RankedRuns.table`): `run_id, query_id, doc_id` (strings),
  `rank` (int32, 1-based), sorted by run, topic and rank.
- pooled documents (`pooled_documents`): `query_id, doc_id` (strings),
  `best_rank` and `n_runs` (int64).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from workbench.core.file_input import map_in_threads
from workbench.core.problems import InputError, Problem
from workbench.core.ranking_rule import rank_order
from workbench.core.run_files import ParsedRun, read_run, read_run_cache
from workbench.core.string_keys import sort_words
from workbench.core.topic_ids import topic_sort_key

RUN_COLUMNS = ("run_id", "query_id", "doc_id", "score")
type RunsLike = pd.DataFrame | pa.Table
type FilesDone = Callable[[int], object]
"""Called with the number of files just finished (1); `tqdm(...).update` fits."""


class PoolInputError(ValueError):
    """The runs given to the pooler are empty or not a valid runs frame."""


@dataclass(frozen=True)
class RankedRuns:
    """Runs with their recomputed ranks, cut at `depth` (None: not cut).

    table columns: run_id, query_id, doc_id (string), rank (int32, 1-based);
    rows sorted by run, topic and rank.
    """

    table: pa.Table
    depth: int | None

    def require_depth(self, depth: int) -> None:
        """Raise unless ranks down to `depth` were kept."""
        if self.depth is not None and self.depth < depth:
            raise ValueError(
                f"runs were ranked only down to rank {self.depth}; {depth} is needed here"
            )

    @property
    def deepest_rank(self) -> int:
        """The largest rank present (0 without rows)."""
        ranks = self.table.column("rank")
        return int(pc.max(ranks).as_py() or 0) if len(ranks) else 0


# --------------------------------------------------------------------------
# Input frames


def as_runs_table(runs: RunsLike) -> pa.Table:
    """The runs as an Arrow table of exactly `run_id, query_id, doc_id, score`.

    Raises PoolInputError for a frame without rows, a missing column, a
    missing value or a score that is not a finite number.
    """
    table = (
        pa.Table.from_pandas(runs, preserve_index=False) if isinstance(runs, pd.DataFrame) else runs
    )
    missing = [column for column in RUN_COLUMNS if column not in table.column_names]
    if missing:
        raise PoolInputError(
            f"the runs frame lacks the column(s) {', '.join(missing)}; "
            f"expected {', '.join(RUN_COLUMNS)}"
        )
    if table.num_rows == 0:
        raise PoolInputError("no runs to pool: the runs frame has no rows")
    types = {"run_id": pa.string(), "query_id": pa.string(), "doc_id": pa.string()}
    types["score"] = pa.float64()
    table = pa.table({name: _column_as(table, name, types[name]) for name in RUN_COLUMNS})
    table = table.combine_chunks()
    for column in RUN_COLUMNS:
        if table.column(column).null_count:
            raise PoolInputError(f"the runs frame has missing values in column {column}")
    if not pc.all(pc.is_finite(table.column("score"))).as_py():
        raise PoolInputError("the runs frame has a score that is not a finite number")
    return table


def _column_as(table: pa.Table, name: str, type_: pa.DataType) -> pa.ChunkedArray:
    column = table.column(name)
    if pa.types.is_dictionary(column.type):
        column = pc.cast(column, column.type.value_type)
    try:
        return pc.cast(column, type_)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
        raise PoolInputError(f"column {name} of the runs frame is not {type_}: {error}") from None


# --------------------------------------------------------------------------
# Ranking


def rank_runs(runs: RunsLike, *, max_depth: int | None = None) -> RankedRuns:
    """Rank every (run, topic) by the decided rule; keep ranks <= max_depth.

    `runs` has the columns `run_id, query_id, doc_id, score` (see the module
    docstring); each (run_id, query_id, doc_id) is expected at most once, as
    `run_files.read_run` guarantees. Cutting at the deepest rank the caller
    needs keeps memory proportional to the pool, not to the runs.
    """
    if max_depth is not None and max_depth < 1:
        raise ValueError(f"max_depth must be at least 1, not {max_depth}")
    table = as_runs_table(runs)
    return RankedRuns(_rank_table(table, _group_codes(table), max_depth), max_depth)


def _rank_table(table: pa.Table, group: np.ndarray, max_depth: int | None) -> pa.Table:
    """The ranked table of a checked runs table whose rows have group codes
    for (run_id, query_id), ranked by the decided rule (`ranking_rule`)."""
    score = table.column("score").to_numpy()
    order, rank = rank_order(group, score, table.column("doc_id"), max_depth=max_depth)
    ranked = table.select(["run_id", "query_id", "doc_id"]).take(pa.array(order))
    return ranked.append_column("rank", pa.array(rank.astype(np.int32))).combine_chunks()


def _group_codes(table: pa.Table) -> np.ndarray:
    """One int64 code per (run_id, query_id) pair.

    Rows are first cut into segments of equal (run_id, query_id), comparing
    each row with the one before; only the segment heads are hashed. When
    every pair is one segment (run files are written topic by topic) the
    segment number itself is the code, so the codes never decrease.
    """
    run_id, query_id = table.column("run_id"), table.column("query_id")
    changes = _differs_from_previous(run_id) | _differs_from_previous(query_id)
    segment = np.cumsum(changes) - 1
    heads = pa.array(np.flatnonzero(changes))
    run_codes, _ = _codes(run_id.take(heads))
    topic_codes, n_topics = _codes(query_id.take(heads))
    head_group = run_codes * n_topics + topic_codes
    if len(np.unique(head_group)) == len(head_group):
        return segment
    return head_group[segment]


def _differs_from_previous(column: pa.ChunkedArray) -> np.ndarray:
    """True for the first row and every row whose value differs from the row before."""
    n = len(column)
    differs = np.ones(n, dtype=bool)
    if n > 1:
        differs[1:] = pc.not_equal(column.slice(1), column.slice(0, n - 1)).to_numpy()
    return differs


def _codes(column: pa.ChunkedArray) -> tuple[np.ndarray, int]:
    """Integer codes in order of first appearance, and how many values there are."""
    encoded = pc.dictionary_encode(column).combine_chunks()
    return encoded.indices.to_numpy().astype(np.int64), len(encoded.dictionary)


# --------------------------------------------------------------------------
# Ranking many files


class _ReadResult(NamedTuple):
    name: str
    problems: list[Problem]
    total: int
    ranked: RankedRuns | None


def rank_run_files(
    paths: Sequence[str | Path], *, max_depth: int | None, progress: FilesDone | None = None
) -> RankedRuns:
    """Read, check and rank run files, one run per file, in parallel threads.

    Each file goes through `run_files.read_run`. Raises `InputError`
    listing the problems of every bad file, plus a problem for a file with
    more than one run tag or with a tag another file also has (either would
    count one system twice). Only ranks <= max_depth are kept, so memory
    follows the pool size rather than the total size of the runs.
    `progress(1)` is called from the worker threads as each file is done.
    """
    if not paths:
        raise PoolInputError("no runs to pool: no run files given")

    def read_and_rank(path: str | Path) -> _ReadResult:
        parsed = read_run(path)
        result = _ReadResult(parsed.name, parsed.problems.sorted(), parsed.problems.total, None)
        if parsed.ok and not _has_one_tag(parsed):
            shown = ", ".join(repr(tag) for tag in parsed.tags[:5])
            reason = f"more than one run tag ({shown}); a file holds exactly one run"
            result = result._replace(problems=[Problem(parsed.name, 0, reason)], total=1)
        elif parsed.ok:
            # One run: its topic codes are the group codes, and read_run has
            # checked every value already.
            table = parsed.table.select(list(RUN_COLUMNS))
            group = parsed.topic_codes.indices.to_numpy().astype(np.int64)
            ranked = RankedRuns(_rank_table(table, group, max_depth), max_depth)
            result = result._replace(ranked=ranked)
        if progress is not None:
            progress(1)
        return result

    results = list(map_in_threads(read_and_rank, paths))
    tag_problems = _shared_tag_problems(results)
    total = sum(result.total for result in results) + len(tag_problems)
    if total:
        listed = [problem for result in results for problem in result.problems]
        raise InputError(listed + tag_problems, total)
    return _concat_ranked([result.ranked for result in results if result.ranked], max_depth)


def rank_run_caches(
    paths: Sequence[str | Path], *, max_depth: int | None, progress: FilesDone | None = None
) -> RankedRuns:
    """Rank the Parquet caches written by `run_files.write_run_cache`, in parallel threads."""
    if not paths:
        raise PoolInputError("no runs to pool: no cached runs given")

    def read_and_rank(path: str | Path) -> RankedRuns:
        ranked = rank_runs(read_run_cache(path), max_depth=max_depth)
        if progress is not None:
            progress(1)
        return ranked

    return _concat_ranked(list(map_in_threads(read_and_rank, paths)), max_depth)


def _has_one_tag(parsed: ParsedRun) -> bool:
    """Whether every line has the first line's tag (cheaper than listing the tags)."""
    return bool(pc.all(pc.equal(parsed.table.column("run_id"), parsed.tag)).as_py())


def _shared_tag_problems(results: Iterable[_ReadResult]) -> list[Problem]:
    first_file: dict[str, str] = {}
    problems = []
    for result in results:
        if result.ranked is None or not result.ranked.table.num_rows:
            continue
        tag = result.ranked.table.column("run_id")[0].as_py()
        if tag in first_file:
            reason = f"run tag {tag!r} is also the tag of {first_file[tag]}"
            problems.append(Problem(result.name, 0, reason))
        else:
            first_file[tag] = result.name
    return problems


def _concat_ranked(parts: list[RankedRuns], depth: int | None) -> RankedRuns:
    tables = [part.table for part in parts]
    return RankedRuns(pa.concat_tables(tables).combine_chunks(), depth)


# --------------------------------------------------------------------------
# From ranks to pooled documents


def pooled_documents(ranked: RankedRuns, depth: int | Mapping[str, int]) -> pa.Table:
    """One row per (topic, docno) ranked within the pooled depth by some run.

    `depth` is one depth for every topic, or a depth per topic (topics
    missing from the mapping contribute nothing). Returns an Arrow table
    with the columns query_id, doc_id, best_rank (the smallest rank over
    runs) and n_runs (how many runs rank the document within the depth),
    sorted by topic (`topic_sort_key`) then docno in byte order.
    """
    within = _rows_within_depth(ranked, depth)
    grouped = within.group_by(["query_id", "doc_id"], use_threads=False).aggregate(
        [("rank", "min"), ("rank", "count")]
    )
    grouped = pa.table(
        {
            "query_id": grouped.column("query_id"),
            "doc_id": grouped.column("doc_id"),
            "best_rank": pc.cast(grouped.column("rank_min"), pa.int64()),
            "n_runs": grouped.column("rank_count"),
        }
    )
    return sort_by_topic_then_docno(grouped)


def _rows_within_depth(ranked: RankedRuns, depth: int | Mapping[str, int]) -> pa.Table:
    """The ranked rows whose rank is within their topic's depth."""
    table = ranked.table
    if isinstance(depth, int):
        ranked.require_depth(depth)
        if ranked.depth is not None and depth >= ranked.depth:
            return table  # cut at this depth already
        return table.filter(pc.less_equal(table.column("rank"), depth))
    encoded = pc.dictionary_encode(table.column("query_id")).combine_chunks()
    per_topic = np.array([depth.get(t, 0) for t in encoded.dictionary.to_pylist()], dtype=np.int64)
    ranked.require_depth(int(per_topic.max(initial=0)))
    per_row = per_topic[encoded.indices.to_numpy()]
    return table.filter(pa.array(table.column("rank").to_numpy() <= per_row))


# --------------------------------------------------------------------------
# Topic order


def topic_positions(query_id: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """For each row, the position of its topic in `topic_sort_key` order."""
    encoded = pc.dictionary_encode(query_id)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    topics = encoded.dictionary.to_pylist()
    position_of = np.empty(len(topics), dtype=np.int64)
    position_of[sorted(range(len(topics)), key=lambda i: topic_sort_key(topics[i]))] = np.arange(
        len(topics)
    )
    return position_of[encoded.indices.to_numpy()]


def sort_by_topic_then_docno(table: pa.Table) -> pa.Table:
    """Sort by topic (`topic_sort_key`), then by docno in byte order.

    Docnos are compared as integer words (`string_keys.sort_words`), which
    Arrow sorts faster than strings; docnos too long for that as strings.
    """
    keys = {"_topic": topic_positions(table.column("query_id"))}
    words = sort_words(table.column("doc_id"))
    if words is None:
        keys["_doc_id"] = table.column("doc_id")
    else:
        keys |= {f"_word{i}": word for i, word in enumerate(words)}
    order = pc.sort_indices(pa.table(keys), sort_keys=[(name, "ascending") for name in keys])
    return table.take(order)
