"""Runs ranked and matched against the qrels: what every measure reads.

trec_eval scores one (run, topic) pair at a time on a list of judgments in
rank order. Here every pair of every run is a *group*, and a batch of groups
is held as one rank-major matrix (rank x group) of judgments, so that each
measure is a handful of numpy operations over all runs and topics at once.

Runs are ranked by the decided rule (trec_eval 10.0's), the function the
pooler ranks with too: `workbench.core.ranking_rule.rank_order`, score (a double)
descending, then docno descending in byte order, the rank column ignored.
The judgment of a retrieved document is its qrels label, `NONPOOL` when the
qrels do not list it, and `UNJUDGED` when they list it with a label below 0
(pooled but not judged).

Frames (`columns`: Arrow tables, pandas frames or plain NumPy columns):
qrels have the columns query_id, doc_id, relevance, and may have more
numeric columns (further aspects, a stratum, ...), which rankings carry
along for the measures that read them (`Rankings.column`); runs have
query_id, doc_id, score, run_id (one run per frame). Each (query_id, doc_id)
must appear at most once per frame (`read_qrels` and `read_run` check it).
Nothing here loads pyarrow or pandas unless it is given their frames.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, wraps
from typing import Concatenate

import numpy as np

from scoring.core.measures.columns import (
    PlainRun,
    Qrels,
    Run,
    Strings,
    arrow_runs,
    concatenated,
    filtered,
    qrels_columns,
    repeated,
    run_tag,
)
from scoring.core.measures.numerics import log2_table
from workbench.core.ranking_rule import rank_order

NONPOOL = -1
UNJUDGED = -2
PAD = np.iinfo(np.int64).min  # the judgment below a ranking's last document
# The document trec_eval 10.0 ranks, alone, for a topic missing from a run under -c.
PLACEHOLDER_DOCNO = "ceci_nest_pas_un_docno"
BATCH_CELLS = 1 << 23  # rank x group cells per batch: bounds memory for very deep runs

# Any qrels or run frame the scorer reads (see the module docstring).
type Frame = Qrels | Run


@dataclass(frozen=True)
class EvalOptions:
    """trec_eval's evaluation options.

    relevance_level: -l, the lowest label counted as relevant.
    max_docs_per_topic: -M, documents scored per topic (the rest are dropped).
    judged_only: -J, drop unjudged documents from the rankings first.
    complete: -c, average over all qrels topics; a topic missing from a
        run is scored on trec_eval's one-document placeholder ranking.
    num_docs_in_collection: -N, used by utility.
    single_precision_scores: rank by scores rounded to 32-bit floats, as
        trec_eval 9 (and the extensions built on it) stored them.
    """

    relevance_level: int = 1
    max_docs_per_topic: int | None = None
    judged_only: bool = False
    complete: bool = False
    num_docs_in_collection: int = 0
    single_precision_scores: bool = False


class LabelCounts:
    """How many judged documents (label >= 0) each topic has at each label of one column.

    label_values: every judgment a ranking can hold (PAD, UNJUDGED, NONPOOL and
    the judged labels), sorted: the columns of per-topic tables.
    num_rel_levels: per topic, trec_eval's number of levels: the highest
    judged label + 1 (0 without judgments).
    """

    def __init__(self, topic: np.ndarray, labels: np.ndarray, n_topics: int) -> None:
        judged = labels >= 0
        order = np.lexsort((labels[judged], topic[judged]))
        topic, labels = topic[judged][order], labels[judged][order]
        starts = np.flatnonzero(
            (np.diff(topic, prepend=-1) != 0) | (np.diff(labels, prepend=-1) != 0)
        )
        self.level_topic, self.level = topic[starts], labels[starts]
        self.level_count = np.diff(starts, append=len(topic))
        self.n_topics = n_topics
        self.num_rel_levels = np.zeros(n_topics, dtype=np.int64)
        np.maximum.at(self.num_rel_levels, self.level_topic, self.level + 1)
        values = np.sort(np.concatenate([[PAD, UNJUDGED, NONPOOL], self.level]).astype(np.int64))
        # (np.unique would load numpy.ma: 10 ms of the command line's start-up)
        self.label_values = values[np.r_[True, values[1:] != values[:-1]]]

    def at_least(self, level: int) -> np.ndarray:
        """Per topic, the judged documents labelled `level` or more."""
        counted = self.level >= level
        return np.bincount(
            self.level_topic[counted], self.level_count[counted], self.n_topics
        ).astype(np.int64)

    def level_counts(self, topic: int) -> dict[int, int]:
        """Number of judged documents at each label of one topic."""
        start, stop = np.searchsorted(self.level_topic, [topic, topic + 1])
        return dict(
            zip(self.level[start:stop].tolist(), self.level_count[start:stop].tolist(), strict=True)
        )


class Judgments:
    """The qrels, indexed once for every run.

    topics: the qrels topics in trec_eval's order (byte order); a topic's
    index in it is its code everywhere else (`topic_codes` finds it).
    columns: the numeric qrels columns besides relevance, in qrels row order.
    row_topic, row_label: the topic code and judgment (label, or UNJUDGED
    below 0) of each qrels row.
    """

    def __init__(self, qrels: Qrels, relevance_level: int) -> None:
        query_id, doc_id, numeric = qrels_columns(qrels)
        self.relevance_level = relevance_level
        self.derived: dict[object, object] = {}  # per-qrels values measures compute once
        # Topics in byte order (str compares by code point: the same order).
        seen = query_id.values.values  # (a string may repeat: see Vocabulary)
        self.topics: tuple[str, ...] = tuple(sorted(set(seen)))
        self.topic_codes = query_id.values.like(list(self.topics))
        self.row_topic = self.topic_codes.codes(query_id.values.like(seen).raw)[query_id.codes]
        self._docs = doc_id.values
        self._index = _PairIndex(self.row_topic, doc_id.codes, len(self._docs))
        labels = np.asarray(numeric["relevance"], dtype=np.int64)
        self.row_label = np.where(labels < 0, UNJUDGED, labels)
        self._label_or_nonpool = np.append(self.row_label, NONPOOL)
        self.columns = {name: values for name, values in numeric.items() if name != "relevance"}
        self.positive_total = int(np.count_nonzero(labels > 0))
        levels = self.label_counts()
        self.label_values = levels.label_values
        self.num_rel = levels.at_least(relevance_level)
        self.num_nonrel = levels.at_least(0) - self.num_rel

    def label_counts(self, column: str = "relevance") -> LabelCounts:
        """The (cached) label counts of `relevance` or of another integer column."""
        key = ("label counts", column)
        if key not in self.derived:
            labels = self.row_label if column == "relevance" else self.columns[column]
            self.derived[key] = LabelCounts(self.row_topic, labels, len(self.topics))
        counts = self.derived[key]
        assert isinstance(counts, LabelCounts)
        return counts

    def rows_of(self, topic: np.ndarray, doc_id: Strings) -> np.ndarray:
        """The qrels row of each (topic code, docno), -1 where the qrels do not list it."""
        return self._index.rows(topic, self._docs.codes(doc_id))

    def labels_at(self, rows: np.ndarray) -> np.ndarray:
        """The judgment of each qrels row (see rows_of): its label, NONPOOL or UNJUDGED."""
        return self._label_or_nonpool[rows]  # row -1 reads the NONPOOL at the end


class _PairIndex:
    """The qrels row of each (topic code, doc code) pair.

    A dense table when topics x docs is small (the usual case: one lookup
    per ranked document), else the sorted pair keys and a binary search.
    """

    DENSE_CELLS = 1 << 22  # 16 MiB of int32

    def __init__(self, topic: np.ndarray, doc: np.ndarray, n_docs: int) -> None:
        self.n_docs = max(n_docs, 1)
        key = topic * self.n_docs + doc
        cells = (int(topic.max(initial=-1)) + 1) * self.n_docs
        self.dense: np.ndarray | None = None
        if cells <= self.DENSE_CELLS:
            self.dense = np.full(cells + 1, -1, dtype=np.int32)  # the last cell stays -1
            self.dense[key] = np.arange(len(key), dtype=np.int32)
            repeated = len(key) - np.count_nonzero(self.dense >= 0)
        else:
            self.order = np.argsort(key, kind="stable")
            self.sorted_key = key[self.order]
            repeated = np.count_nonzero(self.sorted_key[1:] == self.sorted_key[:-1])
        if repeated:
            raise ValueError("the qrels judge a (query_id, doc_id) pair twice")

    def rows(self, topic: np.ndarray, doc: np.ndarray) -> np.ndarray:
        if self.dense is not None:
            # One gather: a pair outside the table reads the -1 past its end.
            key = topic * self.n_docs + doc
            key[(doc < 0) | (topic < 0) | (key >= len(self.dense) - 1)] = len(self.dense) - 1
            return self.dense[key].astype(np.int64)
        rows = np.full(len(doc), -1, dtype=np.int64)
        listed = np.flatnonzero((doc >= 0) & (topic >= 0))
        key = topic[listed] * self.n_docs + doc[listed]
        if len(self.sorted_key):
            at = np.minimum(np.searchsorted(self.sorted_key, key), len(self.sorted_key) - 1)
            found = self.sorted_key[at] == key
            rows[listed[found]] = self.order[at[found]]
        return rows


class Rankings:
    """A batch of groups as rank-major matrices: what a measure computes from.

    label: (depth, groups) judgment at each rank, PAD below num_ret.
    num_ret: (groups,) documents ranked per group (after -M and -J).
    topic: (groups,) topic code, to index the per-topic arrays of `judgments`.
    run_tag: (groups,) the run's tag.
    judgment_row: (depth, groups) the qrels row of each ranked document, -1
        where there is none; None when the qrels have no other columns to read.
    """

    def __init__(
        self,
        label: np.ndarray,
        num_ret: np.ndarray,
        topic: np.ndarray,
        run_tag: np.ndarray,
        judgments: Judgments,
        options: EvalOptions,
        judgment_row: np.ndarray | None = None,
    ) -> None:
        self.label = label
        self.judgment_row = judgment_row
        self.num_ret = num_ret
        self.topic = topic
        self.run_tag = run_tag
        self.judgments = judgments
        self.options = options
        self.level = options.relevance_level
        self.shared: dict[Hashable, object] = {}  # see per_batch

    @property
    def depth(self) -> int:
        return int(self.label.shape[0])

    @cached_property
    def valid(self) -> np.ndarray:
        return np.arange(self.depth)[:, None] < self.num_ret

    @cached_property
    def relevant(self) -> np.ndarray:
        """label >= level: the test most trec_eval measures make."""
        return (self.label >= self.level) & self.valid

    @cached_property
    def relevant_so_far(self) -> np.ndarray:
        """Relevant documents at or above each rank (depth, groups)."""
        return np.cumsum(self.relevant, axis=0, dtype=np.int64)

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        """Judged relevant documents ranked: trec_eval's num_rel_ret."""
        return np.count_nonzero(self.relevant & (self.label >= 0), axis=0).astype(np.int64)

    @cached_property
    def num_rel(self) -> np.ndarray:
        """Judged documents of the topic labelled >= level: trec_eval's num_rel."""
        return self.judgments.num_rel[self.topic]

    @cached_property
    def rank(self) -> np.ndarray:
        """1-based rank of each row, as a float column (depth, 1)."""
        return np.arange(1, self.depth + 1, dtype=np.float64)[:, None]

    @cached_property
    def discount(self) -> np.ndarray:
        """log2(rank + 1), the DCG discount, as a column (depth, 1)."""
        return log2_table(self.depth + 2)[2:, None]

    @cached_property
    def label_code(self) -> np.ndarray:
        """Index of each judgment in `judgments.label_values`, for per-topic tables."""
        return np.searchsorted(self.judgments.label_values, self.label)

    def per_topic(self, table: np.ndarray) -> np.ndarray:
        """Look up a (topics, label_values) table at each cell: (depth, groups)."""
        return table[self.topic, self.label_code]

    def column(self, name: str, missing: float = NONPOOL) -> np.ndarray:
        """A qrels column's value at each cell (depth, groups); `missing` for documents
        the qrels do not list and below num_ret."""
        if name not in self.judgments.columns:
            raise ValueError(f"the qrels have no column {name!r}")
        return self.per_judgment(self.judgments.columns[name], missing)

    def per_judgment(self, values: np.ndarray, missing: float = NONPOOL) -> np.ndarray:
        """`values` (one per qrels row) at each cell (depth, groups); `missing` for
        documents the qrels do not list and below num_ret."""
        assert self.judgment_row is not None  # kept whenever the qrels have more columns
        listed = self.judgment_row >= 0
        cells = np.full(self.judgment_row.shape, missing, dtype=np.result_type(values, missing))
        cells[listed] = values[self.judgment_row[listed]]
        return cells

    def at_cutoffs(self, cumulative: np.ndarray, cutoffs: Sequence[int]) -> np.ndarray:
        """A per-rank running total after the first min(cutoff, num_ret) documents.

        Returns (groups, cutoffs); 0 where no document is counted.
        """
        taken = np.minimum(np.asarray(cutoffs, dtype=np.int64)[None, :], self.num_ret[:, None])
        return self.at_ranks(cumulative, taken)

    def at_ranks(self, cumulative: np.ndarray, taken: np.ndarray) -> np.ndarray:
        """`cumulative` after the first `taken` documents of each group (groups, k); 0 for 0."""
        if self.depth == 0:
            return np.zeros(taken.shape, dtype=cumulative.dtype)
        groups = np.arange(taken.shape[0])[:, None]
        values = cumulative[np.maximum(taken - 1, 0), groups]
        return np.where(taken > 0, values, 0)

    def last(self, cumulative: np.ndarray) -> np.ndarray:
        """`cumulative` after all documents of each group."""
        return self.at_ranks(cumulative, self.num_ret[:, None])[:, 0]


