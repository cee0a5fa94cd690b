"""A pool's leaderboard: ranked runs with significance tests, its job, and its pictures' data."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow.compute as pc
from django.core.cache import cache

from pooling.models import Pool
from scoring.core.analysis.leaderboard import (
    Leaderboard,
    LeaderboardError,
    ScoreTable,
    build_leaderboard,
)
from scoring.core.analysis.leaderboard import Options as LeaderboardOptions
from scoring.core.analysis.pr_curve import PrecisionRecall, precision_recall
from scoring.selectors import (
    HUMAN_CHOICE,
    POOL_MAX_DOCS,
    LabelChoice,
    NoRuns,
    PoolScores,
    ScoringError,
    campaign_runs,
    chosen_labels,
    leaderboard_measure_name,
    pool_scores_report,
    runs_in_request,
    runs_tagged,
    scores_version,
)
from workbench.jobs import job_latest
from workbench.models import Job

# trec_eval's 11 recall levels of iprec_at_recall.
RECALL_LEVELS = tuple(level / 10 for level in range(11))


# The job kind that scores a large pool's leaderboard (`scoring.jobs.pool_leaderboard`).
LEADERBOARD_JOB = "scoring.jobs.pool_leaderboard"


def leaderboard_job(pool: Pool, measure: str, choice: LabelChoice = HUMAN_CHOICE) -> dict[str, Any]:
    """The kind, params and title of the job scoring a large pool's leaderboard. The
    params hold the labels' state its table is scored from (a new judgment calls
    for a new table) and whose labels (a machine's table is never the humans'):
    the page, its pictures and the API find it again by them."""
    params = {
        "pool": pool.pk,
        "measure": measure,
        "version": scores_version(pool, [measure], choice),
    }
    whose = "" if choice.is_human else f", {choice.source} labels of {choice.machine}"
    return {
        "kind": LEADERBOARD_JOB,
        "params": params | choice.params(),
        "title": f"Leaderboard of pool {pool.pk} ({measure}{whose})",
    }


def pool_score_table(
    *, pool: Pool, measure: str, progress: Any = None, choice: LabelChoice = HUMAN_CHOICE
) -> ScoreTable:
    """One measure's per-topic values of every run against the pool's final labels
    (as `pool_scores`: -c, so every run has every judged topic): what a leaderboard
    and its pictures rest on. The request's is kept in the cache until the labels
    change, for the page and each of its pictures (read from a leaderboard job's
    result when one has it); a job's (`progress` given) is kept in the job's
    result instead. NothingJudged before any final label, then NoRuns for a campaign
    without runs."""
    if progress is not None:
        return _pool_score_table(pool, measure, progress, choice)
    key = f"score-table:{pool.pk}:{scores_version(pool, [measure], choice)}"
    table = cache.get(key)
    if table is None:
        table = _table_of_job(pool, measure, choice) or _pool_score_table(
            pool, measure, None, choice
        )
        cache.set(key, table, timeout=3600)
    return table


def _table_of_job(pool: Pool, measure: str, choice: LabelChoice) -> ScoreTable | None:
    """The table a leaderboard job made of the current labels, if one did: read back
    rather than scored again (the participants' leaderboard of a large pool)."""
    spec = leaderboard_job(pool, measure, choice)
    job = job_latest(kind=spec["kind"], params=spec["params"])
    if job is None or job.state != Job.DONE:
        return None
    return ScoreTable.from_dict(job.result["table"])


def _pool_score_table(
    pool: Pool, measure: str, progress: Any = None, choice: LabelChoice = HUMAN_CHOICE
) -> ScoreTable:
    report = pool_scores_report(
        pool=pool, measures=[measure], per_topic=True, progress=progress, choice=choice
    )
    return score_table_of(report, measure)


def score_table_of(report: PoolScores, measure: str) -> ScoreTable:
    """One measure's per-topic values of a scoring (every run, every judged topic)."""
    if not report.missing:  # a key per run scored
        raise NoRuns("no runs yet: the campaign has no run to rank")
    scores = report.scores[report.scores["query_id"] != "all"]
    name = leaderboard_measure_name(measure)
    scores = scores[scores["measure"] == name]
    if scores.empty:
        raise ScoringError(f"measure {measure!r} has no per-topic values for this pool")
    runs = tuple(sorted(report.missing))
    topics = tuple(report.judged_topics)
    values = np.full((len(runs), len(topics)), np.nan)
    run_index = {run: k for k, run in enumerate(runs)}
    topic_index = {topic: k for k, topic in enumerate(topics)}
    for run, topic, value in scores[["run_id", "query_id", "value"]].itertuples(index=False):
        values[run_index[run], topic_index[topic]] = float(value)
    return ScoreTable(name, runs, topics, values)


def pool_leaderboard(
    *,
    pool: Pool,
    measure: str,
    options: LeaderboardOptions,
    choice: LabelChoice = HUMAN_CHOICE,
) -> tuple[Leaderboard, ScoreTable]:
    """The leaderboard of the pool's runs by one measure, and the values it rests on."""
    table = pool_score_table(pool=pool, measure=measure, choice=choice)
    return leaderboard_of(table, options), table


def empty_leaderboard(measure: str, options: LeaderboardOptions) -> Leaderboard:
    """The leaderboard of a campaign with no run yet: no run, no pair, no topic."""
    return Leaderboard(measure, (), (), (), (), options)


def leaderboard_of(table: ScoreTable, options: LeaderboardOptions) -> Leaderboard:
    """The statistics of a score table (scored here or stored by a job): cheap next
    to scoring, so they are worked out on each request, with its test and alpha."""
    try:
        return build_leaderboard(table, options)
    except LeaderboardError as error:
        raise ScoringError(str(error)) from None


def pool_precision_recall(
    *, pool: Pool, runs: list[str], choice: LabelChoice = HUMAN_CHOICE
) -> dict[str, list[float]]:
    """Interpolated precision at the 11 recall levels, averaged over the judged
    topics (trec_eval's iprec_at_recall), for each chosen run; only those are
    scored (a run's scores do not depend on the others')."""
    most = runs_in_request(pool)
    if len(runs) > most:
        raise ScoringError(
            f"{len(runs)} runs are more than a picture of this pool scores while you wait: "
            f"choose at most {most}"
        )
    chosen = runs_tagged(pool, runs)
    scores = pool_scores_report(
        pool=pool, measures=["iprec_at_recall"], runs=chosen, choice=choice
    ).scores
    curves = {}
    for run in runs:
        mine = scores[scores["run_id"] == run].set_index("measure")["value"]
        curves[run] = [float(mine[f"iprec_at_recall_{level:.2f}"]) for level in RECALL_LEVELS]
    return curves


def pool_precision_recall_on_topic(
    *, pool: Pool, runs: list[str], topic: str, choice: LabelChoice = HUMAN_CHOICE
) -> dict[str, PrecisionRecall]:
    """Each chosen run's precision-recall curve at every recall level on one topic,
    against the pool's final labels of `choice` (relevant: a label of 1 or more),
    first 1000."""
    labels = chosen_labels(pool, choice)
    topic_labels = labels[labels["query_id"] == topic]
    if topic_labels.empty:
        raise ScoringError(f"topic {topic!r} has no final label in this pool")
    relevant = set(topic_labels.loc[topic_labels["relevance"] >= 1, "doc_id"])
    tables = dict(campaign_runs(pool, runs_tagged(pool, runs)))  # those chosen only
    curves = {}
    for run in runs:
        table = tables[run]
        rows = table.filter(pc.equal(table["query_id"], topic))
        curves[run] = precision_recall(
            rows["doc_id"].to_pylist(),
            rows["score"].to_numpy(),
            relevant,
            max_docs=POOL_MAX_DOCS,
        )
    return curves
