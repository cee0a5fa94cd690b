"""Requests no view can answer are refused once, before any view: a NUL or control
character in the address, a NUL in a query value or a JSON body, a path integer
past bigint."""

from __future__ import annotations

import json

import pytest

from tests.helpers import make_judged_team_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(participant):
    campaign, team, pool = make_judged_team_campaign(participant)
    assignment = pool.assignments.first()
    return {"campaign": campaign, "team": team, "pool": pool, "assignment": assignment}


@pytest.mark.parametrize(
    "address",
    [
        "/api/assignments/{assignment}/judgments/%00/",
        "/api/campaigns/{slug}/documents/%00/",
        "/api/pools/{pool}/judgments/?topic=%00",
        "/api/pools/{pool}/judgments/?assessor=%00",
        "/api/pools/{pool}/entries/?topic=%00",
        "/api/campaigns/{slug}/pools/?run=%00",
        "/api/teams/{team}/leaderboard/?measure=%00",
        "/api/campaigns/{slug}/documents/%E2%80%AEx/",
    ],
)
def test_a_nul_or_control_character_in_an_api_address_is_a_400_in_json(client, world, address):
    client.force_login(world["assignment"].assessor)
    url = address.format(
        assignment=world["assignment"].pk,
        slug=world["campaign"].slug,
        pool=world["pool"].pk,
        team=world["team"].pk,
    )
    response = client.put(url, "{}", content_type="application/json")
    assert response.status_code == 400
    assert "U+" in response.json()["detail"]


@pytest.mark.parametrize(
    "address", ["/judge/history/{topic}/%00/", "/judge/pools/{pool}/adjudicate/{topic}/%00/"]
)
def test_a_nul_in_a_page_address_is_a_400_that_says_why(client, world, address):
    client.force_login(world["assignment"].assessor)
    topic = world["assignment"].topic.pk
    response = client.get(address.format(topic=topic, pool=world["pool"].pk))
    assert response.status_code == 400
    assert "U+0000 (NUL)" in response.content.decode()


def test_a_nul_in_a_json_body_is_a_400(client, world, organiser):
    client.force_login(organiser)
    response = client.post(
        f"/api/campaigns/{world['campaign'].slug}/teams/",
        json.dumps({"name": "Gamma", "members": ["x\u0000"]}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "NUL" in response.json()["detail"]


def test_a_path_integer_past_bigint_names_nothing(client, world):
    client.force_login(world["assignment"].assessor)
    response = client.get(f"/api/assignments/{2**64}/next/")
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}
    assert client.get(f"/judge/a/{world['assignment'].pk}/{2**63}/").status_code == 404


def test_an_ordinary_address_is_let_through(client, world):
    client.force_login(world["assignment"].assessor)
    response = client.get(f"/api/assignments/{world['assignment'].pk}/next/")
    assert response.status_code == 204  # every document of the queue is judged


def test_ticked_values_that_are_no_ids_name_nothing(organiser_client, world):
    pool, slug = world["pool"], world["campaign"].slug
    for value in ("NaN", "$x$", "9" * 10_000, str(2**64)):
        added = organiser_client.post(
            f"/campaigns/{slug}/pools/{pool.pk}/add-runs/", {"runs": value}
        )
        assigned = organiser_client.post(
            f"/judge/pools/{pool.pk}/assignments/", {"topics": value, "assessors": value}
        )
        assert added.status_code < 500
        assert assigned.status_code < 500
