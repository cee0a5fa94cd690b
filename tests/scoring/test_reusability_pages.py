"""The reusability report of a pool on the web: page and API, made by a job, with
the numbers of `manage.py reusability --pool`."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from pooling.core.spec import PoolSpec, Stratum
from pooling.models import Run
from scoring import reusability_selectors
from scoring.core.analysis import reusability_render
from tests.helpers import make_campaign, make_pool, make_team
from tests.scoring.core.analysis.test_reusability_command import judged_pool, pool_main
from workbench.models import Job

pytestmark = pytest.mark.django_db


def command_report(pool) -> dict:
    status, out, err = pool_main("--pool", str(pool.pk), "--format", "json")
    assert (status, err) == (0, "")
    return json.loads(out)


def api_for(user) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return api


def test_the_page_makes_the_report_in_a_job_then_shows_it(
    organiser_client, django_capture_on_commit_callbacks
):
    pool = judged_pool(PoolSpec(depth=2))
    url = reverse("scoring:pool_reusability", args=[pool.pk])
    first = organiser_client.get(url)
    assert "Make the report" in first.content.decode()
    assert not Job.objects.exists()  # no writes on GET
    with django_capture_on_commit_callbacks(execute=True):
        started = organiser_client.post(url, {"measure": "map"})
    assert started.status_code == 302
    job = Job.objects.get()
    assert job.state == Job.DONE
    page = organiser_client.get(url + "?measure=map")
    assert page.context["report"] == command_report(pool)
    html = page.content.decode()
    assert 'data-run="A"' in html
    assert "map -J" in html
    # A second POST with the report made starts nothing.
    organiser_client.post(url, {"measure": "map"})
    assert Job.objects.count() == 1


def test_the_page_says_why_a_pool_cannot_be_reported_on(organiser_client):
    gaps = judged_pool(PoolSpec(depth=1, strata=(Stratum(3, 3, 0.5),), allow_gaps=True))
    page = organiser_client.get(reverse("scoring:pool_reusability", args=[gaps.pk]))
    assert page.status_code == 400
    assert "leaves ranks out" in page.context["error"]
    bad = organiser_client.get(
        reverse("scoring:pool_reusability", args=[gaps.pk]) + "?measure=P.5,10"
    )
    assert bad.status_code == 400
    empty = make_pool(make_campaign("empty"), {"301": ["d1"]})
    assert (
        organiser_client.get(reverse("scoring:pool_reusability", args=[empty.pk])).status_code
        == 400
    )


def test_the_api_starts_polls_and_gives_the_report(
    organiser, assessor, django_capture_on_commit_callbacks
):
    pool = judged_pool(PoolSpec(depth=2))
    api = api_for(organiser)
    url = f"/api/pools/{pool.pk}/reusability/?measure=map"
    assert api.get(url).status_code == 404
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(url)
    assert started.status_code == 202
    assert started["Location"] == reverse("api-job", args=[started.json()["job"]])
    report = api.get(url)
    assert report.status_code == 200
    assert report.json() == command_report(pool)
    assert api.get(f"/api/pools/{pool.pk}/reusability/?measure=nosuch").status_code == 400
    assert api_for(assessor).get(url).status_code == 403
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert "/api/pools/{pool_id}/reusability/" in schema["paths"]


def test_runs_of_teams_are_left_out_team_by_team_too(organiser_client):
    """A and B are one team's runs, C is the organiser's: leaving the team out takes
    what A and B pooled between them; the command and the page report alike."""
    pool = judged_pool(PoolSpec(depth=2))
    team = make_team(pool.campaign, "uni-x")
    Run.objects.filter(campaign=pool.campaign, tag__in=["A", "B"]).update(team=team)
    from_command = command_report(pool)
    assert [lo["unit"] for lo in from_command["leave_out"]] == ["run", "group"]
    groups = from_command["leave_out"][1]["units"]
    assert [(g["name"], g["runs"]) for g in groups] == [("(run C)", ["C"]), ("uni-x", ["A", "B"])]
    # A alone pools d2 and e1, B d3, and e2 only A and B pool: the team alone, four.
    assert [g["removed"] for g in groups] == [1, 4]
    report = reusability_selectors.pool_reusability(pool=pool, measure="map")
    assert reusability_render.to_json(report) == from_command


def test_the_pool_page_offers_the_report_once_judging_is_nearly_done(organiser_client):
    judged = judged_pool(PoolSpec(depth=2))
    page = organiser_client.get(
        reverse("pooling:pool_detail", args=[judged.campaign.slug, judged.pk])
    ).content.decode()
    assert "Judging is 100% done: ask whether the pool is" in page
    assert reverse("scoring:pool_reusability", args=[judged.pk]) in page

    unjudged = make_pool(make_campaign("fresh"), {"301": ["d1", "d2"]})
    page = organiser_client.get(
        reverse("pooling:pool_detail", args=[unjudged.campaign.slug, unjudged.pk])
    ).content.decode()
    assert "Judging is 0% done. Once it is nearly done" in page


def test_the_pool_page_offers_a_sampled_pool_its_report_with_inferred_measures(
    organiser_client,
):
    sampled = judged_pool(PoolSpec(depth=1, strata=(Stratum(2, 3, 0.5),)))
    page = organiser_client.get(
        reverse("pooling:pool_detail", args=[sampled.campaign.slug, sampled.pk])
    ).content.decode()
    assert reverse("scoring:pool_reusability", args=[sampled.pk]) in page
    assert "with inferred measures, as this pool samples" in page
    assert "needs a depth-k pool" not in page


SAMPLED = PoolSpec(depth=1, strata=(Stratum(2, 3, 0.5),), seed=3)


def test_a_sampled_pool_is_reported_on_with_infap_by_default(
    organiser_client, django_capture_on_commit_callbacks
):
    pool = judged_pool(SAMPLED)
    url = reverse("scoring:pool_reusability", args=[pool.pk])
    first = organiser_client.get(url)
    assert first.status_code == 200
    assert first.context["measure"] == "infAP"
    with django_capture_on_commit_callbacks(execute=True):
        organiser_client.post(url)
    assert Job.objects.get().params["measure"] == "infAP"
    page = organiser_client.get(url)
    assert page.context["report"] == command_report(pool)
    html = page.content.decode()
    assert "data-sampled" in html
    assert "documents pooled (" in html
    assert " -J</td>" not in html
    refused = organiser_client.get(url + "?measure=map")
    assert refused.status_code == 400
    assert "a sampled pool is scored with an inferred measure" in refused.context["error"]


def test_the_api_reports_on_a_sampled_pool_and_refuses_infap_for_a_depth_k_one(
    organiser, django_capture_on_commit_callbacks
):
    pool = judged_pool(SAMPLED)
    api = api_for(organiser)
    url = f"/api/pools/{pool.pk}/reusability/"
    assert api.get(url).status_code == 404
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post(url + "?measure=infNDCG").status_code == 202
    report = api.get(url + "?measure=infNDCG")
    assert report.status_code == 200
    assert report.json()["measure"] == "infNDCG"
    assert report.json() == json.loads(
        pool_main("--pool", str(pool.pk), "-m", "infNDCG", "--format", "json")[1]
    )
    assert api.get(url + "?measure=map").status_code == 400
    depth = make_pool(make_campaign("depth"), {"301": ["d1"]})
    refused = api.get(f"/api/pools/{depth.pk}/reusability/?measure=infAP")
    assert refused.status_code == 400
    assert "this pool samples nothing" in refused.json()["detail"]
