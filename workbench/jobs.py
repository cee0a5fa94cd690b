"""Long work runs as a job: a Django task (`django.tasks`, stored in the database by
django-tasks-db and run by `manage.py db_worker`) that reports into a `Job` row.

A job kind is a plain function `kind(job, progress) -> result` in its app's
jobs.py, stored by its dotted path (`pooling.jobs.pool_build`); beside it, a
`<kind>_start(...)` function queues it (`pool_build_start`): callers import the
start function, and the start function hands `job_start` the kind itself, not
its name. A kind reads its arguments from
`job.params`, reports with `progress(done, total)` and `progress.note(text)`,
and returns a JSON-ready result. What it raises fails the job with a
message: the services it calls store nothing unless they finish, so a failed
job leaves stored data as it was.

A worker holds a lease on the job it runs: a token of the run, renewed by a
heartbeat (`heartbeat_at`) that a thread of the run writes, with the
progress, at least every quarter of WORKBENCH_JOB_LEASE_SECONDS (default 60).
A job whose lease has run out (its worker was killed, or its machine stopped)
is queued again by the next worker that looks (every `db_worker` does at
start-up and every quarter lease; `job_start_once` does for the job it finds),
up to WORKBENCH_JOB_ATTEMPTS runs in all (default 3), then failed with the
reason ("the worker running it stopped 3 times"). Every write of a run is
conditional on its token, so a run that lost its lease stores nothing: job
kinds are run again safely because they store their work and the job's
result in one transaction (`progress.stored`, called inside the service's
transaction; kinds that store nothing but the result need not), and a run
after a finished one finds the job done and does nothing.

An organiser may cancel a queued or running job (`job_cancel`: a running one
stops at its next progress call, which raises, and stores nothing) and retry
a failed one (`job_retry`: the same job, queued again with its attempts
counted afresh; its page and address stay).
"""

from __future__ import annotations

import gc
import logging
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Concat
from django.tasks import task
from django.utils import timezone
from django.utils.module_loading import import_string
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from workbench.models import Job

log = logging.getLogger(__name__)

# Errors a job kind raises to refuse its input: their message is the job's error.
EXPECTED_ERRORS: tuple[type[BaseException], ...] = (ValueError,)


class JobStopped(Exception):
    """Raised from a job's progress reporter: the run ends here and stores nothing."""


class JobCancelled(JobStopped):
    """An organiser cancelled the job while it ran."""


class JobLeaseLost(JobStopped):
    """The run's lease ran out (no heartbeat in time) and another worker took the job."""


class JobStateError(ValueError):
    """A cancel or retry the job's state does not allow (a finished job cancelled...)."""


def lease_seconds() -> float:
    return float(settings.WORKBENCH_JOB_LEASE_SECONDS)


def _beat_seconds() -> float:
    """How often a running job renews its lease (and a worker looks for expired ones)."""
    return lease_seconds() / 4


def _expired(cutoff: datetime) -> Q:
    # No heartbeat at all: a job that was running before leases existed.
    return Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True)


