"""Participants see their own team and nothing else: no other team's runs, no pool, no
judgment, no assignment, and no score before the release, on any page or in any JSON."""

from __future__ import annotations

import pytest
from django.urls import reverse

from judging.models import Assignment
from tests.helpers import assert_nothing_leaks_to_participants, make_judged_team_campaign
from workbench.roles import assessor_accounts, is_participant

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(participant):
    return make_judged_team_campaign(participant)


def test_a_participants_pages_and_json_show_only_their_team(participant_client, judged):
    _, alpha, _ = judged
    pages = [
        reverse("home"),
        reverse("teams:team_home"),
        reverse("teams:team_detail", args=[alpha.pk]),
        reverse("teams:team_scores", args=[alpha.pk]),
        reverse("api_tokens"),
        "/api/teams/",
        f"/api/teams/{alpha.pk}/runs/",
        f"/api/teams/{alpha.pk}/scores/",
        "/api/assignments/",
    ]
    for url in pages:
        response = participant_client.get(url, follow=True)
        assert response.status_code in (200, 403), url
        assert_nothing_leaks_to_participants(response.content.decode(), "Run scores")
    page = participant_client.get(reverse("teams:team_detail", args=[alpha.pk])).content.decode()
    assert "alpha1" in page
    assert participant_client.get("/api/assignments/").json() == []


def organiser_urls(campaign, pool) -> list[str]:
    slug, pk = campaign.slug, pool.pk
    return [
        reverse("pooling:campaign_list"),
        reverse("pooling:campaign_detail", args=[slug]),
        reverse("participation:campaign_teams", args=[slug]),
        reverse("pooling:pool_new", args=[slug]),
        reverse("pooling:pool_detail", args=[slug, pk]),
        reverse("pooling:pool_export", args=[slug, pk, "tsv"]),
        reverse("judging:pool_assignments", args=[pk]),
        reverse("judging:pool_agreement", args=[pk]),
        reverse("judging:pool_adjudication", args=[pk]),
        reverse("judging:campaign_dashboard", args=[slug]),
        reverse("scoring:pool_scores", args=[pk]),
        reverse("scoring:pool_leaderboard", args=[pk]),
        reverse("scoring:pool_qrels", args=[pk]),
        reverse("scoring:qrels_download", args=[pk, "trec"]),
        "/api/campaigns/",
        f"/api/campaigns/{slug}/runs/",
        f"/api/campaigns/{slug}/status/",
        f"/api/pools/{pk}/judgments/",
        f"/api/pools/{pk}/scores/",
        f"/api/pools/{pk}/qrels/",
        f"/api/pools/{pk}/leaderboard/",
        reverse("scoring:pool_releases", args=[pk]),
        reverse("scoring:release_detail", args=[pk, 1]),
        reverse("scoring:release_bundle", args=[pk, 1]),
        reverse("scoring:release_file", args=[pk, 1, "qrels.txt"]),
        f"/api/pools/{pk}/releases/",
        f"/api/pools/{pk}/releases/1/",
        f"/api/pools/{pk}/releases/1/bundle/",
        f"/api/pools/{pk}/releases/compare/?from=1&to=1",
    ]


@pytest.mark.parametrize("released", [False, True])
def test_organiser_pages_and_api_are_forbidden_to_participants(
    participant_client, judged, released
):
    campaign, _, pool = judged
    if released:
        from tests.helpers import make_release

        make_release(pool)
    for url in organiser_urls(campaign, pool):
        response = participant_client.get(url)
        assert response.status_code == 403, url
        assert_nothing_leaks_to_participants(response.content.decode())


def test_assessor_pages_and_api_are_not_a_participants(participant_client, judged):
    _ = judged
    assignment = Assignment.objects.first()
    for url in (
        reverse("judging:judge_next", args=[assignment.pk]),
        reverse("judging:judge", args=[assignment.pk, 1]),
        reverse("judging:judged_list", args=[assignment.pk]),
        f"/api/assignments/{assignment.pk}/next/",
        f"/api/assignments/{assignment.pk}/judgments/",
        f"/api/assignments/{assignment.pk}/notes/",
    ):
        response = participant_client.get(url)
        assert response.status_code == 404, url
        assert_nothing_leaks_to_participants(response.content.decode())
    response = participant_client.put(
        f"/api/assignments/{assignment.pk}/judgments/docx-1/",
        {"relevance": 0},
        content_type="application/json",
    )
    assert response.status_code == 404


def test_participants_are_not_assessors(participant, judged):
    assert is_participant(participant)
    assert participant not in assessor_accounts()
    assert assessor_accounts().filter(username="alice").exists()


def test_organisers_assign_only_assessors(organiser_client, judged):
    _, _, pool = judged
    page = organiser_client.get(reverse("judging:pool_assignments", args=[pool.pk]))
    text = page.content.decode()
    assert "> alice</label>" in text
    assert "> pat</label>" not in text
    assert "> rita</label>" not in text
