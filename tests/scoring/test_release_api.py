"""The organisers' release API: release, list, read, compare, withdraw, download."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import override_settings
from rest_framework.test import APIClient

from judging import services as judging_services
from scoring import services
from scoring.models import Release
from tests.helpers import make_judged_team_campaign, make_release
from workbench.jobs import run_job
from workbench.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(participant):
    return make_judged_team_campaign(participant)


@pytest.fixture
def api(organiser) -> APIClient:
    client = APIClient()
    client.force_authenticate(organiser)
    return client


def test_an_organiser_releases_lists_reads_compares_and_withdraws(api, judged, organiser):
    campaign, _, pool = judged
    url = f"/api/pools/{pool.pk}/releases/"
    made = api.post(url, {"measure": "P.10", "test": "wilcoxon", "reason": "first"}, format="json")
    assert made.status_code == 201, made.json()
    body = made.json()
    assert (body["version"], body["measure"], body["released_by"]) == (1, "P.10", "olivia")
    assert body["leaderboard_options"]["tests"] == ["wilcoxon"]
    assert body["label_policy"]["labels"] == "human"
    assert {run["tag"]: run["means"]["P_10"] for run in body["runs"]} == {
        "alpha1": pytest.approx(0.1),
        "rivalrun": pytest.approx(0.05),
    }
    assert body["leaderboard"]["measure"] == "P_10"
    qrels = api.get(body["files"]["qrels.txt"]["url"])
    assert qrels.status_code == 200
    assert qrels.content.decode().splitlines()[0] == "301 0 docx-1 1"

    judging_services.judgment_record(
        assessor=User.objects.get(username="alice"),
        topic=campaign.topics.get(topic_id="301"),
        docno="docx-1",
        relevance=0,
        aspects={},
    )
    assert api.post(url, {"measure": "P.10", "test": "wilcoxon"}, format="json").status_code == 201
    listed = api.get(url).json()
    assert [(r["version"], r["withdrawn"]) for r in listed] == [(1, None), (2, None)]

    compared = api.get(f"{url}compare/", {"from": 1, "to": 2}).json()
    assert compared["labels"] == [
        {"topic": "301", "docno": "docx-1", "old": 1, "new": 0, "change": "changed"}
    ]
    assert compared["label_counts"] == {"added": 0, "changed": 1, "removed": 0}
    assert {(s["run"], s["measure"]) for s in compared["scores"]} >= {("alpha1", "map")}
    assert compared["flips"] == []
    assert api.get(f"{url}compare/", {"from": 1, "to": 9}).status_code == 404
    assert api.get(f"{url}compare/", {"from": "one"}).status_code == 400

    assert api.post(f"{url}1/withdraw/", {}, format="json").json() == {
        "reason": ["This field is required."]
    }
    withdrawn = api.post(f"{url}1/withdraw/", {"reason": "superseded"}, format="json").json()
    assert withdrawn["withdrawn"]["reason"] == "superseded"
    assert withdrawn["withdrawn"]["by"] == organiser.username
    again = api.post(f"{url}1/withdraw/", {"reason": "again"}, format="json")
    assert (again.status_code, again.json()["detail"]) == (
        400,
        f"release 1 of pool {pool.pk} is withdrawn already",
    )
    assert api.get(f"{url}1/").json()["withdrawn"]["reason"] == "superseded"  # kept


def test_the_bundle_downloads_as_the_command_writes_it(api, judged):
    from scoring import release_selectors

    _, _, pool = judged
    release = make_release(pool)
    response = api.get(f"/api/pools/{pool.pk}/releases/1/bundle/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    data = b"".join(response.streaming_content)
    expected = io.BytesIO()
    release_selectors.release_bundle(release, expected)
    assert data == expected.getvalue()
    assert "runs/alpha1" in zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert api.get(f"/api/pools/{pool.pk}/releases/2/bundle/").status_code == 404
    assert api.get(f"/api/pools/{pool.pk}/releases/1/files/nosuch.txt").status_code == 404


def test_bad_release_requests_are_400_and_store_nothing(api, judged):
    _, _, pool = judged
    url = f"/api/pools/{pool.pk}/releases/"
    assert api.post(url, {"measure": "nosuch"}, format="json").status_code == 400
    assert api.post(url, {"alpha": 3}, format="json").status_code == 400
    assert api.post(url, {"labels": "machine"}, format="json").status_code == 400
    assert not Release.objects.exists()


def test_a_large_pool_is_released_by_a_job(
    api, judged, settings, django_capture_on_commit_callbacks
):
    _, _, pool = judged
    settings.WORKBENCH_SYNC_SCORING_CELLS = 1
    cache.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            f"/api/pools/{pool.pk}/releases/", {"measure": "map", "reason": "big"}, format="json"
        )
    assert response.status_code == 202, response.json()
    job = Job.objects.get(pk=response.json()["job"])
    assert job.state == Job.DONE, job.error
    release = Release.objects.get()
    assert job.result == {"pool": pool.pk, "release": release.pk, "version": 1}
    assert (job.done, job.total, job.unit) == (2, 2, "runs")
    assert release.reason == "big"
    assert release.released_by.username == "olivia"


def test_a_release_job_run_again_after_it_finished_makes_no_second_release(
    judged, organiser, django_capture_on_commit_callbacks
):
    _, _, pool = judged
    with (
        override_settings(WORKBENCH_SYNC_SCORING_CELLS=1),
        django_capture_on_commit_callbacks(execute=True),
    ):
        job = services.release_start(pool=pool, measure="map", released_by=organiser)
    assert isinstance(job, Job)
    run_job.call(job.pk)  # a second worker picks the same job up: it is done already
    assert Release.objects.count() == 1
