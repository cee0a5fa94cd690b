"""Long work runs as a job: a Django task (`django.tasks`, stored in the database by
django-tasks-db and run by `manage.py db_worker`) that reports into a `Job` row.

A job kind is a plain function `kind(job, progress) -> result`, named by its
dotted path (`pooling.jobs.pool_build`); it reads its arguments from
`job.params`, reports with `progress(done, total)` and `progress.note(text)`,
and returns a JSON-ready result. What it raises fails the job with a
message: the services it calls store nothing unless they finish, so a failed
job leaves stored data as it was.
"""

from __future__ import annotations

import gc
import logging
import time
import traceback
from typing import Any

from django.db import transaction
from django.tasks import task
from django.utils import timezone
from django.utils.module_loading import import_string

from workbench.models import Job

log = logging.getLogger(__name__)

# Errors a job kind raises to refuse its input: their message is the job's error.
EXPECTED_ERRORS: tuple[type[BaseException], ...] = (ValueError,)


class JobProgress:
    """What a job kind calls to say how far it is: stored at most every `interval`
    seconds (and at the end), so that progress costs the work nothing."""

    def __init__(self, job: Job, interval: float = 0.5) -> None:
        self.job, self.interval = job, interval
        self._saved_at = 0.0

    def __call__(
        self, done: int | None = None, total: int | None = None, unit: str | None = None
    ) -> None:
        """Set how far the job is; `unit` says what done and total count (Job.unit)."""
        if unit is not None:
            self.job.unit = unit
        if total is not None:
            self.job.total = total
        if done is not None:
            self.job.done = done
        self._save(force=total is not None)

    def advance(self, steps: int = 1) -> None:
        """One more item done (a file read, a batch written)."""
        self(done=self.job.done + steps)

    def note(self, line: str) -> None:
        """Append a line to the job's log."""
        self.job.log += line.rstrip("\n") + "\n"
        self._save(force=True)

    def _save(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._saved_at >= self.interval:
            Job.objects.filter(pk=self.job.pk).update(
                done=self.job.done, total=self.job.total, unit=self.job.unit, log=self.job.log
            )
            self._saved_at = now


def job_start(
    *, kind: str, title: str, params: dict[str, Any], campaign: Any = None, created_by: Any = None
) -> Job:
    """Record a job and queue it; it starts once the caller's transaction commits."""
    import_string(kind)  # a kind that does not exist is the caller's bug: fail now
    job = Job.objects.create(
        kind=kind,
        title=title,
        params=params,
        campaign=campaign,
        created_by=created_by if getattr(created_by, "pk", None) else None,
    )
    transaction.on_commit(lambda: run_job.enqueue(job.pk))
    return job


def job_latest(*, kind: str, params: dict[str, Any]) -> Job | None:
    """The newest job of `kind` on exactly `params`, whatever its state (a failed
    one's error says why there is no result): how a page finds "its" job again."""
    return Job.objects.filter(kind=kind, params=params).order_by("-created_at", "-id").first()


def job_start_once(
    *, kind: str, title: str, params: dict[str, Any], campaign: Any = None, created_by: Any = None
) -> Job:
    """The job already at (or done with) this work, else a new one: a second click
    queues nothing, and a failure can be tried again."""
    job = job_latest(kind=kind, params=params)
    if job is not None and job.state != Job.FAILED:
        return job
    return job_start(
        kind=kind, title=title, params=params, campaign=campaign, created_by=created_by
    )


def job_superseded(
    *, kind: str, params: dict[str, Any], campaign: Any, key: str = "version"
) -> Job | None:
    """The newest finished job of the same work on an earlier state: params equal but
    for `params[key]` (the labels' version, say), so that a page can say what it
    showed is out of date. Compared here, not in SQL: a campaign has few such jobs,
    and JSON lists compare alike on every database this way."""
    same = {name: value for name, value in params.items() if name != key}
    done = Job.objects.filter(kind=kind, campaign=campaign, state=Job.DONE)
    for job in done.order_by("-created_at", "-id").only(
        "params", "title", "created_at", "finished_at"
    ):
        rest = {name: value for name, value in job.params.items() if name != key}
        if rest == same and job.params.get(key) != params.get(key):
            return job
    return None


@task()
def run_job(job_id: int) -> None:
    """The task the worker runs: the job's kind, with its progress, result or error."""
    job = Job.objects.get(pk=job_id)
    if job.finished:  # delivered twice: the work is done
        return
    job.state, job.started_at = Job.RUNNING, timezone.now()
    job.save(update_fields=["state", "started_at"])
    progress = JobProgress(job)
    try:
        result = import_string(job.kind)(job, progress)
    except EXPECTED_ERRORS as error:
        _finish(job, Job.FAILED, error=str(error))
    except Exception as error:
        log.exception("job %s (%s) failed", job.pk, job.kind)
        _finish(
            job,
            Job.FAILED,
            error=f"unexpected error: {type(error).__name__}: {error}",
            log_line=traceback.format_exc(limit=3),
        )
        raise
    else:
        _finish(job, Job.DONE, result=result)
    finally:
        release_memory()


def release_memory() -> None:
    """Give back what a job's frames and Arrow tables used, so that a worker's memory
    stays flat from job to job: free Python's cycles, then ask Arrow's allocator (the
    C library's malloc by default: malloc_trim) to return its free pages."""
    gc.collect()
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def _finish(
    job: Job, state: str, *, result: Any = None, error: str = "", log_line: str = ""
) -> None:
    job.state, job.result, job.error = state, result, error
    job.finished_at = timezone.now()
    if log_line:
        job.log += log_line
    if state == Job.DONE and job.total:
        job.done = job.total
    job.save(update_fields=["state", "result", "error", "finished_at", "log", "done"])
