"""The participants' API: their teams, their runs' upload and checks, their precedence."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from participation import services as team_services
from pooling import pool_services
from pooling.core.spec import PoolSpec
from pooling.models import Run
from tests.helpers import make_campaign, make_run, make_team, make_team_run, make_user, run_text

pytestmark = pytest.mark.django_db

ROWS = {"301": ["d1", "d2"], "302": ["d3"]}


@pytest.fixture
def campaign():
    return make_campaign()


@pytest.fixture
def team(campaign, participant):
    return make_team(campaign, "Alpha", [participant])


@pytest.fixture
def api(participant) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=participant).key}")
    return client


def runs_url(team) -> str:
    return f"/api/teams/{team.pk}/runs/"


def post_run(api, team, name: str, data: bytes):
    return api.post(runs_url(team), {"file": SimpleUploadedFile(name, data)}, format="multipart")


def test_a_participant_lists_their_teams_and_the_rules(api, campaign, team):
    campaign.max_runs_per_team, campaign.pooled_runs_per_team = 3, 2
    campaign.save()
    make_team(make_campaign("trec-y"), "Other", [make_user("rita")])
    assert api.get("/api/teams/").json() == [
        {
            "id": team.pk,
            "name": "Alpha",
            "campaign": "trec-x",
            "campaign_name": "TREC-X",
            "submission_deadline": None,
            "max_runs_per_team": 3,
            "pooled_runs_per_team": 2,
            "late_runs_accepted": 0,
            "submissions_open": True,
            "scores_released": False,
        }
    ]


def test_upload_answers_201_with_the_runs_check(api, team):
    response = post_run(api, team, "alpha1.txt", run_text("alpha1", {"301": ["d1", "d2"]}))
    assert response.status_code == 201
    run = response.json()
    assert run["tag"] == "alpha1"
    assert run["precedence"] == 1
    assert run["late"] is False
    assert run["uploaded_by"] == "pat"
    assert (run["line_count"], run["topic_count"], run["depth"]) == (2, 1, 2)
    assert run["missing_topics"] == ["302", "303"]
    assert [r["tag"] for r in api.get(runs_url(team)).json()] == ["alpha1"]


def test_the_runs_list_pages_when_asked_as_the_other_lists_do(api, team):
    for tag in ("alpha1", "alpha2", "alpha3"):
        make_team_run(team, tag, {"301": ["d1"]})
    assert [r["tag"] for r in api.get(runs_url(team)).json()] == ["alpha1", "alpha2", "alpha3"]
    page = api.get(runs_url(team), {"limit": 2, "offset": 1}).json()
    assert page["count"] == 3
    assert [r["tag"] for r in page["results"]] == ["alpha2", "alpha3"]
    assert page["previous"] is not None
    assert page["next"] is None
    assert api.get(f"/api/teams/{team.pk + 100}/runs/", {"limit": 2}).status_code == 404


def test_a_rejected_file_answers_400_with_file_line_reason(api, team):
    response = post_run(api, team, "bad.txt", b"301 Q0 d1 1 2 t\n301 Q0 d1 2 1 t\n")
    assert response.status_code == 400
    assert response.json() == {
        "detail": "Rejected: nothing was stored.",
        "errors": [
            {
                "file": "bad.txt",
                "line": 2,
                "reason": "docno 'd1' appears twice in topic '301' (first on line 1)",
            }
        ],
        "total": 1,
    }
    assert not Run.objects.exists()


def test_a_run_tag_holding_a_bidi_control_is_refused_with_its_line(api, team):
    response = post_run(api, team, "evil.txt", b"301 Q0 d1 1 2 run\xe2\x80\xaegpj.exe\n")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["file"], error["line"]) == ("evil.txt", 1)
    assert error["reason"].startswith("run tag 'run\\u202egpj.exe' holds U+202E")
    assert not Run.objects.exists()


def test_after_the_deadline_400_with_the_reason(api, campaign, team):
    campaign.submission_deadline = timezone.now() - timedelta(hours=1)
    campaign.save()
    response = post_run(api, team, "alpha1.txt", run_text("alpha1", ROWS))
    assert response.status_code == 400
    assert response.json()["detail"].startswith("Refused: the submission deadline (")
    assert not Run.objects.exists()
    team_services.team_late_runs_accept(team=team)
    response = post_run(api, team, "alpha1.txt", run_text("alpha1", ROWS))
    assert response.status_code == 201
    assert response.json()["late"] is True


def test_past_the_most_runs_400_with_the_reason(api, campaign, team):
    campaign.max_runs_per_team = 1
    campaign.save()
    assert post_run(api, team, "a.txt", run_text("a", ROWS)).status_code == 201
    response = post_run(api, team, "b.txt", run_text("b", ROWS))
    assert response.status_code == 400
    assert "already has 1 run(s), the most TREC-X takes" in response.json()["detail"]


def test_one_file_per_upload(api, team):
    files = [SimpleUploadedFile(f"{t}.txt", run_text(t, ROWS)) for t in ("a", "b")]
    response = api.post(runs_url(team), {"file": files}, format="multipart")
    assert response.status_code == 400
    assert not Run.objects.exists()


def test_precedence(api, campaign, team):
    for tag in ("a", "b", "c"):
        make_team_run(team, tag, ROWS)
    url = f"/api/teams/{team.pk}/precedence/"
    response = api.put(url, {"order": ["c", "a", "b"]}, format="json")
    assert response.status_code == 200
    assert [(r["tag"], r["precedence"]) for r in response.json()] == [
        ("c", 1),
        ("a", 2),
        ("b", 3),
    ]
    response = api.put(url, {"order": ["c", "a"]}, format="json")
    assert response.status_code == 400
    assert "left out: b" in response.json()["detail"]
    campaign.submission_deadline = timezone.now() - timedelta(hours=1)
    campaign.save()
    response = api.put(url, {"order": ["a", "b", "c"]}, format="json")
    assert response.status_code == 400
    assert "no longer changes" in response.json()["detail"]


def test_another_teams_runs_are_a_404(api, campaign, team):
    rivals = make_team(campaign, "Rivals", [make_user("rita")])
    make_team_run(rivals, "rivalrun", ROWS)
    assert api.get(runs_url(rivals)).status_code == 404
    assert post_run(api, rivals, "x.txt", run_text("x", ROWS)).status_code == 404
    response = api.put(f"/api/teams/{rivals.pk}/precedence/", {"order": []}, format="json")
    assert response.status_code == 404
    assert Run.objects.count() == 1


def test_a_team_withdraws_its_run_over_the_api(api, campaign, team):
    a1, a2 = make_team_run(team, "alpha1", ROWS), make_team_run(team, "alpha2", ROWS)
    assert api.delete(f"/api/teams/{team.pk}/runs/{a1.pk}/").status_code == 204
    assert [(r["tag"], r["precedence"]) for r in api.get(runs_url(team)).json()] == [("alpha2", 1)]
    rivals = make_team(campaign, "Rivals", [make_user("rita")])
    theirs = make_team_run(rivals, "rival1", ROWS)
    assert api.delete(f"/api/teams/{team.pk}/runs/{theirs.pk}/").status_code == 404
    assert api.delete(f"/api/teams/{rivals.pk}/runs/{theirs.pk}/").status_code == 404
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    assert a2 in pool.runs.all()
    pooled = api.delete(f"/api/teams/{team.pk}/runs/{a2.pk}/")
    assert pooled.status_code == 409
    assert "is in pool" in pooled.json()["detail"]
    campaign.submission_deadline = timezone.now() - timedelta(hours=1)
    campaign.save()
    late = api.delete(f"/api/teams/{team.pk}/runs/{a2.pk}/")
    assert late.status_code == 400
    assert "deadline" in late.json()["detail"]
    assert set(Run.objects.values_list("tag", flat=True)) == {"alpha2", "rival1"}


def test_a_participant_withdraws_a_run_by_the_id_the_api_gave(api, team, client, participant):
    """Using only the API: the id comes from the upload's answer and from the list."""
    posted = post_run(api, team, "alpha1.txt", run_text("alpha1", ROWS)).json()
    post_run(api, team, "alpha2.txt", run_text("alpha2", ROWS))
    listed = {run["tag"]: run["id"] for run in api.get(runs_url(team)).json()}
    assert listed["alpha1"] == posted["id"] == Run.objects.get(tag="alpha1").pk
    assert api.delete(f"{runs_url(team)}{posted['id']}/").status_code == 204
    assert [run["tag"] for run in api.get(runs_url(team)).json()] == ["alpha2"]
    client.force_login(participant)
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    described = schema["components"]["schemas"]["TeamRun"]
    assert "id" in described["required"]
    assert described["properties"]["id"]["type"] == "integer"