class JobProgress:
    """What a job kind calls to say how far it is, and the run's hold on its lease.

    Progress is stored at most every `interval` seconds (and at once for a note
    or a new total), so that progress costs the work nothing. In a worker a
    thread of the run writes it (`reporting`), renewing the lease on the way;
    every write is conditional on the run's token, and when one finds the job
    cancelled or taken over, the next progress call raises JobCancelled or
    JobLeaseLost."""

    def __init__(self, job: Job, interval: float = 0.5, *, token: str | None = None) -> None:
        self.job, self.interval = job, interval
        self.token = job.lease_token if token is None else token
        self.finished = False  # `stored` (or the end of the run) made the job done
        self._saved_at = 0.0
        self._stop: type[JobStopped] | None = None  # what the reporter found
        self._reporter: _Reporter | None = None

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
        self._changed(force=total is not None)

    def advance(self, steps: int = 1) -> None:
        """One more item done (a file read, a batch written)."""
        self(done=self.job.done + steps)

    def note(self, line: str) -> None:
        """Append a line to the job's log."""
        self.job.log += line.rstrip("\n") + "\n"
        self._changed(force=True)

    def stored(self, result: Any) -> None:
        """The job is done with `result`: called inside the transaction that stores
        the work (a service's `before_commit`), so that the job is done exactly when
        its work is stored. Raises JobCancelled or JobLeaseLost (rolling the work
        back) if the run no longer holds the job."""
        if not connection.in_atomic_block:
            raise RuntimeError("progress.stored belongs inside the transaction that stores")
        if not self._end(Job.DONE, result=result):
            raise self._why_stopped()

    def _end(self, state: str, *, result: Any = None, error: str = "") -> bool:
        """The run's last write, the job done or failed: False if the run no longer
        holds the job (done needs it not cancelled either)."""
        job = self.job
        if state == Job.DONE and job.total:
            job.done = job.total
        rows = self._mine()
        if state == Job.FAILED:
            rows = Job.objects.filter(pk=job.pk, lease_token=self.token, state=Job.RUNNING)
        ended = rows.update(
            state=state,
            result=result,
            error=error,
            finished_at=timezone.now(),
            done=job.done,
            total=job.total,
            unit=job.unit,
            log=job.log,
        )
        if ended:
            job.state, job.result, job.error = state, result, error
            self.finished = True
        return bool(ended)

    def _changed(self, *, force: bool = False) -> None:
        if self._stop is not None and not self.finished:
            raise self._stop(self._stop.__doc__)
        if self._reporter is not None:
            self._reporter.changed(force=force)
            return
        now = time.monotonic()
        if force or now - self._saved_at >= self.interval:
            self._saved_at = now
            if not self.save():
                raise self._why_stopped()

    def _mine(self) -> Any:
        """This run's job row: the token is still its own and (until the work is
        stored) the job runs with no cancel asked for."""
        rows = Job.objects.filter(pk=self.job.pk, lease_token=self.token)
        if self.finished:
            return rows
        return rows.filter(state=Job.RUNNING, cancel_requested_at__isnull=True)

    def save(self) -> bool:
        """Store the progress and log and renew the lease; False once the run no
        longer holds the job (cancelled, or taken over)."""
        job = self.job
        return bool(
            self._mine().update(
                done=job.done,
                total=job.total,
                unit=job.unit,
                log=job.log,
                heartbeat_at=timezone.now(),
            )
        )

    def _why_stopped(self) -> JobStopped:
        row = Job.objects.filter(pk=self.job.pk).values("lease_token", "state").first()
        if row is not None and row["lease_token"] == self.token and row["state"] == Job.RUNNING:
            return JobCancelled(JobCancelled.__doc__)
        return JobLeaseLost(JobLeaseLost.__doc__)

    @contextmanager
    def reporting(self) -> Iterator[None]:
        """While the block runs, a thread of its own (with its own database
        connection, closed at the end) writes the progress and renews the lease,
        also through long stretches without a progress call. Inside a
        transaction already open (a test's, or a request that runs its job in
        place) nobody else could see the job run: progress is written in place."""
        if connection.in_atomic_block:
            yield
            return
        reporter = _Reporter(self)
        self._reporter = reporter
        reporter.start()
        try:
            yield
        finally:
            reporter.stop()
            self._reporter = None


class _Reporter(threading.Thread):
    """Writes a run's progress (at most every `interval`) and heartbeat (every
    quarter lease) from its own thread and database connection, so that neither
    waits on the work, nor the work on them; and a transaction of the work (a
    collection imported in one) does not hide the progress from the job's page."""

    def __init__(self, progress: JobProgress) -> None:
        super().__init__(name=f"job-{progress.job.pk}-heartbeat", daemon=True)
        self.progress = progress
        self._wake = threading.Event()
        self._done = threading.Event()
        self._dirty = False
        self._written_at = time.monotonic()

    def changed(self, *, force: bool) -> None:
        self._dirty = True
        if force:
            self._wake.set()

    def stop(self) -> None:
        self._done.set()
        self._wake.set()
        self.join()

    def run(self) -> None:
        try:
            while not self._done.is_set():
                self._wake.wait(self.progress.interval)
                self._wake.clear()
                if self._done.is_set():
                    break
                if self._dirty or time.monotonic() - self._written_at >= _beat_seconds():
                    self._write()
        finally:
            connection.close()

    def _write(self) -> None:
        self._dirty = False
        try:
            if not self.progress.save() and self.progress._stop is None:
                self.progress._stop = type(self.progress._why_stopped())
            self._written_at = time.monotonic()
        except DatabaseError as error:
            # SQLite locked by a long write of the work, or a connection lost: try
            # again at the next beat, on a fresh connection if this one is broken.
            log.warning("job %s: heartbeat not written: %s", self.progress.job.pk, error)
            connection.close_if_unusable_or_obsolete()
        except Exception:  # never let the heartbeat die while the work goes on
            log.exception("job %s: heartbeat not written", self.progress.job.pk)


