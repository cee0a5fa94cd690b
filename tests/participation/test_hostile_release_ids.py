"""A release id of thousands of digits is no release: the team's pages and API say so
(it was a ValueError 500: Python converts at most 4,300 digits)."""

from __future__ import annotations

import pytest

from tests.helpers import make_judged_team_campaign, make_release

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("page", ["scores", "leaderboard"])
def test_a_release_id_of_ten_thousand_digits_shows_the_newest_release(
    participant_client, participant, page
):
    _, team, pool = make_judged_team_campaign(participant)
    make_release(pool)
    response = participant_client.get(f"/teams/{team.pk}/{page}/", {"release": "9" * 10_000})
    assert response.status_code == 200


def test_the_api_refuses_a_release_id_of_ten_thousand_digits(participant_client, participant):
    _, team, pool = make_judged_team_campaign(participant)
    make_release(pool)
    response = participant_client.get(f"/api/teams/{team.pk}/scores/", {"release": "9" * 10_000})
    assert response.status_code == 400
    assert "release: a release id" in response.json()["detail"]
