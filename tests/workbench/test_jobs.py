"""Long work as jobs: progress, result, failure that stores nothing, pages, API, a real worker."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.urls import reverse
from rest_framework.test import APIClient

from pooling.core.spec import PoolSpec
from pooling.models import Pool
from tests.helpers import make_campaign, make_run
from workbench.jobs import job_latest, job_start, job_start_once, job_superseded
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
