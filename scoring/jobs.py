"""The scoring app's long work, run as jobs (see `workbench.jobs`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import partial
from typing import Any

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from pooling.models import Campaign, Pool
from scoring import (
    export_selectors,
    leaderboard_selectors,
    release_snapshot_selectors,
    reusability_selectors,
    selectors,
    services,
    task_selectors,
)
from scoring.core.analysis import reusability_render
from scoring.core.analysis.leaderboard import Options as LeaderboardOptions
from scoring.core.tasks import subtasks
from scoring.models import Release
from workbench.jobs import JobProgress, job_start, job_start_once
from workbench.models import Job


def qrels_bundle(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Write a pool's qrels bundle to storage: params pool (id), formats (None: the
    default ones the pool can produce). The result names the file to download."""
    params = job.params
    pool = Pool.objects.select_related("campaign").get(pk=params["pool"])
    progress(done=0, total=1)
    data = export_selectors.qrels_bundle(
        pool=pool,
        formats=params.get("formats"),
        labels=params.get("labels") or selectors.HUMAN_LABELS,
        machine=params.get("machine") or None,
    )
    name = f"{pool.campaign.slug}-pool{pool.pk}-qrels.zip"
    # Run again (its worker stopped after writing), the job writes the same file.
    path = f"exports/job-{job.pk}/{name}"
    default_storage.delete(path)
    path = default_storage.save(path, ContentFile(data))
    digest = hashlib.sha256(data).hexdigest()
    progress.note(f"{name}: {len(data):,} bytes, sha256 {digest}")
    return {"file": path, "name": name, "bytes": len(data), "sha256": digest}


def qrels_bundle_start(
    *,
    pool: Pool,
    formats: list[str] | None,
    created_by: Any = None,
    choice: selectors.LabelChoice = selectors.HUMAN_CHOICE,
) -> Job:
    """Queue the pool's qrels bundle (`qrels_bundle`, above) of `choice`'s labels; the
    job's page offers it."""
    return job_start(
        kind=qrels_bundle,
        title=f"qrels bundle of pool {pool.pk}",
        params={"pool": pool.pk, "formats": formats} | choice.params(),
        campaign=pool.campaign,
        created_by=created_by,
    )


