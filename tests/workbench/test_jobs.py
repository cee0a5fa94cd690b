"""Long work as jobs: progress, result, failure that stores nothing, pages, API, a real worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from django.db import connection, transaction
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from pooling.core.spec import PoolSpec
from pooling.models import Pool, PoolEntry
from tests.helpers import make_campaign, make_run
from workbench.jobs import (
    JobLeaseLost,
    JobProgress,
    JobStateError,
    job_cancel,
    job_latest,
    job_retry,
    job_start,
    job_start_once,
    job_superseded,
    jobs_reclaim,
    run_job,
)
from workbench.models import Job

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def counting_job(job, progress):
    """A job kind for these tests: counts to params['n'], noting each step."""
    progress(done=0, total=job.params["n"])
    for step in range(job.params["n"]):
        progress.advance()
        progress.note(f"step {step + 1}")
    return {"counted": job.params["n"]}


def refusing_job(job, progress):
    progress(done=1, total=4)
    raise ValueError("the file has 3 problems")


def crashing_job(job, progress):
    raise KeyError("bug")


def start(kind: str, capture, **params) -> Job:
    with capture(execute=True):
        job = job_start(kind=f"tests.workbench.test_jobs.{kind}", title=kind, params=params)
    job.refresh_from_db()
    return job


def test_a_job_reports_progress_log_and_result(django_capture_on_commit_callbacks):
    job = start("counting_job", django_capture_on_commit_callbacks, n=3)
    assert (job.state, job.done, job.total, job.percent) == ("done", 3, 3, 100)
    assert job.log == "step 1\nstep 2\nstep 3\n"
    assert job.result == {"counted": 3}
    assert job.started_at <= job.finished_at


def byte_job(job, progress):
    progress(done=0, total=3 * 1024 * 1024, unit=Job.BYTES)
    progress(done=1024 * 1024)
    raise ValueError("stopped")


def test_progress_says_what_it_counts(django_capture_on_commit_callbacks, organiser):
    job = start("byte_job", django_capture_on_commit_callbacks)
    assert (job.done, job.total, job.unit) == (1024 * 1024, 3 * 1024 * 1024, "bytes")
    assert job.progress_text == "1.0\xa0MB of 3.0\xa0MB"
    assert Job(done=3, total=80, unit="runs").progress_text == "3 of 80 runs"
    assert Job(done=1200, total=5000).progress_text == "1,200 of 5,000"
    assert Job(done=0, total=None, unit="runs").progress_text == ""
    client = APIClient()
    client.force_authenticate(organiser)
    assert client.get(f"/api/jobs/{job.pk}/").json()["unit"] == "bytes"


def test_a_refused_job_fails_with_its_reason(django_capture_on_commit_callbacks):
    job = start("refusing_job", django_capture_on_commit_callbacks)
    assert (job.state, job.error, job.done, job.result) == (
        "failed",
        "the file has 3 problems",
        1,
        None,
    )


def test_an_unexpected_error_fails_the_job_and_the_task(django_capture_on_commit_callbacks):
    job = start("crashing_job", django_capture_on_commit_callbacks)
    assert job.state == "failed"
    assert job.error == "unexpected error: KeyError: 'bug'"
    assert "KeyError" in job.log


def test_a_page_finds_its_job_again_and_starts_one_only_when_needed(
    django_capture_on_commit_callbacks,
):
    kind = "tests.workbench.test_jobs.counting_job"
    params = {"n": 1, "version": "v1"}
    assert job_latest(kind=kind, params=params) is None
    with django_capture_on_commit_callbacks(execute=True):
        first = job_start_once(kind=kind, title="t", params=params)
        again = job_start_once(kind=kind, title="t", params=params)
    assert again == first  # a second click queues nothing
    assert job_latest(kind=kind, params=params) == first
    assert job_latest(kind=kind, params={"n": 1, "version": "v2"}) is None
    refused = "tests.workbench.test_jobs.refusing_job"
    with django_capture_on_commit_callbacks(execute=True):
        failed = job_start_once(kind=refused, title="t", params={})
    assert Job.objects.get(pk=failed.pk).state == Job.FAILED
    with django_capture_on_commit_callbacks(execute=True):
        retried = job_start_once(kind=refused, title="t", params={})
    assert retried != failed  # a failure can be tried again
    assert job_latest(kind=refused, params={}) == retried


def test_a_finished_job_on_an_earlier_version_is_superseded(django_capture_on_commit_callbacks):
    kind = "tests.workbench.test_jobs.counting_job"
    campaign = make_campaign()
    with django_capture_on_commit_callbacks(execute=True):
        old = job_start(kind=kind, title="t", params={"n": 1, "version": "v1"}, campaign=campaign)
        job_start(kind=kind, title="t", params={"n": 2, "version": "v1"}, campaign=campaign)
    now = {"n": 1, "version": "v2"}
    assert job_superseded(kind=kind, params=now, campaign=campaign) == old
    # Not its own state, not other work, not another campaign's.
    assert job_superseded(kind=kind, params={"n": 1, "version": "v1"}, campaign=campaign) is None
    assert job_superseded(kind=kind, params={"n": 3, "version": "v2"}, campaign=campaign) is None
    other = make_campaign("other")
    assert job_superseded(kind=kind, params=now, campaign=other) is None


def test_a_job_is_queued_only_once_its_transaction_commits(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = job_start(kind="tests.workbench.test_jobs.counting_job", title="t", params={"n": 1})
    assert len(callbacks) == 1
    job.refresh_from_db()
    assert job.state == "queued"


def test_a_failed_pool_build_stores_nothing(django_capture_on_commit_callbacks, organiser):
    campaign = make_campaign(judgment_budget=1)
    make_run(campaign, "r", {"301": ["d1", "d2", "d3"]})
    with django_capture_on_commit_callbacks(execute=True):
        job = job_start(
            kind="pooling.jobs.pool_build",
            title="build",
            params={"campaign": campaign.slug, "spec": PoolSpec(depth=3).to_dict()},
            campaign=campaign,
            created_by=organiser,
        )
    job.refresh_from_db()
    assert job.state == "failed"
    assert "asks for 3 new judgments and the budget 1" in job.error
    assert not Pool.objects.exists()


def test_the_job_page_and_api_show_a_job_to_its_creator_and_organisers_only(
    client, organiser, assessor, assessor2, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job = job_start(
            kind="tests.workbench.test_jobs.counting_job",
            title="Counting",
            params={"n": 2},
            created_by=assessor,
        )
    url = reverse("job_detail", args=[job.pk])
    client.force_login(assessor)
    page = client.get(url).content.decode()
    assert "Counting" in page
    assert "<strong>Done</strong> · 2 of 2" in page
    assert 'hx-trigger="every 1s"' not in page, "a finished job stops polling"
    api = APIClient()
    api.force_authenticate(assessor)
    body = api.get(f"/api/jobs/{job.pk}/").json()
    assert (body["state"], body["percent"], body["result"]) == ("done", 100, {"counted": 2})
    client.force_login(organiser)
    assert client.get(url).status_code == 200
    client.force_login(assessor2)
    assert client.get(url).status_code == 404
    api.force_authenticate(assessor2)
    assert api.get(f"/api/jobs/{job.pk}/").status_code == 404


def test_a_running_job_page_polls_itself(client, assessor):
    job = Job.objects.create(kind="x", title="Waiting job", created_by=assessor)
    client.force_login(assessor)
    page = client.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert 'hx-trigger="every 1s"' in page
    assert "waiting for a worker" in page
    panel = client.get(reverse("job_detail", args=[job.pk]), headers={"HX-Request": "true"})
    assert panel.content.decode().lstrip().startswith('<section class="card job" id="job-panel"')


def database_url() -> str:
    """The test database, as a worker process would be told where it is."""
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    host, port = settings.get("HOST") or "127.0.0.1", settings.get("PORT") or 5432
    return f"postgres://{settings['USER']}@{host}:{port}/{settings['NAME']}"


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_a_queued_pool_build(settings, tmp_path, organiser):
    """The production way: the job waits in the database until `db_worker` runs it."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    settings.MEDIA_ROOT = tmp_path / "media"
    campaign = make_campaign()
    make_run(campaign, "r", {"301": ["d1", "d2"], "302": ["d3"]})
    job = job_start(
        kind="pooling.jobs.pool_build",
        title="build",
        params={"campaign": campaign.slug, "spec": PoolSpec(depth=2).to_dict(), "name": "w"},
        campaign=campaign,
        created_by=organiser,
    )
    job.refresh_from_db()
    assert job.state == "queued"
    env = {**os.environ, "DATABASE_URL": database_url(), "WORKBENCH_DATA_DIR": str(tmp_path)}
    env.pop("WORKBENCH_TASKS", None)
    done = subprocess.run(
        [sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay", "--no-reload"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    job.refresh_from_db()
    assert (job.state, job.error) == ("done", "")
    pool = Pool.objects.get()
    assert (pool.name, pool.entries.count(), job.result["pool"]) == ("w", 3, pool.pk)


def test_a_failed_jobs_page_lists_each_problem_on_its_own_line(client, assessor):
    job = Job.objects.create(
        kind="x",
        title="Import",
        created_by=assessor,
        state=Job.FAILED,
        error="bad.jsonl:5: not valid JSON\nbad.jsonl:6: no docno",
    )
    client.force_login(assessor)
    page = client.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert "<li>bad.jsonl:5: not valid JSON</li><li>bad.jsonl:6: no docno</li>" in page


# --------------------------------------------------------------------------
# Workers killed in the middle of a job (real `db_worker` processes)


class _HeldWhileStoring:
    """A job's progress that stops inside the transaction storing the work while
    the file params['hold'] exists, having written the attempt's number to
    params['storing']: there a test kills the worker, its work half-written."""

    def __init__(self, job, progress) -> None:
        self.job, self.progress = job, progress

    def __call__(self, *args, **kwargs) -> None:
        self.progress(*args, **kwargs)

    def advance(self, steps: int = 1) -> None:
        self.progress.advance(steps)

    def note(self, line: str) -> None:
        self.progress.note(line)

    def stored(self, result) -> None:
        Path(self.job.params["storing"]).write_text(str(self.job.attempts))
        deadline = time.monotonic() + 120
        while Path(self.job.params["hold"]).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.progress.stored(result)


def held_pool_build(job, progress):
    """pooling.jobs.pool_build, held inside its storing transaction (`_HeldWhileStoring`)."""
    from pooling.jobs import pool_build

    return pool_build(job, _HeldWhileStoring(job, progress))


class Workers:
    """`manage.py db_worker` processes on the test database, with a 2 s lease; each
    killed at the end of the test if still running."""

    def __init__(self, tmp_path: Path, attempts: int) -> None:
        self.tmp_path, self.processes = tmp_path, []
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "WORKBENCH_DATA_DIR": str(tmp_path),
            "WORKBENCH_JOB_LEASE_SECONDS": "2",
            "WORKBENCH_JOB_ATTEMPTS": str(attempts),
        }
        self.env.pop("WORKBENCH_TASKS", None)

    def start(self) -> subprocess.Popen:
        log = open(self.tmp_path / f"worker{len(self.processes)}.log", "w")  # noqa: SIM115
        command = [sys.executable, "manage.py", "db_worker", "--no-startup-delay", "--no-reload"]
        process = subprocess.Popen(
            [*command, "--interval", "0.1"], cwd=ROOT, env=self.env, stdout=log, stderr=log
        )
        self.processes.append(process)
        return process

    def logs(self) -> str:
        return "\n".join(p.read_text() for p in sorted(self.tmp_path.glob("worker*.log")))

    def wait(self, condition, what: str, timeout: float = 90):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if value := condition():
                return value
            time.sleep(0.1)
        raise AssertionError(f"no {what} within {timeout:.0f} s; the workers said:\n{self.logs()}")

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.wait()


@pytest.fixture
def worker_world(settings, tmp_path, organiser):
    """A campaign of three runs, the jobs' backend the database, and workers to start."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    settings.MEDIA_ROOT = tmp_path / "media"
    campaign = make_campaign()
    rows = {"r1": {"301": ["d1", "d2"]}, "r2": {"301": ["d2", "d3"]}, "r3": {"302": ["d4"]}}
    for tag, ranking in rows.items():
        make_run(campaign, tag, ranking)
    hold = tmp_path / "hold"
    hold.touch()
    job = job_start(
        kind="tests.workbench.test_jobs.held_pool_build",
        title="build",
        params={
            "campaign": campaign.slug,
            "spec": PoolSpec(depth=2).to_dict(),
            "name": "w",
            "hold": str(hold),
            "storing": str(tmp_path / "storing"),
        },
        campaign=campaign,
        created_by=organiser,
    )
    return {"job": job, "hold": hold, "storing": tmp_path / "storing", "entries": 4}


def storing(world, attempt: int):
    """Whether the worker is inside the storing transaction of `attempt`."""
    path = world["storing"]
    return path.exists() and path.read_text() == str(attempt)


def ended(job: Job, state: str | None = None) -> bool:
    """Whether the job is done or failed (or in `state`) and its worker is through
    with the task (its row no longer running)."""
    job.refresh_from_db()
    finished = job.finished if state is None else job.state == state
    return finished and not {"READY", "RUNNING"} & set(task_rows(job))


def task_rows(job: Job) -> list[str]:
    """The statuses of the tasks backend's rows of the job, oldest first."""
    from django_tasks_db.models import DBTaskResult

    rows = DBTaskResult.objects.order_by("enqueued_at")
    return [row.status for row in rows if row.args_kwargs["args"] == [job.pk]]


@pytest.mark.django_db(transaction=True)
def test_a_job_whose_worker_is_killed_is_run_again_by_another_and_stored_once(
    worker_world, tmp_path
):
    job, workers = worker_world["job"], Workers(tmp_path, attempts=3)
    try:
        first = workers.start()
        workers.wait(lambda: storing(worker_world, 1), "pool build inside its transaction")
        first.send_signal(signal.SIGKILL)
        first.wait()
        assert not Pool.objects.exists(), "nothing of the killed run's transaction is stored"
        worker_world["hold"].unlink()
        workers.start()
        workers.wait(lambda: ended(job), "end of the job")
    finally:
        workers.stop()
    job.refresh_from_db()
    assert (job.state, job.error, job.attempts) == ("done", "", 2), workers.logs()
    pool = Pool.objects.get()
    assert (pool.name, pool.entries.count()) == ("w", worker_world["entries"])
    assert PoolEntry.objects.count() == worker_world["entries"]
    assert job.result == {"pool": pool.pk, "campaign": "trec-x", "entries": 4, "without_text": 4}
    assert "Attempt 1: the worker running it stopped" in job.log
    assert "Attempt 2 of 3." in job.log
    assert task_rows(job) == ["FAILED", "SUCCESSFUL"], "no task row is left running"


@pytest.mark.django_db(transaction=True)
def test_a_job_whose_workers_keep_stopping_fails_with_the_reason_and_can_be_retried(
    worker_world, tmp_path
):
    job, workers = worker_world["job"], Workers(tmp_path, attempts=2)
    try:
        for attempt in (1, 2):
            worker = workers.start()
            workers.wait(lambda a=attempt: storing(worker_world, a), f"attempt {attempt} storing")
            worker.send_signal(signal.SIGKILL)
            worker.wait()
        workers.start()
        workers.wait(lambda: ended(job), "end of the job")
        job.refresh_from_db()
        assert (job.state, job.error) == ("failed", "the worker running it stopped 2 times")
        assert job.finished_at is not None
        assert not Pool.objects.exists()
        assert task_rows(job) == ["FAILED", "FAILED"], "no task row is left running"
        # Retried, and nothing holds it this time: the same job is done.
        worker_world["hold"].unlink()
        job_retry(job=job)
        workers.wait(lambda: ended(job, Job.DONE), "the retried job")
    finally:
        workers.stop()
    job.refresh_from_db()
    assert (job.attempts, job.error) == (1, "")
    assert Pool.objects.get().entries.count() == worker_world["entries"]
    assert task_rows(job) == ["FAILED", "FAILED", "SUCCESSFUL"]


# --------------------------------------------------------------------------
# Leases, cancel and retry, in the test's process


def pool_build_params(campaign) -> dict:
    return {"campaign": campaign.slug, "spec": PoolSpec(depth=2).to_dict(), "name": "p"}


class _Storing:
    """A job's progress that does `before(job)` just before the job records its work
    stored (inside the transaction that stores it)."""

    def __init__(self, job, progress, before) -> None:
        self.job, self.progress, self.before = job, progress, before

    def __call__(self, *args, **kwargs) -> None:
        self.progress(*args, **kwargs)

    def advance(self, steps: int = 1) -> None:
        self.progress.advance(steps)

    def note(self, line: str) -> None:
        self.progress.note(line)

    def stored(self, result) -> None:
        self.before(self.job)
        self.progress.stored(result)


def _cancel(job) -> None:
    job_cancel(job=Job.objects.get(pk=job.pk), by=job.created_by)


def _take_over(job) -> None:
    """What another worker does to a job whose lease ran out: a new run's token."""
    Job.objects.filter(pk=job.pk).update(lease_token="another-run")


def cancelled_at_once_pool_build(job, progress):
    from pooling.jobs import pool_build

    _cancel(job)
    return pool_build(job, progress)


def cancelled_while_storing_pool_build(job, progress):
    from pooling.jobs import pool_build

    return pool_build(job, _Storing(job, progress, _cancel))


def taken_over_pool_build(job, progress):
    from pooling.jobs import pool_build

    _take_over(job)
    return pool_build(job, progress)


@pytest.fixture
def runs_campaign(organiser):
    campaign = make_campaign()
    make_run(campaign, "r1", {"301": ["d1", "d2"], "302": ["d3"]})
    return campaign


def start_build(kind: str, campaign, organiser, capture) -> Job:
    with capture(execute=True):
        job = job_start(
            kind=f"tests.workbench.test_jobs.{kind}",
            title="build",
            params=pool_build_params(campaign),
            campaign=campaign,
            created_by=organiser,
        )
    job.refresh_from_db()
    return job


def test_a_running_job_cancelled_stops_at_its_next_progress_call_and_stores_nothing(
    runs_campaign, organiser, django_capture_on_commit_callbacks
):
    job = start_build(
        "cancelled_at_once_pool_build", runs_campaign, organiser, django_capture_on_commit_callbacks
    )
    assert job.state == "failed"
    assert job.error.startswith("Cancelled by olivia at ")
    assert job.cancel_requested_by == organiser
    assert not Pool.objects.exists()


def test_a_cancel_that_comes_while_the_work_is_stored_rolls_the_work_back(
    runs_campaign, organiser, django_capture_on_commit_callbacks
):
    job = start_build(
        "cancelled_while_storing_pool_build",
        runs_campaign,
        organiser,
        django_capture_on_commit_callbacks,
    )
    assert (job.state, job.result) == ("failed", None)
    # (Who asked is rolled back with the work here, where the cancel came through the
    # job's own transaction; an organiser's comes through a connection of its own.)
    assert job.error.startswith("Cancelled by ")
    assert not Pool.objects.exists()


def test_a_run_that_lost_its_lease_stores_nothing_and_leaves_the_job_to_the_new_run(
    runs_campaign, organiser, django_capture_on_commit_callbacks
):
    job = start_build(
        "taken_over_pool_build", runs_campaign, organiser, django_capture_on_commit_callbacks
    )
    assert (job.state, job.lease_token, job.result, job.error) == (
        "running",
        "another-run",
        None,
        "",
    )
    assert not Pool.objects.exists()


def test_a_run_that_lost_its_lease_cannot_record_its_work_stored(organiser):
    job = running_job()
    progress = JobProgress(job)
    _take_over(job)
    with pytest.raises(JobLeaseLost), transaction.atomic():
        progress.stored({"made": 1})
    job.refresh_from_db()
    assert (job.state, job.result) == ("running", None)


def test_a_pool_build_records_its_job_done_in_the_transaction_that_stores_the_pool(
    runs_campaign,
):
    """Were its worker killed right after, the job would be done already: not run again."""
    from pooling.jobs import pool_build

    job = running_job(kind="pooling.jobs.pool_build", params=pool_build_params(runs_campaign))
    pool_build(job, JobProgress(job))  # the kind alone, without the end of `run_job`
    job.refresh_from_db()
    pool = Pool.objects.get()
    assert (job.state, job.result) == (
        "done",
        {"pool": pool.pk, "campaign": "trec-x", "entries": 3, "without_text": 3},
    )
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert jobs_reclaim() == []
    run_job.call(job.pk)  # its task delivered again
    assert Pool.objects.count() == 1


def test_a_waiting_job_cancelled_fails_at_once_and_never_runs(
    organiser, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = job_start(kind="tests.workbench.test_jobs.counting_job", title="t", params={"n": 2})
    job = job_cancel(job=job, by=organiser)
    assert (job.state, job.cancelling) == ("failed", False)
    assert job.error.startswith("Cancelled by olivia at ")
    assert "before it started" in job.error
    for callback in callbacks:  # the task comes to a worker after all
        callback()
    job.refresh_from_db()
    assert (job.state, job.attempts, job.result) == ("failed", 0, None)


def running_job(**fields) -> Job:
    """A job a worker took: running under a token, its heartbeat `age` seconds old."""
    age = fields.pop("age", 0)
    params = fields.pop("params", {"n": 2})
    kind = fields.pop("kind", "tests.workbench.test_jobs.counting_job")
    lease = {
        "attempts": 1,
        "lease_token": "a-run",
        "heartbeat_at": timezone.now() - timedelta(seconds=age),
    }
    return Job.objects.create(
        kind=kind,
        title="Counting",
        params=params,
        state=Job.RUNNING,
        **(lease | fields),
    )


def running_task_row(job: Job, age: float = 120):
    """The tasks backend's row of a worker that claimed the job's task `age` s ago."""
    from django_tasks_db.models import DBTaskResult

    return DBTaskResult.objects.create(
        status="RUNNING",
        args_kwargs={"args": [job.pk], "kwargs": {}},
        task_path="workbench.jobs.run_job",
        backend_name="default",
        run_after=timezone.now(),
        started_at=timezone.now() - timedelta(seconds=age),
    )


def test_running_a_job_renews_its_lease_and_counts_the_attempt(
    django_capture_on_commit_callbacks,
):
    job = start("counting_job", django_capture_on_commit_callbacks, n=2)
    assert (job.attempts, len(job.lease_token)) == (1, 32)
    assert job.started_at <= job.heartbeat_at <= job.finished_at


def test_a_job_whose_lease_ran_out_is_run_again_and_its_task_row_ended(
    django_capture_on_commit_callbacks,
):
    job = running_job(age=61)
    row = running_task_row(job)
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_reclaim() == [Job.objects.get(pk=job.pk)]
    job.refresh_from_db()
    row.refresh_from_db()
    assert (job.state, job.attempts, job.result) == ("done", 2, {"counted": 2})
    assert "Attempt 1: the worker running it stopped (last heartbeat " in job.log
    assert "Queued again.\nAttempt 2 of 3.\n" in job.log
    assert (row.status, row.exception_class_path) == ("FAILED", "workbench.jobs.JobLeaseLost")


def test_a_job_whose_lease_holds_is_left_to_its_worker(django_capture_on_commit_callbacks):
    job = running_job(age=59)
    row = running_task_row(job)
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_reclaim() == []
    job.refresh_from_db()
    row.refresh_from_db()
    assert (job.state, job.lease_token, row.status) == ("running", "a-run", "RUNNING")


def test_a_job_whose_workers_stopped_as_often_as_allowed_fails_with_the_reason(settings):
    settings.WORKBENCH_JOB_ATTEMPTS = 2
    job = running_job(age=61, attempts=2)
    jobs_reclaim()
    job.refresh_from_db()
    assert (job.state, job.error) == ("failed", "the worker running it stopped 2 times")
    assert job.finished_at is not None
    assert job.lease_token == ""


def test_a_job_running_before_leases_existed_is_run_again(django_capture_on_commit_callbacks):
    job = running_job(heartbeat_at=None, attempts=0, lease_token="")
    with django_capture_on_commit_callbacks(execute=True):
        jobs_reclaim()
    job.refresh_from_db()
    assert (job.state, job.attempts) == ("done", 1)


def test_a_cancel_asked_of_a_job_whose_worker_stopped_ends_it_cancelled(organiser):
    job = running_job(age=61, cancel_requested_at=timezone.now(), cancel_requested_by=organiser)
    jobs_reclaim()
    job.refresh_from_db()
    assert job.state == "failed"
    assert job.error.startswith("Cancelled by olivia at ")


def test_a_task_row_left_running_after_its_job_ended_is_ended_too(
    django_capture_on_commit_callbacks,
):
    done = Job.objects.create(kind="x", title="done", state=Job.DONE)
    waiting = Job.objects.create(kind="tests.workbench.test_jobs.counting_job", params={"n": 1})
    done_row, waiting_row = running_task_row(done), running_task_row(waiting)
    fresh_row = running_task_row(waiting, age=1)  # a worker that has just taken it
    with django_capture_on_commit_callbacks(execute=True):
        jobs_reclaim()
    for row in (done_row, waiting_row, fresh_row):
        row.refresh_from_db()
    assert (done_row.status, waiting_row.status, fresh_row.status) == (
        "SUCCESSFUL",
        "FAILED",
        "RUNNING",
    )
    waiting.refresh_from_db()
    assert waiting.state == "done", "the job its stopped worker never began gets a task again"


def test_job_start_once_never_hands_back_a_job_whose_lease_ran_out(
    settings, django_capture_on_commit_callbacks
):
    kind, params = "tests.workbench.test_jobs.counting_job", {"n": 1, "version": "v1"}
    stuck = running_job(age=61, params=params)
    with django_capture_on_commit_callbacks(execute=True):
        again = job_start_once(kind=kind, title="t", params=params)
    assert again == stuck, "the same job (its page and address), run again"
    again.refresh_from_db()
    assert (again.state, again.attempts) == ("done", 2)
    settings.WORKBENCH_JOB_ATTEMPTS = 1
    spent = running_job(age=61, params={"n": 1, "version": "v2"})
    with django_capture_on_commit_callbacks(execute=True):
        fresh = job_start_once(kind=kind, title="t", params={"n": 1, "version": "v2"})
    spent.refresh_from_db()
    assert spent.state == "failed"
    assert fresh != spent
    fresh.refresh_from_db()
    assert (fresh.state, fresh.attempts) == ("done", 1)


def test_job_start_once_starts_anew_rather_than_hand_back_a_job_being_cancelled(organiser):
    kind, params = "tests.workbench.test_jobs.counting_job", {"n": 1}
    cancelling = running_job(params=params, cancel_requested_at=timezone.now())
    assert job_start_once(kind=kind, title="t", params=params) != cancelling


def test_a_failed_job_is_retried_as_itself_with_its_attempts_counted_afresh(
    organiser, django_capture_on_commit_callbacks
):
    job = running_job(age=61, attempts=3)
    jobs_reclaim()
    with django_capture_on_commit_callbacks(execute=True):
        retried = job_retry(job=job, by=organiser)
    assert retried.pk == job.pk
    retried.refresh_from_db()
    assert (retried.state, retried.attempts, retried.error) == ("done", 1, "")
    assert "Retried by olivia at " in retried.log
    with pytest.raises(JobStateError, match=f"job {job.pk} is done: only a failed job"):
        job_retry(job=retried, by=organiser)
    with pytest.raises(JobStateError, match="only a waiting or running job can be cancelled"):
        job_cancel(job=retried, by=organiser)


def test_cancelling_a_running_job_twice_is_cancelling_it_once(organiser, assessor):
    job = running_job()
    first = job_cancel(job=job, by=organiser)
    second = job_cancel(job=job, by=assessor)
    assert first.cancelling
    assert second.cancelling
    assert second.cancel_requested_by == organiser


def quiet_job(job, progress):
    """Sleeps past its lease without a progress call, then looks at its own heartbeat
    and at what a worker reclaiming jobs would take."""
    started = Job.objects.get(pk=job.pk).heartbeat_at
    time.sleep(1.2)
    return {
        "renewed": (Job.objects.get(pk=job.pk).heartbeat_at - started).total_seconds(),
        "reclaimed": len(jobs_reclaim()),
    }


@pytest.mark.django_db(transaction=True)
def test_the_lease_is_renewed_through_a_long_stretch_without_progress(settings):
    settings.WORKBENCH_JOB_LEASE_SECONDS = 0.4  # renewed every 0.1 s
    job = Job.objects.create(kind="tests.workbench.test_jobs.quiet_job", title="quiet")
    run_job.call(job.pk)
    job.refresh_from_db()
    assert job.state == "done", job.error
    assert job.result["reclaimed"] == 0
    assert job.result["renewed"] > 0.6
    assert not [t for t in threading.enumerate() if t.name.endswith("-heartbeat")]


def self_cancelling_job(job, progress):
    """Cancels itself, then works on with progress calls until stopped (at most 10 s)."""
    _cancel(job)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        progress.advance()
        time.sleep(0.02)
    return {"stopped": False}


@pytest.mark.django_db(transaction=True)
def test_a_cancel_reaches_a_job_run_by_a_worker_within_a_second(organiser):
    job = Job.objects.create(
        kind="tests.workbench.test_jobs.self_cancelling_job", title="c", created_by=organiser
    )
    started = time.monotonic()
    run_job.call(job.pk)
    job.refresh_from_db()
    assert (job.state, job.result) == ("failed", None)
    assert job.error.startswith("Cancelled by olivia")
    assert time.monotonic() - started < 3


# --------------------------------------------------------------------------
# The job page and the API: attempts, heartbeat, cancel and retry


def test_the_api_shows_attempts_and_the_last_heartbeat(organiser):
    job = running_job(attempts=2)
    client = APIClient()
    client.force_authenticate(organiser)
    body = client.get(f"/api/jobs/{job.pk}/").json()
    assert (body["attempts"], body["max_attempts"], body["cancelling"]) == (2, 3, False)
    assert datetime.fromisoformat(body["heartbeat_at"]) == job.heartbeat_at


def test_organisers_cancel_and_retry_a_job_over_the_api(
    organiser, django_capture_on_commit_callbacks
):
    job = running_job()
    client = APIClient()
    client.force_authenticate(organiser)
    cancelled = client.post(f"/api/jobs/{job.pk}/cancel/")
    assert cancelled.status_code == 200
    assert (cancelled.json()["state"], cancelled.json()["cancelling"]) == ("running", True)
    refused = client.post(f"/api/jobs/{job.pk}/retry/")
    assert refused.status_code == 409
    assert refused.json() == {
        "detail": f"job {job.pk} is running: only a failed job can be retried"
    }
    Job.objects.filter(pk=job.pk).update(state=Job.FAILED, error="stopped")
    with django_capture_on_commit_callbacks(execute=True):
        retried = client.post(f"/api/jobs/{job.pk}/retry/")
    assert retried.status_code == 202
    assert retried.json()["url"].endswith(f"/api/jobs/{job.pk}/")
    assert client.get(f"/api/jobs/{job.pk}/").json()["state"] == "done"
    assert client.post(f"/api/jobs/{job.pk}/cancel/").status_code == 409


def test_only_organisers_cancel_or_retry_a_job(assessor, assessor2, client):
    job = running_job(created_by=assessor)
    api = APIClient()
    for user in (assessor, assessor2):  # its creator too: they see it, no more
        api.force_authenticate(user)
        assert api.post(f"/api/jobs/{job.pk}/cancel/").status_code == 403
        assert api.post(f"/api/jobs/{job.pk}/retry/").status_code == 403
        client.force_login(user)
        assert client.post(reverse("job_cancel", args=[job.pk])).status_code == 403
    job.refresh_from_db()
    assert job.cancel_requested_at is None


def test_the_job_page_shows_attempts_the_heartbeat_and_the_organisers_buttons(
    client, organiser, assessor
):
    job = running_job(attempts=2, created_by=assessor)
    client.force_login(organiser)
    page = client.get(reverse("job_detail", args=[job.pk])).content.decode()
    heartbeat = timezone.localtime(job.heartbeat_at).strftime("%H:%M:%S")
    assert f"Attempt 2 of 3 · last heartbeat {heartbeat}" in page
    assert f'action="{reverse("job_cancel", args=[job.pk])}"' in page
    assert "Retry</button>" not in page
    assert "worker seems to have stopped" not in page
    client.force_login(assessor)
    page = client.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert "Attempt 2 of 3" in page
    assert "Cancel</button>" not in page, "buttons are the organisers'"


def test_the_job_page_says_when_the_worker_seems_to_have_stopped(client, organiser):
    job = running_job(age=120)
    client.force_login(organiser)
    page = client.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert "No heartbeat from its worker within the lease" in page


def test_an_organiser_cancels_and_retries_from_the_job_page(
    client, organiser, django_capture_on_commit_callbacks
):
    job = running_job()
    client.force_login(organiser)
    answer = client.post(reverse("job_cancel", args=[job.pk]), follow=True)
    page = answer.content.decode()
    assert answer.redirect_chain == [(reverse("job_detail", args=[job.pk]), 302)]
    assert "Cancelling: the job stops at its next step, storing nothing." in page
    assert "<strong>cancelling</strong>" in page
    assert "Cancel</button>" not in page
    Job.objects.filter(pk=job.pk).update(state=Job.FAILED, error="the worker running it stopped")
    page = client.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert "Retry</button>" in page
    with django_capture_on_commit_callbacks(execute=True):
        page = client.post(reverse("job_retry", args=[job.pk]), follow=True).content.decode()
    assert "Queued again." in page
    job.refresh_from_db()
    assert job.state == "done"
    page = client.post(reverse("job_retry", args=[job.pk]), follow=True).content.decode()
    assert "Not retried: job" in page


def test_a_start_function_stores_its_kind_under_the_name_rows_already_have():
    """Kinds are handed to `job_start` as functions (the start function beside its
    runner); a job row stores the dotted path, as rows made before did, so that
    they still run."""
    from pooling import jobs as pooling_jobs
    from scoring import jobs as scoring_jobs
    from workbench.jobs import job_kind

    kinds = [
        pooling_jobs.pool_build,
        pooling_jobs.pool_revise,
        pooling_jobs.runs_import,
        pooling_jobs.documents_import,
        scoring_jobs.qrels_bundle,
        scoring_jobs.pool_scores,
        scoring_jobs.pool_reusability,
        scoring_jobs.task_scores,
        scoring_jobs.release_make,
    ]
    assert [job_kind(kind) for kind in kinds] == [
        "pooling.jobs.pool_build",
        "pooling.jobs.pool_revise",
        "pooling.jobs.runs_import",
        "pooling.jobs.documents_import",
        "scoring.jobs.qrels_bundle",
        "scoring.jobs.pool_scores",
        "scoring.jobs.pool_reusability",
        "scoring.jobs.task_scores",
        "scoring.jobs.release_make",
    ]
    assert job_kind("pooling.jobs.pool_build") == "pooling.jobs.pool_build"
