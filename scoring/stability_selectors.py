"""Ranking stability of a pool: is the budget enough to rank its runs?"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from django.core.cache import cache

from judging import selectors as judging_selectors
from pooling import selectors as pooling_selectors
from pooling.models import Pool
from scoring.core import stability
from scoring.core.evaluation import evaluate
from scoring.core.measures.catalog import TREC
from scoring.core.sample_eval import evaluate_sample
from scoring.core.stability import Spread, Stability
from scoring.selectors import (
    DEFAULT_MEASURES,
    INFERRED_MEASURES,
    POOL_EVAL_OPTIONS,
    NothingJudged,
    ScoringError,
    campaign_runs,
    pool_state,
    state_time,
    state_version,
    stratified_qrels,
)

STABILITY_MEASURES = DEFAULT_MEASURES


@dataclass(frozen=True)
class StabilityReport:
    """The runs' ranking at each checkpoint of the labelling, and for a sampled
    pool the inferred measure now with its spread over topics."""

    stability: Stability
    inferred_measure: str | None
    inferred: dict[str, Spread]
    state_time: str


def pool_ranking_stability(
    *, pool: Pool, measure: str = "map", steps: int = stability.DEFAULT_STEPS
) -> StabilityReport:
    """`scoring.core.stability` on the pool's final labels, in the order they were first
    made; cached until a judgment, an adjudication or the pool changes."""
    if measure not in STABILITY_MEASURES:
        raise ScoringError(f"measure {measure!r}: one of {', '.join(STABILITY_MEASURES)}")
    as_of = state_time(pool)
    key = f"stability:{pool.pk}:{measure}:{steps}:{state_version(pool)}"
    report = cache.get(key)
    if report is None:
        report = _ranking_stability(pool, measure, steps, as_of)
        cache.set(key, report, timeout=3600)
    return report


def _ranking_stability(pool: Pool, measure: str, steps: int, state_time: str) -> StabilityReport:
    state = pool_state(pool)
    if state.labels.empty:
        raise NothingJudged("nothing is judged in this pool yet")
    tagged = campaign_runs(pool)
    tags = [tag for tag, _ in tagged]
    runs = [table for _, table in tagged]
    requested = TREC.select([measure])
    options = POOL_EVAL_OPTIONS

    def score(labels: pd.DataFrame) -> dict[str, float]:
        summary = evaluate(labels[["query_id", "doc_id", "relevance"]], runs, requested, options)
        values = summary.measures[0].summary
        assert values is not None
        return {tag: float(values[i][0]) for i, tag in enumerate(tags)}

    labels = state.labels.merge(
        judging_selectors.labelling_times(pool), on=["query_id", "doc_id"], how="left"
    )
    result = stability.ranking_stability(labels, score, measure=measure, steps=steps)
    inferred_measure, inferred = None, {}
    if pooling_selectors.pool_samples(pool):
        frame = evaluate_sample(stratified_qrels(state), runs).to_frame()
        inferred_measure = INFERRED_MEASURES[0]
        per_topic = frame[(frame["measure"] == inferred_measure) & (frame["query_id"] != "all")]
        per_topic = per_topic.assign(run_id=[tags[i] for i in per_topic["run"]])
        inferred = stability.spread_over_topics(per_topic)
    return StabilityReport(result, inferred_measure, inferred, state_time)
