"""Reusability of a pool: each run left out of the pool in turn, its reports and their job."""

from __future__ import annotations

from typing import Any

from judging import selectors as judging_selectors
from pooling import selectors as pooling_selectors
from pooling.core.spec import PoolSpec
from pooling.models import Pool
from scoring.core.analysis.reusability import (
    Reusability,
    ReusabilityError,
    ReusabilityInputs,
    default_measure,
    report_measure,
    reusability_of,
)
from scoring.core.measures.base import RequestedMeasure
from scoring.selectors import (
    POOL_EVAL_OPTIONS,
    NothingJudged,
    ScoringError,
    pool_state,
    refuse_unjudged,
    state_version,
    stratified_qrels,
)
from workbench.core.run_files import read_run_cache
from workbench.core.topic_ids import topic_sort_key
from workbench.jobs import job_latest
from workbench.models import Job


def pool_reusability_inputs(*, pool: Pool) -> ReusabilityInputs:
    """What `scoring.core.analysis.reusability` needs for a stored pool: the runs it was
    built from (late additions too), the scoring options of `pool_scores`, the
    teams, and

    - a depth-k pool: its final labels as qrels, and the depth each judged
      topic is pooled to now (the spec of its last revision);
    - a sampled pool (`pooling.selectors.pool_samples`): the stratified qrels its scores page
      scores infAP on, and the deepest rank each topic samples now.

    Raises ScoringError for a pool it cannot be made for (`reusability_depths`),
    NothingJudged before any final label."""
    labels = judging_selectors.final_labels(pool)
    if labels.empty:
        raise NothingJudged("nothing is judged in this pool yet")
    sampled, depths = reusability_depths(pool)
    runs = [read_run_cache(run.cache_file.path) for run in pool.runs.order_by("tag")]
    if not runs:
        raise ScoringError(f"pool {pool.pk} was built from no runs: there is nothing to leave out")
    if sampled:  # as pool_scores reads it, so that the full scores are the same
        qrels = stratified_qrels(pool_state(pool))
    else:
        qrels = labels[["query_id", "doc_id", "relevance"]]
    topics = sorted(set(qrels["query_id"]), key=topic_sort_key)
    return ReusabilityInputs(
        qrels=qrels,
        runs=runs,
        depth={topic: depths[topic] for topic in topics if topic in depths},
        options=POOL_EVAL_OPTIONS,
        groups=pool_run_teams(pool),
        sampled=sampled,
    )


def reusability_depths(pool: Pool) -> tuple[bool, dict[str, int]]:
    """Whether the pool is sampled, and each topic's depth now: for a depth-k pool
    its k (`PoolSpec.full_depth`), for a sampled one the deepest rank its strata
    reach (`covered_depth`): a run's contribution is what it ranks down to there.
    Raises ScoringError for imported judgments, and for ranks left out between
    strata (gaps), where a run's top ranks are not what it brought to the pool."""
    spec = PoolSpec.from_dict(pool.spec)
    if spec.source:
        raise ScoringError(
            f"pool {pool.pk} holds judgments imported from {spec.source}, not a pool of "
            "runs: there is nothing to leave out"
        )
    if spec.is_adaptive:
        raise ScoringError(
            f"pool {pool.pk} is adaptive ({spec.strategy}): which documents were judged "
            "depended on every run's earlier finds, so leaving a run's documents out of its "
            "judgments does not show the pool built without it (docs/adaptive_pooling.md, "
            "rank bias and reusability); replay the strategy without the run instead "
            "(manage.py simulate_pooling)"
        )
    sampled = pooling_selectors.pool_samples(pool)
    depths = {}
    for topic, plan in pooling_selectors.topic_specs(pool).items():
        depth = plan.covered_depth(topic) if sampled else plan.full_depth(topic)
        if depth is None:
            strata = " ".join(str(stratum) for stratum in plan.strata_for(topic))
            raise ScoringError(
                f"topic {topic} of pool {pool.pk} leaves ranks out ({strata}): a run's top "
                "ranks are not what it brought to the pool, so it cannot be left out"
            )
        depths[topic] = depth
    return sampled, depths


# The job kind that makes reports (`scoring.jobs.pool_reusability`).
REUSABILITY_JOB = "scoring.jobs.pool_reusability"


def reusability_params(pool: Pool, measure: str) -> dict[str, Any]:
    """A report job's params: the pool, the measure and the labels' state they
    were computed from (a new judgment calls for a new report)."""
    return {"pool": pool.pk, "measure": measure, "version": f"{state_version(pool)}:{measure}"}


def reusability_job(pool: Pool, measure: str) -> Job | None:
    """The newest job reporting on the pool's current labels with this measure (a
    failed one too: its error says why), or None."""
    return job_latest(kind=REUSABILITY_JOB, params=reusability_params(pool, measure))


def pool_reusability(
    *, pool: Pool, measure: str | None = None, progress: Any = None
) -> Reusability:
    """`scoring.core.analysis.reusability` on the pool: each of its runs left out in turn
    (`pool_reusability_inputs` says which pools can be), with `measure` (default
    `reusability_default_measure`). `progress` (a job's JobProgress) advances
    by one per run left out."""
    inputs = pool_reusability_inputs(pool=pool)
    requested = _report_measure(measure or inputs.default_measure, sampled=inputs.sampled)
    groups = inputs.groups
    if progress is not None:
        progress(done=0, total=len(inputs.runs) + len(set((groups or {}).values())))
    try:
        return reusability_of(
            inputs,
            requested,
            groups=groups,
            progress=progress.advance if progress is not None else None,
        )
    except ReusabilityError as error:
        raise ScoringError(str(error)) from None


def pool_run_teams(pool: Pool) -> dict[str, str] | None:
    """Run tag -> team of the pool's runs, for leaving each team out in turn; an
    organiser's own run is a group of its own. None when no run has a team."""
    runs = list(pool.runs.select_related("team").order_by("tag"))
    if not any(run.team_id for run in runs):
        return None
    return {run.tag: run.team.name if run.team else f"(run {run.tag})" for run in runs}


def reusability_default_measure(pool: Pool) -> str:
    """infAP for a sampled pool, map for a depth-k one."""
    return default_measure(sampled=pooling_selectors.pool_samples(pool))


def reusability_measure(measure: str, *, pool: Pool) -> RequestedMeasure:
    """The one per-topic number a report on this pool can be about (an inferred
    measure for a sampled pool, a trec_eval one otherwise); ScoringError otherwise."""
    return _report_measure(measure, sampled=pooling_selectors.pool_samples(pool))


def _report_measure(measure: str, *, sampled: bool) -> RequestedMeasure:
    try:
        return report_measure(measure, sampled=sampled)
    except ReusabilityError as error:
        raise ScoringError(str(error)) from None


def reusability_refusal(pool: Pool) -> None:
    """Raise (NothingJudged, or ScoringError saying why) for a pool whose runs cannot
    be left out, before a job is started; cheap, from the specs and two counts."""
    reusability_depths(pool)
    if not pool.runs.exists():
        raise ScoringError(f"pool {pool.pk} was built from no runs: there is nothing to leave out")
    refuse_unjudged(pool)
