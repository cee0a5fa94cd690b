"""Score runs against qrels with trec_eval 10.0's measures. Pure core, no Django.

    qrels = read_qrels("qrels.txt")
    runs = [read_run(path).table for path in paths]
    result = evaluate(qrels, runs, TREC.select(["map", "P.10"]))
    result.to_frame()  # run, run_id, query_id, measure, value

qrels: a frame with query_id, doc_id, relevance. runs: one frame per run
with query_id, doc_id, score, run_id. All runs are ranked and scored in one
pass (see `rankings`), which is what makes scoring many runs fast.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from scoring.core.measures.base import RequestedMeasure, ValueKind
from scoring.core.measures.rankings import (
    EvalOptions,
    Frame,
    JudgedRankings,
    Judgments,
    rank_and_judge,
)
from scoring.core.measures.summary import SummaryContext

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EvalOptions", "Evaluation", "MeasureValues", "evaluate", "evaluate_ranked"]

# (measure name, query_id, value, kind); values are floats, or str for text measures.
type Row = tuple[str, str, float | str, ValueKind]


@dataclass(frozen=True)
class MeasureValues:
    """One requested measure's values.

    per_topic: (groups, values) for each evaluated (run, topic) of the Evaluation.
    summary: (runs, values), or None for a measure without a summary.
    """

    requested: RequestedMeasure
    per_topic: np.ndarray
    summary: np.ndarray | None


@dataclass(frozen=True)
class Evaluation:
    """Per-topic and summary values of every requested measure for every run.

    Groups are the evaluated (run, topic) pairs, ordered by run then by topic
    in trec_eval's order: group_run and group_topic index `run_tags` and `topics`.
    """

    topics: tuple[str, ...]
    run_tags: tuple[str, ...]
    group_run: np.ndarray
    group_topic: np.ndarray
    measures: tuple[MeasureValues, ...]

    def groups_of(self, run: int) -> range:
        """The groups (topics evaluated) of one run."""
        start, stop = np.searchsorted(self.group_run, [run, run + 1])
        return range(int(start), int(stop))

    def rows(self, run: int, *, per_topic: bool = True, summary: bool = True) -> Iterator[Row]:
        """(measure name, query_id, value, kind) in trec_eval's printing order:
        each topic's values, then the summaries under the query_id "all"."""
        if per_topic:
            for group in self.groups_of(run):
                topic = self.topics[self.group_topic[group]]
                for values in self.measures:
                    if values.requested.measure.per_query:
                        yield from _named(values, topic, values.per_topic[group])
        if summary:
            for values in self.measures:
                if values.summary is not None:
                    yield from _named(values, "all", values.summary[run])

    def to_frame(self) -> pd.DataFrame:
        """Long format: run (index), run_id, query_id ("all" for summaries), measure, value."""
        records = [
            (run, tag, topic, name, value)
            for run, tag in enumerate(self.run_tags)
            for name, topic, value, _ in self.rows(run)
        ]
        import pandas as pd

        return pd.DataFrame(records, columns=["run", "run_id", "query_id", "measure", "value"])


def _named(values: MeasureValues, topic: str, row: np.ndarray) -> Iterator[Row]:
    kind = values.requested.measure.kind
    for name, value in zip(values.requested.names, row, strict=True):
        yield name, topic, value, kind


def evaluate(
    qrels: Frame,
    runs: Sequence[Frame],
    measures: Sequence[RequestedMeasure],
    options: EvalOptions | None = None,
) -> Evaluation:
    """Score each run of `runs` with `measures` (from `Catalog.select`)."""
    options = options or EvalOptions()
    judgments = Judgments(qrels, options.relevance_level)
    return evaluate_ranked(rank_and_judge(judgments, runs, options), measures)


def evaluate_ranked(ranked: JudgedRankings, measures: Sequence[RequestedMeasure]) -> Evaluation:
    """Score runs already ranked and judged (`rank_and_judge`), for instance the same
    rankings judged again by other labels (`JudgedRankings.relabelled`)."""
    judgments, options = ranked.judgments, ranked.options
    n_runs, n_topics = len(ranked.run_tags), len(judgments.topics)
    evaluated = np.bincount(ranked.group_run, minlength=n_runs)
    context = SummaryContext(
        num_queries=np.full(n_runs, n_topics) if options.complete else evaluated,
        complete=options.complete,
        judgments=judgments,
        run_tags=ranked.run_tags,
    )
    per_topic = [_empty_values(requested, len(ranked.num_ret)) for requested in measures]
    with np.errstate(divide="ignore", invalid="ignore"):
        # Batches outside, measures inside: measures share what a batch caches.
        for groups, rankings in ranked.batches():
            for requested, values in zip(measures, per_topic, strict=True):
                values[groups] = requested.compute(rankings)
        results = tuple(
            _finish(requested, values, ranked, context, n_topics)
            for requested, values in zip(measures, per_topic, strict=True)
        )
    return Evaluation(
        topics=judgments.topics,
        run_tags=ranked.run_tags,
        group_run=ranked.group_run,
        group_topic=ranked.group_topic,
        measures=results,
    )


def _is_text(requested: RequestedMeasure) -> bool:
    return requested.measure.kind in (ValueKind.TAG, ValueKind.STRING)


def _empty_values(requested: RequestedMeasure, n_groups: int) -> np.ndarray:
    dtype = object if _is_text(requested) else np.float64
    return np.empty((n_groups, len(requested.names)), dtype=dtype)


def _finish(
    requested: RequestedMeasure,
    per_topic: np.ndarray,
    ranked: JudgedRankings,
    context: SummaryContext,
    n_topics: int,
) -> MeasureValues:
    """Apply trec_eval's reset for placeholder rankings, and summarise per run."""
    measure = requested.measure
    if measure.reset_for_missing_topic:
        per_topic[ranked.placeholder] = "" if _is_text(requested) else 0.0
    summary = None
    if measure.summary is not None:
        by_topic = np.zeros((n_topics, len(context.num_queries), len(requested.names)))
        if not _is_text(requested):
            by_topic[ranked.group_topic, ranked.group_run] = per_topic
        summary = measure.summary(by_topic, context)
    return MeasureValues(requested, per_topic, summary)
