"""The machine assessors' API: organisers only, keys never shown, a run is a job."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from judging.models import MachineAssessor
from tests.judging.chat_server import ChatServer
from tests.judging.machine_helpers import make_machine_pool
from workbench.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(organiser):
    client = APIClient()
    client.force_authenticate(organiser)
    return client


def test_an_organiser_adds_lists_and_updates_a_machine(api):
    campaign, _ = make_machine_pool()
    url = f"/api/campaigns/{campaign.slug}/machines/"
    made = api.post(
        url,
        {
            "name": "llama",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "m",
            "api_key_env": "OPENAI_API_KEY",
            "price_per_1k_tokens": "0.002",
        },
        format="json",
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert body["machine"] is True
    assert body["api_key_env"] == "OPENAI_API_KEY"
    assert body["account"] == f"machine.{campaign.slug}.llama"
    assert [m["name"] for m in api.get(url).json()] == ["llama"]
    changed = api.patch(f"{url}{body['id']}/", {"samples": 3}, format="json")
    assert changed.json()["samples"] == 3
    refused = api.patch(f"{url}{body['id']}/", {"prompt_override": "{oops}"}, format="json")
    assert refused.status_code == 400
    assert "unknown placeholder" in refused.json()["detail"]
    again = api.post(url, {"name": "llama", "kind": "lexical"}, format="json")
    assert again.status_code == 400
    assert "already has" in again.json()["detail"]


def test_a_run_answers_202_with_its_job_and_the_labels_are_paged(
    api, django_capture_on_commit_callbacks
):
    campaign, pool = make_machine_pool(docs=2)
    with ChatServer() as server:
        machine = api.post(
            f"/api/campaigns/{campaign.slug}/machines/",
            {"name": "m1", "base_url": server.url, "model": "m"},
            format="json",
        ).json()
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(
                f"/api/campaigns/{campaign.slug}/machines/{machine['id']}/runs/",
                {"pool": pool.pk, "topics": ["301"]},
                format="json",
            )
    assert response.status_code == 202, response.content
    job = Job.objects.get(pk=response.json()["job"])
    assert job.state == Job.DONE, job.error
    labels = api.get(f"/api/pools/{pool.pk}/machine-labels/?limit=1").json()
    assert labels["count"] == 2
    assert labels["results"][0]["labels"]["relevance"] == 2
    assert labels["results"][0]["assessor"] == MachineAssessor.objects.get().account.username


def test_a_run_on_a_bad_pool_or_topic_is_a_400(api):
    campaign, pool = make_machine_pool(docs=1)
    machine = api.post(
        f"/api/campaigns/{campaign.slug}/machines/",
        {"name": "b", "kind": "lexical"},
        format="json",
    ).json()
    url = f"/api/campaigns/{campaign.slug}/machines/{machine['id']}/runs/"
    assert api.post(url, {"pool": 999}, format="json").status_code == 400
    bad = api.post(url, {"pool": pool.pk, "topics": ["nope"]}, format="json")
    assert bad.status_code == 400
    assert "unknown topics: nope" in bad.json()["detail"]


def test_assessors_cannot_see_machines(assessor):
    campaign, pool = make_machine_pool(docs=1)
    client = APIClient()
    client.force_authenticate(assessor)
    assert client.get(f"/api/campaigns/{campaign.slug}/machines/").status_code == 403
    assert client.get(f"/api/pools/{pool.pk}/machine-labels/").status_code == 403