Kind = str | Callable[[Job, JobProgress], Any]


def job_kind(kind: Kind) -> str:
    """What a job row stores for `kind`: a kind function's dotted path (as its
    module and name say: `pooling.jobs.pool_build`), or that path already."""
    if callable(kind):
        return f"{kind.__module__}.{kind.__qualname__}"
    return kind


def job_start(
    *, kind: Kind, title: str, params: dict[str, Any], campaign: Any = None, created_by: Any = None
) -> Job:
    """Record a job and queue it; it starts once the caller's transaction commits."""
    kind = job_kind(kind)
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


def job_latest(*, kind: Kind, params: dict[str, Any]) -> Job | None:
    """The newest job of `kind` on exactly `params`, whatever its state (a failed
    one's error says why there is no result): how a page finds "its" job again."""
    return (
        Job.objects.filter(kind=job_kind(kind), params=params)
        .order_by("-created_at", "-id")
        .first()
    )


def job_start_once(
    *, kind: Kind, title: str, params: dict[str, Any], campaign: Any = None, created_by: Any = None
) -> Job:
    """The job already at (or done with) this work, else a new one: a second click
    queues nothing, and a failure or a cancel can be tried again. A job whose
    worker stopped is queued again first (or failed, its attempts spent: then a
    new one starts)."""
    job = job_latest(kind=kind, params=params)
    if job is not None and job.lease_expired:
        job_reclaim(job=job)
        job.refresh_from_db()
    if job is not None and job.state != Job.FAILED and not job.cancelling:
        return job
    return job_start(
        kind=kind, title=title, params=params, campaign=campaign, created_by=created_by
    )


def job_superseded(
    *, kind: Kind, params: dict[str, Any], campaign: Any, key: str = "version"
) -> Job | None:
    """The newest finished job of the same work on an earlier state: params equal but
    for `params[key]` (the labels' version, say), so that a page can say what it
    showed is out of date. Compared here, not in SQL: a campaign has few such jobs,
    and JSON lists compare alike on every database this way."""
    same = {name: value for name, value in params.items() if name != key}
    done = Job.objects.filter(kind=job_kind(kind), campaign=campaign, state=Job.DONE)
    for job in done.order_by("-created_at", "-id").only(
        "params", "title", "created_at", "finished_at"
    ):
        rest = {name: value for name, value in job.params.items() if name != key}
        if rest == same and job.params.get(key) != params.get(key):
            return job
    return None


@task()
def run_job(job_id: int) -> None:
    """The task the worker runs: takes the job's lease, runs its kind with its
    progress, and ends it done or failed. A job not queued (done already, or
    cancelled, or taken by another worker: a task delivered twice) is left alone."""
    token = uuid.uuid4().hex
    now = timezone.now()
    taken = Job.objects.filter(pk=job_id, state=Job.QUEUED).update(
        state=Job.RUNNING,
        lease_token=token,
        attempts=F("attempts") + 1,
        started_at=now,
        heartbeat_at=now,
        done=0,
    )
    if not taken:
        return
    job = Job.objects.get(pk=job_id)
    progress = JobProgress(job, token=token)
    try:
        with progress.reporting():
            if job.attempts > 1:
                progress.note(f"Attempt {job.attempts} of {job.max_attempts}.")
            result = import_string(job.kind)(job, progress)
        if not progress.finished and not progress._end(Job.DONE, result=result):
            raise progress._why_stopped()
    except JobCancelled:
        progress._end(Job.FAILED, error=_cancelled_by(job.pk, before_start=False))
    except JobLeaseLost:
        # Another worker runs the job now: this run's work is not wanted (and
        # could not be stored); the task fails with the reason.
        log.warning("job %s (%s): lease lost in attempt %s", job.pk, job.kind, job.attempts)
        raise
    except EXPECTED_ERRORS as error:
        _failed(progress, str(error))
    except Exception as error:
        log.exception("job %s (%s) failed", job.pk, job.kind)
        job.log += traceback.format_exc(limit=3)
        _failed(progress, f"unexpected error: {type(error).__name__}: {error}")
        raise
    finally:
        release_memory()


