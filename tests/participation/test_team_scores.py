"""A team's own scores: none before the organiser makes a release, then its runs only
as released (the organiser's numbers then), whatever happens to the labels later."""

from __future__ import annotations

import pytest
from django.urls import reverse

from scoring import leaderboard_selectors, selectors
from scoring.core.analysis.leaderboard import Options as LeaderboardOptions
from tests.helpers import (
    assert_nothing_leaks_to_participants,
    make_judged_team_campaign,
    make_release,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(participant):
    return make_judged_team_campaign(participant)


def scores_url(team) -> str:
    return f"/api/teams/{team.pk}/scores/"


def page_url(team) -> str:
    return reverse("teams:team_scores", args=[team.pk])


def test_no_scores_before_the_release(participant_client, judged):
    _, alpha, _ = judged
    page = participant_client.get(page_url(alpha))
    assert page.status_code == 403
    assert "not released the results yet" in page.content.decode()
    assert_nothing_leaks_to_participants(page.content.decode())
    response = participant_client.get(scores_url(alpha))
    assert response.status_code == 403
    assert response.json() == {"detail": "The organiser has not released the scores yet."}
    team_page = participant_client.get(reverse("teams:team_detail", args=[alpha.pk]))
    assert page_url(alpha) not in team_page.content.decode()


def test_after_the_release_a_team_sees_its_own_runs_scores_only(participant_client, judged):
    _, alpha, pool = judged
    make_release(pool)
    response = participant_client.get(scores_url(alpha))
    assert response.status_code == 200
    body = response.json()
    assert body["team"] == "Alpha"
    assert body["judged_topics"] == ["301", "302"]
    assert {row["run_id"] for row in body["scores"]} == {"alpha1"}
    means = {row["measure"]: row["value"] for row in body["scores"]}
    assert means["map"] == 1.0
    assert means["P_10"] == pytest.approx(0.1)
    assert "rivalrun" not in response.content.decode()
    page = participant_client.get(page_url(alpha)).content.decode()
    assert "alpha1" in page
    assert "1.0000" in page
    assert_nothing_leaks_to_participants(page, released=True)
    team_page = participant_client.get(reverse("teams:team_detail", args=[alpha.pk]))
    assert page_url(alpha) in team_page.content.decode()


def test_a_teams_scores_are_the_organisers_for_its_runs(participant_client, judged):
    _, alpha, pool = judged
    make_release(pool)
    organiser = selectors.pool_scores(pool=pool, per_topic=True)
    response = participant_client.get(scores_url(alpha), {"per_topic": "1"})
    theirs = {(row["query_id"], row["measure"]): row["value"] for row in response.json()["scores"]}
    mine = organiser[organiser["run_id"] == "alpha1"]
    assert theirs == {
        (q, m): v for q, m, v in zip(mine["query_id"], mine["measure"], mine["value"], strict=True)
    }


def test_a_bad_measure_or_one_the_release_did_not_score_is_400(participant_client, judged):
    _, alpha, pool = judged
    make_release(pool)
    response = participant_client.get(scores_url(alpha), {"measure": "nonsense"})
    assert response.status_code == 400
    response = participant_client.get(scores_url(alpha), {"measure": "P.20"})
    assert response.status_code == 400
    assert "has no P_20" in response.json()["detail"]
    chosen = participant_client.get(scores_url(alpha), {"measure": "P.10"}).json()["scores"]
    assert [(row["measure"], row["value"]) for row in chosen] == [("P_10", pytest.approx(0.1))]


def test_withdrawn_scores_are_hidden_again(participant_client, judged):
    _, alpha, pool = judged
    from scoring import services as scoring_services

    scoring_services.release_withdraw(release=make_release(pool), reason="wrong qrels")
    assert participant_client.get(scores_url(alpha)).status_code == 403
    assert participant_client.get(page_url(alpha)).status_code == 403


def test_another_teams_scores_are_a_404(client, judged):
    campaign, alpha, pool = judged
    make_release(pool)
    rivals = campaign.teams.get(name="Rivals")
    client.force_login(alpha.members.get())
    assert client.get(scores_url(rivals)).status_code == 404
    assert client.get(page_url(rivals)).status_code == 404


# --------------------------------------------------------------------------
# The public leaderboard: every run, once released


def leaderboard_url(team) -> str:
    return reverse("teams:team_leaderboard", args=[team.pk])


def test_no_leaderboard_before_the_release(participant_client, judged):
    _, alpha, _ = judged
    page = participant_client.get(leaderboard_url(alpha))
    assert page.status_code == 403
    assert_nothing_leaks_to_participants(page.content.decode())
    assert participant_client.get(f"/api/teams/{alpha.pk}/leaderboard/").status_code == 403


def test_after_the_release_the_leaderboard_ranks_every_run_with_its_team(
    participant_client, judged
):
    _, alpha, pool = judged
    make_release(pool)
    organiser, _ = leaderboard_selectors.pool_leaderboard(
        pool=pool, measure="map", options=LeaderboardOptions()
    )
    body = participant_client.get(f"/api/teams/{alpha.pk}/leaderboard/").json()
    assert [(r["run"], r["mean"]) for r in body["runs"]] == [
        (row.run, row.mean) for row in organiser.runs
    ]
    assert body["teams"] == {"alpha1": "Alpha", "rivalrun": "Rivals"}
    page = participant_client.get(leaderboard_url(alpha)).content.decode()
    assert 'data-run="alpha1" class="ours"' in page
    assert "Rivals" in page
    # The judgments and the pool stay hidden: only means and intervals are shown.
    assert "secret-pool" not in page
    assert "docx-" not in page


def test_another_teams_leaderboard_is_a_404(client, judged):
    campaign, alpha, pool = judged
    make_release(pool)
    rivals = campaign.teams.get(name="Rivals")
    client.force_login(alpha.members.get())
    assert client.get(leaderboard_url(rivals)).status_code == 404
    assert client.get(f"/api/teams/{rivals.pk}/leaderboard/").status_code == 404


def test_the_old_score_addresses_lead_to_the_teams_pages(participant_client, judged):
    _, alpha, _ = judged
    old = participant_client.get(f"/scores/teams/{alpha.pk}/?measure=P_5")
    assert old.status_code == 301
    assert old["Location"] == f"/teams/{alpha.pk}/scores/?measure=P_5"
    board = participant_client.get(f"/scores/teams/{alpha.pk}/leaderboard/")
    assert (board.status_code, board["Location"]) == (301, f"/teams/{alpha.pk}/leaderboard/")


# --------------------------------------------------------------------------
# Releases are frozen


def _change_label(campaign, docno: str, relevance: int) -> None:
    from django.contrib.auth.models import User

    from judging import services as judging_services

    judging_services.judgment_record(
        assessor=User.objects.get(username="alice"),
        topic=campaign.topics.get(topic_id="301"),
        docno=docno,
        relevance=relevance,
        aspects={},
    )


def _table(page: bytes) -> str:
    text = page.decode()
    return text[text.index("<table") : text.index("</table>")]


def test_a_label_changed_after_the_release_leaves_what_the_team_sees_as_released(
    participant_client, judged
):
    campaign, alpha, pool = judged
    make_release(pool)
    board_url = f"/api/teams/{alpha.pk}/leaderboard/"
    before = {
        "scores": participant_client.get(scores_url(alpha), {"per_topic": "1"}).json(),
        "board": participant_client.get(board_url).json(),
        "page": _table(participant_client.get(page_url(alpha)).content),
        "board_page": _table(participant_client.get(leaderboard_url(alpha)).content),
    }
    live_before = selectors.pool_scores(pool=pool)
    _change_label(campaign, "docx-1", 0)  # alpha1's only relevant document on 301
    live_after = selectors.pool_scores(pool=pool)
    assert not live_after.equals(live_before)  # the labels did change
    assert participant_client.get(scores_url(alpha), {"per_topic": "1"}).json() == before["scores"]
    assert participant_client.get(board_url).json() == before["board"]
    assert _table(participant_client.get(page_url(alpha)).content) == before["page"]
    assert _table(participant_client.get(leaderboard_url(alpha)).content) == before["board_page"]
    assert "1.0000" in before["page"]


def test_a_team_sees_the_newest_release_and_may_choose_an_earlier_one(participant_client, judged):
    campaign, alpha, pool = judged
    first = make_release(pool, reason="first")
    _change_label(campaign, "docx-1", 0)
    second = make_release(pool, reason="after adjudication")
    releases = participant_client.get(f"/api/teams/{alpha.pk}/releases/").json()
    assert [(r["id"], r["version"], r["reason"]) for r in releases] == [
        (second.pk, 2, "after adjudication"),
        (first.pk, 1, "first"),
    ]
    assert "pool" not in releases[0]  # a team is not told of pools
    newest = participant_client.get(scores_url(alpha)).json()
    means = {row["measure"]: row["value"] for row in newest["scores"]}
    assert (newest["release"]["id"], means["map"]) == (second.pk, 0.5)
    earlier = participant_client.get(scores_url(alpha), {"release": first.pk}).json()
    assert {row["measure"]: row["value"] for row in earlier["scores"]}["map"] == 1.0
    page = participant_client.get(page_url(alpha), {"release": first.pk}).content.decode()
    assert "1.0000" in page
    team_page = participant_client.get(reverse("teams:team_detail", args=[alpha.pk]))
    assert "after adjudication" in team_page.content.decode()


def test_a_withdrawn_release_or_another_campaigns_is_not_the_teams(participant_client, judged):
    from judging import services as judging_services
    from judging.core.judgment_files import ImportedJudgment
    from scoring import services as scoring_services
    from tests.helpers import make_campaign, make_pool, make_run

    _, alpha, pool = judged
    first = make_release(pool)
    second = make_release(pool)
    scoring_services.release_withdraw(release=second, reason="a wrong label")
    other = make_campaign("trec-other", topics=("1",))
    make_run(other, "elsewhere", {"1": ["d1"]})
    judging_services.judgments_import(
        campaign=other, rows=[ImportedJudgment("alice", "1", "d1", 1, {})]
    )
    foreign = make_release(make_pool(other, {"1": ["d1"]}))
    releases = participant_client.get(f"/api/teams/{alpha.pk}/releases/").json()
    assert [r["id"] for r in releases] == [first.pk]
    for hidden in (second, foreign):
        assert participant_client.get(scores_url(alpha), {"release": hidden.pk}).status_code == 404
        assert participant_client.get(page_url(alpha), {"release": hidden.pk}).status_code == 404
    assert participant_client.get(scores_url(alpha)).json()["release"]["id"] == first.pk