def test_an_organisers_run_is_not_the_teams(api, campaign, team):
    make_run(campaign, "baseline", ROWS)
    assert api.get(runs_url(team)).json() == []


# --------------------------------------------------------------------------
# The organiser's side


def organiser_api(organiser) -> APIClient:
    client = APIClient()
    client.force_authenticate(organiser)
    return client


@pytest.mark.parametrize(
    ("body", "field", "reason"),
    [
        ({"name": "uni\u202ex", "members": []}, "name", "team name 'uni\\u202ex' holds U+202E"),
        ({"name": "x", "members": ["pat\x1b"]}, "members", "username 'pat\\x1b' holds U+001B"),
        # A NUL is refused with the whole JSON body (tests/workbench/test_middleware.py).
        ({"name": "x", "members": ["pat\x7f"]}, "members", "username 'pat\\x7f' holds U+007F"),
    ],
)
def test_a_team_name_or_member_holding_a_control_character_is_a_400(
    organiser, participant, body, field, reason
):
    campaign = make_campaign(topics=("301",))
    response = organiser_api(organiser).post(
        f"/api/campaigns/{campaign.slug}/teams/", body, format="json"
    )
    assert response.status_code == 400
    [message] = response.json()[field]
    assert message.startswith(reason)
    assert not campaign.teams.exists()