def _failed(progress: JobProgress, error: str) -> None:
    if progress.finished:  # the work was stored before the error: the job is done
        progress.note(f"After the work was stored: {error}")
    elif not progress._end(Job.FAILED, error=error):
        log.warning("job %s: failed (%s) after its lease was lost", progress.job.pk, error)


def _cancelled_by(job_id: int, *, before_start: bool) -> str:
    job = Job.objects.select_related("cancel_requested_by").get(pk=job_id)
    when = job.cancel_requested_at or timezone.now()
    return _cancel_message(job.cancel_requested_by, when, before_start=before_start)


def _cancel_message(who: Any, when: datetime, *, before_start: bool) -> str:
    name = who.get_username() if who is not None else "an operator"
    at = timezone.localtime(when).strftime("%H:%M:%S")
    return f"Cancelled by {name} at {at}" + (" before it started." if before_start else ".")


# --------------------------------------------------------------------------
# Leases that ran out, cancel and retry


def jobs_reclaim() -> list[Job]:
    """Every job whose lease has run out, queued again or failed (`job_reclaim`),
    and the tasks backend's rows left running by workers that stopped: what a
    worker does at start-up and every quarter lease."""
    cutoff = timezone.now() - timedelta(seconds=lease_seconds())
    expired = Job.objects.filter(state=Job.RUNNING).filter(_expired(cutoff))
    reclaimed = [job for pk in expired.values_list("pk", flat=True) if (job := _reclaim(pk))]
    _end_stale_tasks(cutoff)
    return reclaimed


def job_reclaim(*, job: Job) -> Job | None:
    """The job, if its lease had run out: queued again for another worker, or failed
    once WORKBENCH_JOB_ATTEMPTS runs have been started (or cancelled, if that was
    asked for), its task's row no longer running. None if the lease holds (or
    another worker reclaimed it first)."""
    return _reclaim(job.pk)


def _reclaim(job_id: int) -> Job | None:
    cutoff = timezone.now() - timedelta(seconds=lease_seconds())
    with transaction.atomic():
        # Locked (PostgreSQL) or alone (SQLite's transactions here take the write
        # lock): two workers cannot both take the job; the update checks again.
        job = (
            Job.objects.select_for_update(skip_locked=True)
            .filter(pk=job_id, state=Job.RUNNING)
            .filter(_expired(cutoff))
            .first()
        )
        if job is None:
            return None
        heartbeat = job.heartbeat_at or job.started_at
        last = timezone.localtime(heartbeat).strftime("%H:%M:%S") if heartbeat else "none"
        attempt = max(job.attempts, 1)  # 0: taken before attempts were counted
        line = f"Attempt {attempt}: the worker running it stopped (last heartbeat {last})."
        changes: dict[str, Any] = {"lease_token": "", "log": job.log + line + "\n"}
        if job.cancel_requested_at is not None:
            changes |= {"state": Job.FAILED, "error": _cancelled_by(job.pk, before_start=False)}
        elif job.attempts >= job.max_attempts:
            times = "once" if job.attempts == 1 else f"{job.attempts} times"
            error = f"the worker running it stopped {times}"
            changes |= {"state": Job.FAILED, "error": error}
        else:
            changes |= {"state": Job.QUEUED, "log": changes["log"] + "Queued again.\n"}
        if changes["state"] == Job.FAILED:
            changes["finished_at"] = timezone.now()
        taken = (
            Job.objects.filter(pk=job.pk, state=Job.RUNNING, lease_token=job.lease_token)
            .filter(_expired(cutoff))
            .update(**changes)
        )
        if not taken:
            return None
        _end_tasks_of(job.pk, reason=line)
        if changes["state"] == Job.QUEUED:
            transaction.on_commit(lambda: run_job.enqueue(job.pk))
    job.refresh_from_db()
    return job


def _run_job_rows(status: str, **also: Any) -> list[Any]:
    """The tasks backend's rows of `run_job` in `status` (few: one per worker at most
    while running); each row's job id is its only argument."""
    rows = DBTaskResult.objects.filter(status=status, task_path=run_job.module_path, **also)
    return list(rows)


def _job_of(row: Any) -> int | None:
    args = (row.args_kwargs or {}).get("args") or [None]
    return args[0] if isinstance(args[0], int) else None


