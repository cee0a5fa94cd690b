"""The calibration report (issue 25 item 6): a machine's labels against the humans'
and the runs ranked on human, machine and human-then-machine qrels; its page, API,
command and background job."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from judging.models import Judgment
from scoring import calibration_selectors
from tests.scoring.label_variant_helpers import MACHINE, make_variant_pool, store_machine_labels
from workbench.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def pool():
    return make_variant_pool("calib")


@pytest.fixture
def api(organiser) -> APIClient:
    client = APIClient()
    client.force_authenticate(organiser)
    return client


def report_of(pool, *measures: str) -> dict:
    out = io.StringIO()
    call_command(
        "machine_report",
        *("--pool", str(pool.pk), "--format", "json"),
        *(arg for m in measures for arg in ("--measure", m)),
        stdout=out,
    )
    return json.loads(out.getvalue())


def test_the_labels_are_compared_on_the_documents_both_judged(pool):
    report = report_of(pool, "recip_rank")
    relevance = next(a for a in report["aspects"] if a["aspect"] == "relevance")
    # Both judged 301-d0 (2 vs 0), 301-d1 (0 vs 1), 302-d0 (1 vs 1).
    assert relevance["n"] == 3
    assert relevance["values"] == [0, 1, 2]
    assert relevance["confusion"]["counts"] == [[0, 1, 0], [0, 1, 0], [1, 0, 0]]
    assert relevance["observed_agreement"]["value"] == pytest.approx(1 / 3)
    assert [t["query_id"] for t in relevance["per_topic"]] == ["301", "302"]
    assert report["machine"]["name"] == "llm"
    assert report["machine"]["baseline"] is False


def test_the_run_rankings_are_compared_per_measure_and_source(pool):
    report = report_of(pool, "recip_rank")
    [measure] = report["runs"]["measures"]
    assert measure["name"] == "recip_rank"
    by_source = {c["labels"]: c for c in measure["comparisons"]}
    # recip_rank: human run-a 1 > run-b 1/3; machine run-b 1 > run-a .75; both tie at 1.
    machine = by_source["machine"]["ranking"]
    assert machine["kendall_tau_b"] == pytest.approx(-1.0)
    assert machine["first_leader"] == "run-a"
    assert machine["second_leader"] == "run-b"
    assert machine["same_leader"] is False
    assert by_source["human-then-machine"]["ranking"]["n_runs"] == 2
    assert by_source["machine"]["significance"]["n_pairs"] == 1
    assert report["runs"]["test"] == "t"
    assert report["runs"]["correction"] == "holm"


def test_the_text_report_states_what_the_numbers_mean(pool):
    out = io.StringIO()
    call_command("machine_report", "--pool", str(pool.pk), "--machine", "llm", stdout=out)
    text = out.getvalue()
    assert "relevance: 3 documents judged by both" in text
    assert "human vs machine" in text
    assert "human vs human-then-machine" in text
    assert "Clarke & Dietz" in text
    assert "Circularity" in text
    assert "gamed" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--machine", "ghost"], "no machine 'ghost'"),
        (["--measure", "P"], "measure 'P'"),
        (["--measure", "nonsense"], "measure 'nonsense'"),
    ],
)
def test_bad_input_exits_2_with_the_reason(pool, args, message):
    with pytest.raises(CommandError, match=message) as error:
        call_command("machine_report", "--pool", str(pool.pk), *args)
    assert error.value.returncode == 2


def test_several_machines_need_a_name_and_a_missing_pool_exits_2(pool):
    store_machine_labels(pool.campaign, "other", MACHINE)
    with pytest.raises(CommandError, match="name the machine, one of llm, other") as error:
        call_command("machine_report", "--pool", str(pool.pk))
    assert error.value.returncode == 2
    with pytest.raises(CommandError, match="no pool with id 999"):
        call_command("machine_report", "--pool", "999")


def test_the_api_gives_the_report_and_400_on_bad_names(api, pool):
    url = f"/api/pools/{pool.pk}/calibration/"
    answer = api.get(url, {"machine": "llm", "measure": "recip_rank"})
    assert answer.status_code == 200
    assert answer.json() == report_of(pool, "recip_rank")
    assert api.get(url, {"machine": "ghost"}).status_code == 400
    bad = api.get(url, {"measure": "P"})
    assert bad.status_code == 400
    assert "measure 'P'" in bad.json()["detail"]


def test_nothing_judged_by_a_human_is_a_409_and_a_notice(api, organiser_client):
    pool = make_variant_pool("unjudged")
    Judgment.objects.all().delete()
    assert api.get(f"/api/pools/{pool.pk}/calibration/").status_code == 409
    page = organiser_client.get(reverse("scoring:pool_calibration", args=[pool.pk]))
    assert page.status_code == 200
    assert "Nothing is judged by a human in this pool yet." in page.content.decode()


def test_the_page_shows_the_report_and_says_what_it_means(organiser_client, pool):
    page = organiser_client.get(
        reverse("scoring:pool_calibration", args=[pool.pk]),
        {"machine": "llm", "measure": "recip_rank map"},
    )
    assert page.status_code == 200
    text = page.content.decode()
    assert 'data-aspect="relevance"' in text
    assert 'data-measure="recip_rank" data-labels="machine"' in text
    assert 'data-measure="map" data-labels="human-then-machine"' in text
    assert "Clarke &amp; Dietz" in text
    assert "3 documents judged by both" in text


def test_the_page_refuses_a_bad_machine_with_a_400(organiser_client, pool):
    page = organiser_client.get(
        reverse("scoring:pool_calibration", args=[pool.pk]), {"machine": "ghost"}
    )
    assert page.status_code == 400
    assert "no machine &#x27;ghost&#x27;" in page.content.decode()


def test_assessors_cannot_open_the_page(assessor_client, pool):
    page = assessor_client.get(reverse("scoring:pool_calibration", args=[pool.pk]))
    assert page.status_code in (302, 403)


def test_the_machines_page_and_the_pool_tabs_link_to_it(organiser_client, pool):
    text = organiser_client.get(reverse("judging:pool_machines", args=[pool.pk])).content.decode()
    assert reverse("scoring:pool_calibration", args=[pool.pk]) + "?machine=llm" in text


def test_a_large_pool_makes_the_report_in_a_job(
    organiser_client, api, pool, settings, django_capture_on_commit_callbacks
):
    settings.WORKBENCH_SYNC_SCORING_CELLS = 1
    url = reverse("scoring:pool_calibration", args=[pool.pk])
    query = {"machine": "llm", "measure": "recip_rank"}
    page = organiser_client.get(url, query)
    assert "Make the report" in page.content.decode()
    assert api.get(f"/api/pools/{pool.pk}/calibration/", query).status_code == 404
    assert not Job.objects.exists()  # a GET starts nothing
    with django_capture_on_commit_callbacks(execute=True):
        posted = organiser_client.post(url, query)
    assert posted.status_code == 302
    job = Job.objects.get(kind=calibration_selectors.CALIBRATION_JOB)
    assert job.state == Job.DONE, job.error
    answer = api.get(f"/api/pools/{pool.pk}/calibration/", query)
    assert answer.status_code == 200
    assert answer.json() == report_of(pool, "recip_rank")
    page = organiser_client.get(url, query).content.decode()
    assert 'data-measure="recip_rank" data-labels="machine"' in page
    # New machine labels: the stored report is out of date.
    store_machine_labels(pool.campaign, "llm", {("301", "301-d0"): 2})
    assert api.get(f"/api/pools/{pool.pk}/calibration/", query).status_code == 404
