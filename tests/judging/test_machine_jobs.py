"""The machine_judge job: progress, result, cancel (keeping what is stored), resume."""

from __future__ import annotations

import pytest

from judging import machine_services
from judging.jobs import machine_judge_start
from judging.models import MachineJudgment
from tests.judging.chat_server import ChatServer, Reply
from tests.judging.machine_helpers import make_chat_machine, make_machine_pool
from workbench.jobs import job_cancel
from workbench.models import Job

pytestmark = pytest.mark.django_db


def start(capture, machine, pool, **options):
    with capture(execute=True):
        job = machine_judge_start(machine=machine, pool=pool, **options)
    job.refresh_from_db()
    return job


def test_a_job_labels_the_pool_and_records_what_it_did(
    django_capture_on_commit_callbacks, monkeypatch
):
    campaign, pool = make_machine_pool(docs=2)
    with ChatServer() as server:
        machine = make_chat_machine(campaign, server.url)
        job = start(django_capture_on_commit_callbacks, machine, pool, topics=["301"])
    assert job.state == Job.DONE, job.error
    assert (job.done, job.total, job.unit) == (2, 2, "documents")
    assert job.result["judged"] == 2
    assert job.result["requests"] == 2
    assert "judged: 2" in job.log


def test_a_cancelled_job_keeps_its_stored_batches_and_a_new_one_goes_on(
    django_capture_on_commit_callbacks, monkeypatch
):
    campaign, pool = make_machine_pool(docs=3)
    monkeypatch.setattr(machine_services, "BATCH", 2)
    store = machine_services._store

    def store_then_cancel(**kwargs):
        store(**kwargs)
        job_cancel(job=Job.objects.get(state=Job.RUNNING))

    monkeypatch.setattr(machine_services, "_store", store_then_cancel)
    # Progress is written every half second: a batch takes longer here.
    with ChatServer(lambda body: Reply(delay=0.3)) as server:
        machine = make_chat_machine(campaign, server.url, concurrency=1)
        job = start(django_capture_on_commit_callbacks, machine, pool)
        assert job.state == Job.FAILED
        assert "ancel" in job.error
        assert MachineJudgment.objects.count() == 2
        monkeypatch.setattr(machine_services, "_store", store)
        again = start(django_capture_on_commit_callbacks, machine, pool)
    assert again.state == Job.DONE, again.error
    assert (again.result["skipped"], again.result["judged"]) == (2, 4)
    assert len(server.requests) == 6


def test_a_missing_key_refuses_to_start_the_job(monkeypatch):
    campaign, pool = make_machine_pool(docs=1)
    monkeypatch.delenv("WB_TEST_KEY", raising=False)
    machine = make_chat_machine(campaign, "http://127.0.0.1:9/v1", api_key_env="WB_TEST_KEY")
    with pytest.raises(machine_services.MachineError, match="WB_TEST_KEY"):
        machine_judge_start(machine=machine, pool=pool)
    assert not Job.objects.exists()