def _end_tasks_of(job_id: int, *, reason: str) -> None:
    """The rows of the job's tasks still running (their worker stopped): failed."""
    rows = [row for row in _run_job_rows(TaskResultStatus.RUNNING) if _job_of(row) == job_id]
    _end_task_rows(rows, TaskResultStatus.FAILED, reason)


def _end_task_rows(rows: list[Any], status: str, reason: str) -> None:
    failed = status == TaskResultStatus.FAILED
    DBTaskResult.objects.filter(
        pk__in=[row.pk for row in rows], status=TaskResultStatus.RUNNING
    ).update(
        status=status,
        finished_at=timezone.now(),
        exception_class_path=f"{__name__}.JobLeaseLost" if failed else "",
        traceback=reason if failed else "",
    )


def _end_stale_tasks(cutoff: datetime) -> None:
    """Rows still running, started before `cutoff`, of jobs that are not running:
    their worker stopped after the job ended (or before it began: then the job,
    still queued, gets a task again)."""
    rows = _run_job_rows(TaskResultStatus.RUNNING, started_at__lt=cutoff)
    if not rows:
        return
    states = dict(Job.objects.filter(pk__in=[_job_of(r) for r in rows]).values_list("pk", "state"))
    waiting = {_job_of(row) for row in _run_job_rows(TaskResultStatus.READY)}
    for row in rows:
        job_id, state = _job_of(row), states.get(_job_of(row))
        if state == Job.RUNNING:
            continue  # the job's own lease decides (`jobs_reclaim`)
        done = state == Job.DONE
        status = TaskResultStatus.SUCCESSFUL if done else TaskResultStatus.FAILED
        _end_task_rows([row], status, "the worker running it stopped")
        if state == Job.QUEUED and job_id not in waiting:
            run_job.enqueue(job_id)
            waiting.add(job_id)


def job_cancel(*, job: Job, by: Any = None) -> Job:
    """Cancel a queued job (failed at once, never run) or a running one (its run
    stops at its next progress call, or ends when its lease runs out if its
    worker stopped, and stores nothing). Cancelling twice is cancelling once.
    JobStateError for a job already done or failed."""
    who = by if getattr(by, "pk", None) else None
    now = timezone.now()
    with transaction.atomic():
        asked = {"cancel_requested_at": now, "cancel_requested_by": who}
        cancelled = Job.objects.filter(pk=job.pk, state=Job.QUEUED).update(
            **asked,
            state=Job.FAILED,
            finished_at=now,
            error=_cancel_message(who, now, before_start=True),
        )
        running = Job.objects.filter(pk=job.pk, state=Job.RUNNING)
        if not cancelled and not running.exists():
            job.refresh_from_db()
            raise JobStateError(
                f"job {job.pk} is {job.get_state_display().lower()}: only a waiting "
                "or running job can be cancelled"
            )
        running.filter(cancel_requested_at__isnull=True).update(**asked)
    job.refresh_from_db()
    return job


def job_retry(*, job: Job, by: Any = None) -> Job:
    """Queue a failed job again: the same job (its page and address stay), its
    attempts counted afresh, its error cleared, its log kept with a line that says
    who retried it. JobStateError for a job that has not failed."""
    who = by.get_username() if getattr(by, "pk", None) else "an operator"
    when = timezone.localtime().strftime("%H:%M:%S")
    with transaction.atomic():
        queued = Job.objects.filter(pk=job.pk, state=Job.FAILED).update(
            state=Job.QUEUED,
            attempts=0,
            error="",
            result=None,
            done=0,
            started_at=None,
            finished_at=None,
            heartbeat_at=None,
            lease_token="",
            cancel_requested_at=None,
            cancel_requested_by=None,
            log=Concat(F("log"), Value(f"Retried by {who} at {when}.\n")),
        )
        if not queued:
            job.refresh_from_db()
            raise JobStateError(
                f"job {job.pk} is {job.get_state_display().lower()}: only a failed job "
                "can be retried"
            )
        transaction.on_commit(lambda: run_job.enqueue(job.pk))
    job.refresh_from_db()
    return job


def release_memory() -> None:
    """Give back what a job's frames and Arrow tables used, so that a worker's memory
    stays flat from job to job: free Python's cycles, then ask Arrow's allocator (the
    C library's malloc by default: malloc_trim) to return its free pages."""
    gc.collect()
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