def per_batch[**P, R](
    function: Callable[Concatenate[Rankings, P], R],
) -> Callable[Concatenate[Rankings, P], R]:
    """Compute function(rankings, *args) once per batch: for values several measures
    share (average precision for map and gm_map, DCG for the ndcg family...)."""

    @wraps(function)
    def shared(rankings: Rankings, *args: P.args, **kwargs: P.kwargs) -> R:
        key = (function, args, tuple(kwargs.items()))
        if key not in rankings.shared:
            rankings.shared[key] = function(rankings, *args, **kwargs)
        return rankings.shared[key]  # type: ignore[return-value]

    # functools.wraps's type keeps the signature but is not a Callable to mypy.
    return shared  # type: ignore[return-value]


@dataclass(frozen=True)
class JudgedRankings:
    """Every group of every run, ranked and judged.

    Groups are ordered by run then topic code. Rows are the ranked documents
    kept after -M and -J, ordered by group then rank.
    """

    judgments: Judgments
    options: EvalOptions
    run_tags: tuple[str, ...]
    group_run: np.ndarray
    group_topic: np.ndarray
    placeholder: np.ndarray  # -c: the run lacks the topic; scored on the placeholder
    num_ret: np.ndarray
    row_group: np.ndarray
    row_rank: np.ndarray
    row_label: np.ndarray
    row_judgment: np.ndarray | None  # qrels row of each ranked document; see Rankings

    def relabelled(self, judgments: Judgments) -> JudgedRankings:
        """The same rankings judged by `judgments`: qrels with the same rows (topic
        and docno, row by row) as those these were judged by, other labels. So one
        ranking serves many sets of labels (the pool simulator's judgments so far).

        Needs the qrels row of each ranked document (`rank_and_judge(...,
        with_judgment_rows=True)`), and not -J, which drops rows by their label.
        """
        if self.row_judgment is None:
            raise ValueError("relabelling needs the qrels row of each ranked document")
        if self.options.judged_only:
            raise ValueError("rankings of judged documents only (-J) cannot be relabelled")
        if judgments.topics != self.judgments.topics or len(judgments.row_label) != len(
            self.judgments.row_label
        ):
            raise ValueError("relabelling needs qrels with the same rows")
        return replace(self, judgments=judgments, row_label=judgments.labels_at(self.row_judgment))

    def batches(self) -> Iterator[tuple[np.ndarray, Rankings]]:
        """(group indices, their Rankings), in batches of about BATCH_CELLS cells at most."""
        for groups in _batch_groups(self.num_ret, BATCH_CELLS):
            yield groups, self._rankings(groups)

    def _rankings(self, groups: np.ndarray) -> Rankings:
        n_groups = len(self.num_ret)
        if len(groups) == n_groups:
            rows = slice(None)
            local = self.row_group
        else:
            position = np.full(n_groups, -1)
            position[groups] = np.arange(len(groups))
            local_of_row = position[self.row_group]
            rows = local_of_row >= 0
            local = local_of_row[rows]
        num_ret = self.num_ret[groups]
        depth = int(num_ret.max(initial=0))
        cells = self.row_rank[rows] * len(groups) + local  # rank-major
        tags = np.asarray(self.run_tags, dtype=object)[self.group_run[groups]]
        judgment_row = None
        if self.row_judgment is not None:
            judgment_row = _rank_major(self.row_judgment[rows], cells, (len(groups), depth), -1)
        return Rankings(
            _rank_major(self.row_label[rows], cells, (len(groups), depth), PAD),
            num_ret,
            self.group_topic[groups],
            tags,
            self.judgments,
            self.options,
            judgment_row,
        )