def pool_scores(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Score the campaign's runs on a pool's final labels: params pool (id), measures,
    version (`selectors.scores_version`, which the scores page and API look the
    result up by), per_topic (optional: each topic's values too)."""
    params = job.params
    pool = Pool.objects.select_related("campaign").get(pk=params["pool"])
    report = selectors.pool_scores_report(
        pool=pool,
        measures=params["measures"],
        per_topic=params.get("per_topic", False),
        progress=progress,
        choice=_choice(params),
    )
    runs = report.scores["run_id"].nunique()
    progress.note(f"{runs} runs scored over {len(report.judged_topics)} judged topics")
    return {"pool": pool.pk, "campaign": pool.campaign.slug, "scores": report.to_dict()}


def _choice(params: dict[str, Any]) -> selectors.LabelChoice:
    """Whose labels a job's params name (the humans' when they name none)."""
    if not params.get("labels"):
        return selectors.HUMAN_CHOICE
    return selectors.LabelChoice(params["labels"], params.get("machine") or "")


def pool_leaderboard(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Score a large pool's leaderboard: params as `leaderboard_selectors.leaderboard_job`, by
    which the page, its pictures and the API find it again. The result holds the
    measure's per-topic values of every run (`ScoreTable.to_dict`); the tests and
    intervals are worked out from it on each request, with its options. A
    failure stores nothing: the result is written only when the job is done."""
    params = job.params
    pool = Pool.objects.select_related("campaign").get(pk=params["pool"])
    table = leaderboard_selectors.pool_score_table(
        pool=pool, measure=params["measure"], progress=progress, choice=_choice(params)
    )
    progress.note(
        f"{table.measure}: {len(table.runs)} runs scored over {len(table.topics)} judged topics"
    )
    return {"pool": pool.pk, "table": table.to_dict()}


def pool_reusability(job: Job, progress: JobProgress) -> dict[str, Any]:
    """The pool's reusability report: params as `reusability_selectors.reusability_params`,
    by which the page and API find it again. The result holds the report's JSON
    (`reusability_render.to_json`)."""
    params = job.params
    pool = Pool.objects.select_related("campaign").get(pk=params["pool"])
    report = reusability_selectors.pool_reusability(
        pool=pool, measure=params["measure"], progress=progress
    )
    progress.note(
        f"{len(report.runs)} runs left out in turn over {len(report.topics)} judged topics"
    )
    return {"pool": pool.pk, "report": reusability_render.to_json(report)}


def reusability_start(*, pool: Pool, measure: str, user: Any) -> Job:
    """Queue the report of the pool's current labels, unless a job is at it or done
    with it already (found again by `reusability_selectors.reusability_job`)."""
    return job_start_once(
        kind=pool_reusability,
        title=f"Reusability of pool {pool.pk} ({measure})",
        params=reusability_selectors.reusability_params(pool, measure),
        campaign=pool.campaign,
        created_by=user,
    )


def task_scores(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Score every submission of a task campaign's subtask, too many bytes for a
    request (`task_selectors.scores_in_request`): params campaign (id), subtask,
    version (`task_selectors.scores_params`, by which the pages and the API find
    the result). Progress in bytes read; each file is read a block at a time.
    Refused (failed, nothing stored) when the gold or the submissions changed
    since it was asked for: the pages offer to score them again."""
    params = job.params
    campaign = Campaign.objects.get(pk=params["campaign"])
    subtask = subtasks.subtask(campaign.task_kind, params["subtask"])
    if task_selectors.scores_params(campaign, subtask) != params:
        raise ValueError(
            f"the gold or the submissions of {subtask.label} changed since this job was"
            " started: score them again"
        )
    table_gold = campaign.task_golds.select_related("campaign").get(subtask=subtask.code)
    submissions = list(campaign.task_submissions.filter(subtask=subtask.code))
    sizes = [submission.file.size for submission in submissions]
    progress(done=0, total=sum(sizes), unit="bytes")
    scorer = task_selectors.SubmissionScorer(table_gold)
    scored: dict[str, Any] = {}
    before = 0
    for submission, size in zip(submissions, sizes, strict=True):
        scores = scorer.scores(submission, partial(_advanced, progress, before))
        scored[str(submission.pk)] = scores.to_dict()
        before += size
        progress(done=before)
        progress.note(f"{submission.name}: {size:,} bytes, {submission.document_count:,} documents")
    return {"campaign": campaign.slug, "subtask": subtask.code, "submissions": scored}


def _advanced(progress: JobProgress, before: int, done: int) -> None:
    """Progress in bytes: `done` of this file, after `before` of the others."""
    progress(done=before + done)


def release_make(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Release a pool's results (`services.release_create`): params pool (id), measure,
    measures (None: the default ones), options (the leaderboard's, as stored),
    labels, reason. Progress counts the runs scored; the release and the job's
    result are stored in one transaction, so a run after a stopped worker makes
    the release once."""
    params = job.params
    pool = Pool.objects.select_related("campaign").get(pk=params["pool"])

    def stored(release: Release) -> None:
        progress.note(
            f"release {release.version} of pool {pool.pk}: {release.runs.count()} runs over "
            f"{len(release.judged_topics)} judged topics, ranked by {release.measure}"
        )
        progress.stored({"pool": pool.pk, "release": release.pk, "version": release.version})

    services.release_create(
        pool=pool,
        measure=params["measure"],
        measures=params.get("measures"),
        options=release_snapshot_selectors.options_from(params["options"]),
        labels=params.get("labels", "human"),
        machine=params.get("machine") or None,
        reason=params.get("reason", ""),
        released_by=job.created_by,
        progress=progress,
        before_commit=stored,
    )
    return job.result


def strategy_replay(job: Job, progress: JobProgress) -> dict[str, Any]:
    """What each adaptive strategy would have found on a pool's runs, with an earlier
    pool's labels or uploaded qrels as the truth: params as
    `replay_selectors.replay_params`, by which the pool page and API find it."""
    from scoring import replay_selectors

    result = replay_selectors.replay_run(job.params, progress=progress)
    report = result["report"]
    progress.note(
        f"{len(report['strategies'])} strategies replayed over {report['runs']} runs and "
        f"{report['topics']} topics"
    )
    return result


def release_make_start(
    *,
    pool: Pool,
    measure: str,
    measures: Sequence[str] | None,
    options: LeaderboardOptions,
    labels: str,
    reason: str,
    released_by: Any = None,
    machine: str | None = None,
) -> Job:
    """Queue the release of the pool's results (`release_make`, above), for a pool
    too large to score in a request (`services.release_start` decides)."""
    return job_start(
        kind=release_make,
        title=f"Release of pool {pool.pk} ({measure})",
        params={
            "pool": pool.pk,
            "measure": measure,
            "measures": list(measures) if measures else None,
            "options": release_snapshot_selectors.options_of(options),
            "labels": labels,
            "machine": machine or "",
            "reason": reason,
        },
        campaign=pool.campaign,
        created_by=released_by,
    )


def pool_calibration(job: Job, progress: JobProgress) -> dict[str, Any]:
    """A machine's calibration report on a pool too large to make it in a request:
    params as `calibration_selectors.calibration_params`, by which the page and the
    API find it again. The result holds the report's JSON."""
    from scoring import calibration_selectors

    params = job.params
    pool = Pool.objects.select_related("campaign").get(pk=params["pool"])
    machine = calibration_selectors.calibration_machine(pool, params["machine"])
    report = calibration_selectors.pool_calibration(
        pool=pool, machine=machine, measures=params["measures"], progress=progress
    )
    progress.note(
        f"machine {machine.name} against the humans on {report['runs']['n_runs']} runs, "
        f"{len(params['measures'])} measures"
    )
    return {"pool": pool.pk, "report": report}


def calibration_start(*, pool: Pool, machine: Any, measures: list[str], user: Any) -> Job:
    """Queue the report of the current labels, unless a job is at it or done with it
    (found again by `calibration_selectors.calibration_job`)."""
    from scoring import calibration_selectors

    return job_start_once(
        kind=pool_calibration,
        title=f"Calibration of machine {machine.name} on pool {pool.pk}",
        params=calibration_selectors.calibration_params(pool, machine, measures),
        campaign=pool.campaign,
        created_by=user,
    )
