"""The pool API: what-if, build (202 and a job), detail, entries, late runs, re-plan,
retire and reopen, with the pool pages' checks and budget refusals."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging import services as judging_services
from pooling import pool_services
from pooling.core.spec import PoolSpec
from pooling.models import Pool, PoolRevision, Run
from tests.helpers import make_campaign, make_run, make_sampled_pool, make_team, make_team_run
from workbench.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(organiser) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=organiser).key}")
    return client


@pytest.fixture
def campaign():
    campaign = make_campaign(judgment_budget=100)
    make_run(campaign, "a", {"301": ["d1", "d2", "d3"], "302": ["d4", "d5"]})
    make_run(campaign, "b", {"301": ["d3", "d6"], "302": ["d5", "d7"]})
    return campaign


def build(api, django_capture_on_commit_callbacks, **body) -> tuple:
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/campaigns/trec-x/pools/", body, format="json")
    return response


def test_whatif_costs_a_strategy_against_the_budget(api, campaign):
    response = api.get("/api/campaigns/trec-x/pools/whatif/", {"depth": "2"})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["chosen"] == {
        "scheme": "1-2:1.0",
        "depth": None,
        "candidates": 7,
        "pool_size": 7,
        "judged": 0,
        "needed": 7,
    }
    assert body["left"] == 100
    assert body["over_by"] == 0
    assert body["left_after"] == 93
    assert [row["depth"] for row in body["rows"]] == [3]
    assert body["fit_depth"]["depth"] == 3


def test_whatif_without_runs_is_a_409(api):
    make_campaign()
    response = api.get("/api/campaigns/trec-x/pools/whatif/", {"depth": "2"})
    assert response.status_code == 409
    assert response.json() == {"detail": "Upload runs first: a pool is built from them."}


def test_whatif_refuses_what_the_form_refuses(api, campaign):
    response = api.get("/api/campaigns/trec-x/pools/whatif/", {"strata": "1-10:2"})
    assert response.status_code == 400
    assert "non_field_errors" in response.json()


def test_build_answers_202_and_the_job_builds_the_pool(
    api, campaign, django_capture_on_commit_callbacks
):
    response = build(api, django_capture_on_commit_callbacks, depth="2", name="d2")
    assert response.status_code == 202, response.json()
    body = response.json()
    job = Job.objects.get(pk=body["job"])
    assert response["Location"] == f"/api/jobs/{job.pk}/"
    polled = api.get(body["url"]).json()
    assert polled["state"] == "done", polled
    pool = Pool.objects.get(pk=polled["result"]["pool"])
    assert (pool.name, pool.entries.count()) == ("d2", 7)


def test_build_from_a_preset(api, campaign, django_capture_on_commit_callbacks):
    response = build(api, django_capture_on_commit_callbacks, preset="depth-10", name="p")
    assert response.status_code == 202, response.json()
    assert Pool.objects.get().spec["depth"] == 10


def test_build_past_the_budget_needs_confirming(api, campaign, django_capture_on_commit_callbacks):
    campaign.judgment_budget = 2
    campaign.save()
    response = build(api, django_capture_on_commit_callbacks, depth="2")
    assert response.status_code == 409
    assert "asks for 7 new judgments" in response.json()["detail"]
    assert not Pool.objects.exists()
    response = build(api, django_capture_on_commit_callbacks, depth="2", confirm_over_budget=True)
    assert response.status_code == 202
    assert Pool.objects.count() == 1


def test_list_pools_filtered_by_run(api, campaign):
    make_run(campaign, "late", {"301": ["d9"]})
    pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1), name="all")
    listed = api.get("/api/campaigns/trec-x/pools/").json()
    assert [(p["name"], p["entries"], p["runs"]) for p in listed["results"]] == [
        ("all", 5, ["a", "b", "late"])
    ]
    assert api.get("/api/campaigns/trec-x/pools/", {"run": "nope"}).json()["count"] == 0
    assert api.get("/api/campaigns/trec-x/pools/", {"run": "a"}).json()["count"] == 1


def test_pool_detail_and_entries(api, campaign):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=2), name="d2")
    body = api.get(f"/api/pools/{pool.pk}/").json()
    assert body["label"] == "1-2:1.0"
    assert [(t["topic_id"], t["entries"], t["judged"]) for t in body["topics"]] == [
        ("301", 4, 0),
        ("302", 3, 0),
    ]
    assert body["late_runs"] == []
    entries = api.get(f"/api/pools/{pool.pk}/entries/", {"topic": "302"}).json()
    assert entries["count"] == 3
    assert {e["docno"] for e in entries["results"]} == {"d4", "d5", "d7"}
    assert all(e["sampled"] for e in entries["results"])
    assert [e["order"] for e in entries["results"]] == [1, 2, 3]


def test_a_filter_value_the_field_cannot_hold_is_a_400(api, campaign):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    response = api.get(f"/api/pools/{pool.pk}/entries/", {"sampled": "perhaps"})
    assert response.status_code == 400
    assert "sampled" in response.json()


def test_add_a_late_run(api, campaign):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    make_run(campaign, "late", {"301": ["d9", "d1"]})
    assert api.get(f"/api/pools/{pool.pk}/").json()["late_runs"] == ["late"]
    response = api.post(f"/api/pools/{pool.pk}/runs/", {"runs": ["late"]}, format="json")
    assert response.status_code == 201, response.json()
    assert (response.json()["runs"], response.json()["entries"]) == (["late"], 1)
    again = api.post(f"/api/pools/{pool.pk}/runs/", {"runs": ["late"]}, format="json")
    assert again.status_code == 400
    assert again.json() == {"detail": "already in the pool: late"}
    unknown = api.post(f"/api/pools/{pool.pk}/runs/", {"runs": ["zzz"]}, format="json")
    assert unknown.status_code == 400
    assert unknown.json() == {"runs": ["no run tagged 'zzz' in trec-x"]}


def test_replan_previews_then_applies_as_a_job(
    api, campaign, assessor, django_capture_on_commit_callbacks
):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    judging_services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[assessor]
    )
    preview = api.get(f"/api/pools/{pool.pk}/replan/", {"which": "all", "depth": "2"})
    assert preview.status_code == 200, preview.json()
    body = preview.json()
    assert body["topics"] == ["301", "302", "303"]
    assert body["cost"] == 3
    assert [row["joining"] for row in body["summary"]] == [2, 1]
    with django_capture_on_commit_callbacks(execute=True):
        applied = api.post(
            f"/api/pools/{pool.pk}/replan/",
            {"which": "chosen", "topics": ["301"], "depth": "2", "reason": "deeper"},
            format="json",
        )
    assert applied.status_code == 202, applied.json()
    assert Job.objects.get(pk=applied.json()["job"]).state == "done"
    revision = PoolRevision.objects.get()
    assert (revision.topics, revision.reason) == (["301"], "deeper")


def test_replan_preview_names_a_redraw_and_the_plan_that_keeps_the_sample(api):
    pool = make_sampled_pool()
    query = {"which": "all", "depth": "10", "strata": "11-40:0.5"}
    body = api.get(f"/api/pools/{pool.pk}/replan/", query).json()
    assert body["redraws"] == [{"stratum": "11-40:0.5", "was": ["11-100:0.5"]}]
    assert body["cost"] > 0
    assert body["joining"] >= body["cost"]
    assert body["judged_out_of_sample"] > 0
    keeping = body["sample_keeping"]
    assert keeping["label"].startswith("1-10:1.0 11-100:0.")
    assert keeping["cost"] == 0
    assert keeping["judged_out_of_sample"] < body["judged_out_of_sample"]
    lower = api.get(f"/api/pools/{pool.pk}/replan/", query | {"strata": "11-100:0.25"}).json()
    assert (lower["redraws"], lower["sample_keeping"]) == ([], None)


def test_replan_refuses_unknown_topics(api, campaign):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    response = api.get(
        f"/api/pools/{pool.pk}/replan/", {"which": "chosen", "topics": "999", "depth": "2"}
    )
    assert response.status_code == 400
    assert "topics" in response.json()


def test_retire_and_reopen(api, campaign):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    assert api.post(f"/api/pools/{pool.pk}/retire/").json()["retired_at"] is not None
    assert api.post(f"/api/pools/{pool.pk}/reopen/").json()["retired_at"] is None


def test_the_api_and_the_pool_page_cost_a_strategy_alike(api, organiser_client, campaign):
    """One what-if behind both (selectors.pool_whatif)."""
    params = {"depth": "2", "strata": "", "seed": "3"}
    page = organiser_client.get("/campaigns/trec-x/pools/whatif/", params).context
    body = api.get("/api/campaigns/trec-x/pools/whatif/", params).json()
    assert body["chosen"]["needed"] == int(page["chosen"]["needed"])
    assert [row["needed"] for row in body["rows"]] == [int(r["needed"]) for r in page["rows"]]
    assert (body["over_by"], body["left_after"]) == (page["over_by"], page["left_after"])
    assert body["fit_depth"]["depth"] == page["fit_depth"].depth


def test_the_api_pools_each_teams_first_runs_as_the_page_does(
    api, participant, django_capture_on_commit_callbacks
):
    """Team t's runs by precedence t2 then t1; the organiser's run o is pooled too."""
    campaign = make_campaign(judgment_budget=100)
    make_run(campaign, "o", {"301": ["d1"]})
    team = make_team(campaign, "t", members=[participant])
    make_team_run(team, "t1", {"301": ["d2"]})
    make_team_run(team, "t2", {"301": ["d3"]})
    Run.objects.filter(tag="t1").update(precedence=3)  # one precedence per run of a team
    Run.objects.filter(tag="t2").update(precedence=1)
    Run.objects.filter(tag="t1").update(precedence=2)
    whatif = api.get("/api/campaigns/trec-x/pools/whatif/", {"depth": "1", "runs_per_team": 1})
    assert whatif.status_code == 200, whatif.json()
    assert whatif.json()["chosen"]["candidates"] == 2  # d1 (o) and d3 (t2)
    response = build(api, django_capture_on_commit_callbacks, depth="1", runs_per_team=1)
    assert response.status_code == 202, response.json()
    assert sorted(Pool.objects.get().runs.values_list("tag", flat=True)) == ["o", "t2"]
    assert api.get("/api/campaigns/trec-x/pools/whatif/", {"runs_per_team": 0}).status_code == 400


def test_build_an_adaptive_pool_and_refuse_a_bad_strategy(
    api, campaign, django_capture_on_commit_callbacks
):
    response = build(
        api, django_capture_on_commit_callbacks, depth="3", strategy="hedge", budget=4, name="h"
    )
    assert response.status_code == 202, response.json()
    pool = Pool.objects.get()
    assert (pool.spec["strategy"], pool.spec["budget"]) == ("hedge", 4)
    assert not pool.entries.filter(sampled=True).exists()
    bad = build(api, django_capture_on_commit_callbacks, depth="3", strategy="greedy", budget=4)
    assert bad.status_code == 400
    assert "strategy" in bad.json()
    zero = build(api, django_capture_on_commit_callbacks, depth="3", strategy="mtf", budget=0)
    assert zero.status_code == 400
    assert "budget must be 1 or more" in str(zero.json())
    assert Pool.objects.count() == 1


def test_an_adaptive_pools_budget_is_raised_or_lowered_over_the_api(api, campaign):
    pool = pool_services.pool_build(
        campaign=campaign, spec=PoolSpec(depth=3, strategy="mtf", budget=4)
    )
    raised = api.post(f"/api/pools/{pool.pk}/budget/", {"budget": 6}, format="json")
    assert raised.status_code == 200, raised.json()
    pool.refresh_from_db()
    assert pool.spec["budget"] == 6
    over = api.post(f"/api/pools/{pool.pk}/budget/", {"budget": 500}, format="json")
    assert over.status_code == 409
    assert api.post(f"/api/pools/{pool.pk}/budget/", {"budget": 0}).status_code == 400
    fixed = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=2))
    refused = api.post(f"/api/pools/{fixed.pk}/budget/", {"budget": 5}, format="json")
    assert refused.status_code == 400
    assert "not adaptive" in refused.json()["detail"]
    pool.refresh_from_db()
    assert pool.spec["budget"] == 6


def test_whatif_costs_an_adaptive_pool_its_budget(api, campaign):
    body = api.get(
        "/api/campaigns/trec-x/pools/whatif/", {"depth": "3", "strategy": "mtf", "budget": "4"}
    ).json()
    assert (body["chosen"]["candidates"], body["chosen"]["needed"]) == (7, 4)
    assert body["left_after"] == 96