def _rank_major(
    values: np.ndarray, cells: np.ndarray, shape: tuple[int, int], fill: int
) -> np.ndarray:
    """A (depth, groups) matrix of `values` at their rank-major `cells`, `fill` elsewhere.

    Filled in place: several times faster than filling group by group and
    transposing, which copies the whole matrix once more.
    """
    groups, depth = shape
    by_rank = np.full((depth, groups), fill, dtype=np.int64)
    by_rank.ravel()[cells] = values
    return by_rank


def _batch_groups(num_ret: np.ndarray, max_cells: int) -> Iterator[np.ndarray]:
    if len(num_ret) * int(num_ret.max(initial=0)) <= max_cells:
        yield np.arange(len(num_ret))
        return
    # Deep and shallow groups apart, so that padding to the deepest costs little.
    order = np.argsort(num_ret, kind="stable")
    start = 0
    for end in range(1, len(order) + 1):
        if end == len(order) or (end + 1 - start) * max(int(num_ret[order[end]]), 1) > max_cells:
            yield np.sort(order[start:end])
            start = end


def rank_and_judge(
    judgments: Judgments,
    runs: Sequence[Run],
    options: EvalOptions,
    *,
    with_judgment_rows: bool = False,
) -> JudgedRankings:
    """Rank every run's documents per topic and attach their judgments.

    Topics absent from the qrels are ignored, as trec_eval does. Plain runs
    (`columns.PlainRun`) are ranked without Arrow; if any run is a frame,
    all are read as Arrow tables. The qrels row of each ranked document
    (`row_judgment`) is kept when the qrels have more columns, or when asked.
    """
    tables = arrow_runs(runs)
    n_topics = len(judgments.topics)
    if tables is None:
        plain = [run for run in runs if isinstance(run, PlainRun)]
        topic = np.concatenate(
            [np.empty(0, np.int64)]
            + [judgments.topic_codes.codes(run.query_id, in_runs=True) for run in plain]
        )
        lengths = [len(run.score) for run in plain]
        scores = [np.asarray(run.score, dtype=np.float64) for run in plain]
        doc_id = concatenated((run.doc_id for run in plain), arrow=False)
        tags = tuple(run.run_id for run in plain)
    else:
        topic = np.concatenate(
            [np.empty(0, np.int64)]
            + [judgments.topic_codes.codes(table.column("query_id")) for table in tables]
        )
        lengths = [table.num_rows for table in tables]
        scores = [
            np.asarray(table.column("score").to_numpy(), dtype=np.float64) for table in tables
        ]
        doc_id = concatenated((table.column("doc_id") for table in tables), arrow=True)
        tags = tuple(run_tag(table) for table in tables)
    run = np.repeat(np.arange(len(lengths)), lengths)
    score = np.concatenate([np.empty(0), *scores])
    in_qrels = topic >= 0
    if not in_qrels.all():  # (whole columns are not copied for nothing)
        run, topic, score = run[in_qrels], topic[in_qrels], score[in_qrels]
        doc_id = filtered(doc_id, in_qrels)
    group = run * n_topics + topic
    if options.single_precision_scores:
        score = score.astype(np.float32).astype(np.float64)
    present = np.zeros(len(lengths) * n_topics, dtype=bool)
    present[group] = True
    if options.complete:
        missing = np.flatnonzero(~present)
        group = np.concatenate([group, missing])
        topic = np.concatenate([topic, missing % max(n_topics, 1)])
        score = np.concatenate([score, np.ones(len(missing))])
        placeholders = repeated(PLACEHOLDER_DOCNO, len(missing), like=doc_id)
        doc_id = concatenated([doc_id, placeholders], arrow=tables is not None)
    row = judgments.rows_of(topic, doc_id)
    order, rank = rank_order(group, score, doc_id)
    group, row = group[order], row[order]
    label = judgments.labels_at(row)
    starts = np.flatnonzero(rank == 1)
    group_ids = group[starts]
    row_group = np.repeat(np.arange(len(starts)), np.diff(starts, append=len(group)))
    row_rank = rank - 1
    kept = np.ones(len(group), dtype=bool)
    if options.max_docs_per_topic is not None:
        kept &= row_rank < options.max_docs_per_topic
    if options.judged_only:
        kept &= label >= 0
    if not kept.all():
        row_group, label, row = row_group[kept], label[kept], row[kept]
        row_rank = _ranks(row_group, len(group_ids))
    return JudgedRankings(
        judgments=judgments,
        options=options,
        run_tags=tags,
        group_run=group_ids // max(n_topics, 1),
        group_topic=group_ids % max(n_topics, 1),
        placeholder=~present[group_ids],
        num_ret=np.bincount(row_group, minlength=len(group_ids)).astype(np.int64),
        row_group=row_group,
        row_rank=row_rank,
        row_label=label,
        row_judgment=row if judgments.columns or with_judgment_rows else None,
    )


def _ranks(row_group: np.ndarray, n_groups: int) -> np.ndarray:
    """0-based position of each row within its group (rows sorted by group)."""
    starts = np.searchsorted(row_group, np.arange(n_groups))
    return np.arange(len(row_group)) - starts[row_group]