def test_organisers_register_teams_set_limits_and_release_over_the_api(organiser, participant):
    from judging import services as judging_services
    from pooling.core.spec import PoolSpec

    campaign = make_campaign(topics=("301",))
    api = organiser_api(organiser)
    url = f"/api/campaigns/{campaign.slug}/teams/"
    created = api.post(url, {"name": "uni-x", "members": ["pat"]}, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["members"] == ["pat"]
    again = api.post(url, {"name": "uni-x", "members": []}, format="json")
    assert again.status_code == 400
    assert "already has a team named 'uni-x'" in again.json()["detail"]
    assert api.post(url, {"name": "y", "members": ["nobody"]}, format="json").status_code == 400
    assert [t["name"] for t in api.get(url).json()] == ["uni-x"]

    settings_url = f"/api/campaigns/{campaign.slug}/team-settings/"
    limits = {"submission_deadline": None, "max_runs_per_team": 2, "pooled_runs_per_team": 1}
    assert api.put(settings_url, limits, format="json").json() == limits
    campaign.refresh_from_db()
    assert (campaign.max_runs_per_team, campaign.pooled_runs_per_team) == (2, 1)
    bad = api.put(settings_url, limits | {"max_runs_per_team": 0}, format="json")
    assert bad.status_code == 400

    team = campaign.teams.get()
    make_team_run(team, "x1", {"301": ["d1"]})
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    release = f"/api/pools/{pool.pk}/releases/"
    participant_api = APIClient()
    participant_api.force_authenticate(participant)
    assert participant_api.get(f"/api/teams/{team.pk}/scores/").status_code == 403
    assert api.post(release, {"measure": "map"}, format="json").status_code == 409  # unjudged
    [assignment] = judging_services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[make_user("alice")]
    )
    judging_services.judgment_submit(assignment=assignment, docno="d1", relevance=0, aspects={})
    made = api.post(release, {"measure": "map", "reason": "first"}, format="json")
    assert (made.status_code, made.json()["version"]) == (201, 1), made.json()
    assert participant_api.get(f"/api/teams/{team.pk}/scores/").status_code == 200
    assert participant_api.get("/api/teams/").json()[0]["scores_released"] is True
    withdraw = f"{release}1/withdraw/"
    assert api.post(withdraw, {}, format="json").status_code == 400  # no reason
    assert api.post(withdraw, {"reason": "wrong pool"}, format="json").status_code == 200
    assert participant_api.get(f"/api/teams/{team.pk}/scores/").status_code == 403
    assert participant_api.get(url).status_code == 403
