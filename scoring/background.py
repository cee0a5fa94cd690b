"""Pool pages whose scoring is too large for a request (more run x topic pairs than
WORKBENCH_SYNC_SCORING_CELLS): a job scores the pool's current labels, keyed by
their version, and the page shows what the job stored. The scores page and the
leaderboard page (and its API) both work this way, through `job_result`."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from pooling.models import Campaign, Pool
from scoring import jobs, leaderboard_selectors, selectors, task_selectors
from scoring.core.analysis.leaderboard import ScoreTable
from scoring.core.tasks.subtasks import Scores, Subtask
from scoring.models import TaskSubmission
from workbench.jobs import Kind, job_latest, job_start_once, job_superseded
from workbench.models import Job


def job_result(
    request: HttpRequest,
    *,
    pool: Pool,
    kind: Kind,
    params: dict[str, Any],
    title: str,
    context: dict[str, Any],
) -> Any | None:
    """The result of the finished job on `params` (whose `version` is the current
    labels'; the caller has checked the rest of the request). Else None, and what
    the page shows in `context`: `job` (queued, running, or failed with its
    error; None: nothing started), `superseded` (a finished job on earlier labels,
    now out of date) and `cells`. A POST starts a job unless one is at it; a GET
    writes nothing. NothingJudged before any job, for a pool nothing is judged in.
    Once done, `context["scored_by"]` is the job."""
    selectors.refuse_unjudged(pool)
    job = pool_job(request, pool=pool, kind=kind, params=params, title=title)
    if job is not None and job.state == Job.DONE:
        context["scored_by"] = job
        return job.result
    context["job"] = job
    context["cells"] = selectors.scoring_cells(pool)
    if job is None or job.state == Job.FAILED:
        context["superseded"] = job_superseded(kind=kind, params=params, campaign=pool.campaign)
    return None


def pool_job(
    request: HttpRequest, *, pool: Pool, kind: Kind, params: dict[str, Any], title: str
) -> Job | None:
    """The newest job on `params` (failed ones too); a POST starts one unless a job
    is at it or done with it."""
    if request.method == "POST":
        return job_start_once(
            kind=kind, title=title, params=params, campaign=pool.campaign, created_by=request.user
        )
    return job_latest(kind=kind, params=params)


def pool_scores(
    request: HttpRequest,
    *,
    pool: Pool,
    measures: list[str],
    context: dict[str, Any],
    per_topic: bool = False,
    choice: selectors.LabelChoice = selectors.HUMAN_CHOICE,
) -> selectors.PoolScores | None:
    """The campaign's runs scored on the pool's current labels of `choice` (the
    scores page and API): here for a small pool; for a large one those a job stored
    for the same labels and measures, or None (`job_result`)."""
    if selectors.scores_in_request(pool):
        return selectors.pool_scores_report(
            pool=pool, measures=measures, per_topic=per_topic, choice=choice
        )
    selectors.trec_measures(measures)  # a bad measure is the request's error, not a failed job
    params: dict[str, Any] = {
        "pool": pool.pk,
        "measures": measures,
        "version": selectors.scores_version(pool, measures, choice),
    }
    if per_topic:  # the page's jobs keep their params: found again as they were
        params["per_topic"] = True
    params |= choice.params()  # none for the humans' labels: their jobs are found as before
    result = job_result(
        request,
        pool=pool,
        kind=jobs.pool_scores,
        params=params,
        title=f"Scores of pool {pool.pk} ({' '.join(measures)})",
        context=context,
    )
    return None if result is None else selectors.PoolScores.from_dict(result["scores"])


def leaderboard_table(
    request: HttpRequest,
    *,
    pool: Pool,
    measure: str,
    context: dict[str, Any],
    choice: selectors.LabelChoice = selectors.HUMAN_CHOICE,
) -> ScoreTable | None:
    """The measure's per-topic values a pool's leaderboard rests on (the page, its
    downloads and pictures, the API): scored here for a small pool; for a large
    one the table a job stored on the current labels, or None (`job_result`)."""
    selectors.leaderboard_measure_name(measure)  # the request's mistake, not a failed job
    if selectors.scores_in_request(pool):
        return leaderboard_selectors.pool_score_table(pool=pool, measure=measure, choice=choice)
    spec = leaderboard_selectors.leaderboard_job(pool, measure, choice)
    result = job_result(request, pool=pool, context=context, **spec)
    return None if result is None else ScoreTable.from_dict(result["table"])


def task_scores(
    request: HttpRequest,
    *,
    campaign: Campaign,
    subtask: Subtask,
    sort: str,
    context: dict[str, Any],
) -> task_selectors.TaskScores | None:
    """A task campaign's scores of one subtask (its scores page and API): scored here
    when its submissions are few bytes (`task_selectors.scores_in_request`); else
    those the job on the current gold and submissions stored, or None (`_task_job`)."""
    if task_selectors.scores_in_request(campaign, subtask):
        return task_selectors.task_scores(campaign=campaign, subtask=subtask, sort=sort)
    scored = _task_job(request, campaign=campaign, subtask=subtask, context=context)
    if scored is None:
        return None
    return task_selectors.task_scores(campaign=campaign, subtask=subtask, sort=sort, scored=scored)


def task_submission_documents(
    request: HttpRequest,
    *,
    submission: TaskSubmission,
    subtask: Subtask,
    sort: str,
    context: dict[str, Any],
    start: bool | None = None,
) -> task_selectors.SubmissionDocuments | None:
    """One submission's values (its page and API), as `task_scores` finds them.
    `start`: whether to start the scoring job (default: when the request is a POST)."""
    campaign = submission.campaign
    if task_selectors.scores_in_request(campaign, subtask):
        return task_selectors.submission_documents(submission=submission, sort=sort)
    scored = _task_job(request, campaign=campaign, subtask=subtask, context=context, start=start)
    if scored is None:
        return None
    return task_selectors.submission_documents(
        submission=submission, sort=sort, scores=scored[submission.pk]
    )


def _task_job(
    request: HttpRequest,
    *,
    campaign: Campaign,
    subtask: Subtask,
    context: dict[str, Any],
    start: bool | None = None,
) -> dict[int, Scores] | None:
    """What the job on the subtask's current gold and submissions stored, by
    submission id; else None, and what the page shows in `context`, as
    `job_result` fills it (`job`, `superseded`; `task_bytes` in place of `cells`).
    A POST starts the job unless one is at it or done with it; a GET writes
    nothing."""
    params = task_selectors.scores_params(campaign, subtask)
    job: Job | None
    if request.method == "POST" if start is None else start:
        job = job_start_once(
            kind=jobs.task_scores,
            title=f"Scores of {campaign.name}: {subtask.label}",
            params=params,
            campaign=campaign,
            created_by=request.user,
        )
    else:
        job = job_latest(kind=jobs.task_scores, params=params)
    if job is not None and job.state == Job.DONE:
        context["scored_by"] = job
        return task_selectors.scores_from_job(subtask, job.result)
    context["job"] = job
    context["task_bytes"] = task_selectors.submission_bytes(campaign, subtask)
    if job is None or job.state == Job.FAILED:
        context["superseded"] = job_superseded(
            kind=jobs.task_scores, params=params, campaign=campaign
        )
    return None
