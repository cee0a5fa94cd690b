"""A team submits generated answers: checked as the organiser's, within the deadline
and the team's run limit, nothing stored when refused."""

from __future__ import annotations

import html
import io
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from pooling.models import AnswerRun
from tests.helpers import answer_file, answer_line, make_answer_campaign, make_team

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(participant):
    campaign = make_answer_campaign(runs=())
    return make_team(campaign, "Team A", [participant])


def _post(client, team, data: bytes, name: str = "answers.jsonl"):
    upload = io.BytesIO(data)
    upload.name = name
    url = reverse("teams:team_answers_upload", args=[team.pk])
    return client.post(url, {"file": upload})


def test_a_team_submits_answers_and_sees_its_runs(participant_client, team):
    response = _post(participant_client, team, answer_file(("t-1", "t-2")))
    assert response.status_code == 302
    assert list(AnswerRun.objects.values_list("tag", "team")) == [
        ("t-1", team.pk),
        ("t-2", team.pk),
    ]
    page = participant_client.get(reverse("teams:team_detail", args=[team.pk])).content.decode()
    assert "Submit generated answers" in page
    assert "t-1" in page


def test_a_bad_file_is_a_400_with_its_line_and_nothing_stored(participant_client, team):
    data = (
        answer_line("t", "1", [("ok", [0])]) + "\n" + answer_line("t", "404", [("x", [0])])
    ).encode()
    response = _post(participant_client, team, data, "bad.jsonl")
    assert response.status_code == 400
    assert "bad.jsonl:2: topic '404' is not a topic" in html.unescape(response.content.decode())
    assert not AnswerRun.objects.exists()


def test_after_the_deadline_or_past_the_limit_nothing_is_stored(participant_client, team):
    campaign = team.campaign
    campaign.max_runs_per_team = 1
    campaign.save()
    response = _post(participant_client, team, answer_file(("t-1", "t-2")))
    assert response.status_code == 400
    assert "more than the 1" in html.unescape(response.content.decode())
    campaign.max_runs_per_team = None
    campaign.submission_deadline = timezone.now() - timedelta(days=1)
    campaign.save()
    response = _post(participant_client, team, answer_file(("t-1",)))
    assert response.status_code == 400
    assert "deadline" in response.content.decode()
    assert not AnswerRun.objects.exists()


def test_a_late_run_accepted_by_the_organiser_is_used_once(participant_client, team):
    from participation import services

    campaign = team.campaign
    campaign.submission_deadline = timezone.now() - timedelta(days=1)
    campaign.save()
    services.team_late_runs_accept(team=team, count=1)
    assert _post(participant_client, team, answer_file(("t-1", "t-2"))).status_code == 400
    assert _post(participant_client, team, answer_file(("t-1",))).status_code == 302
    team.refresh_from_db()
    assert team.late_runs_accepted == 0


def test_a_team_sees_only_its_own_runs_in_released_answer_scores(
    participant_client, team, organiser, assessor
):
    from django.test import Client

    from judging import answer_services as judging_services
    from pooling import answer_services
    from pooling.models import Answer
    from scoring.models import AnswerScoresRelease
    from tests.helpers import make_nuggets

    campaign = team.campaign
    answer_services.answer_runs_import(
        campaign=campaign, data=answer_file(("t-1",)), name="t.jsonl", team=team
    )
    answer_services.answer_runs_import(
        campaign=campaign, data=answer_file(("other-run",)), name="o.jsonl"
    )
    topic = campaign.topics.get(topic_id="1")
    make_nuggets(topic)
    assignment = judging_services.answer_assignment_create(topic=topic, assessor=assessor)
    for answer in Answer.objects.filter(topic=topic):
        judging_services.answer_judgment_record(
            assignment=assignment, answer=answer, labels=["support", "partial_support"]
        )
    url = reverse("teams:team_answer_scores", args=[team.pk])
    assert participant_client.get(url).status_code == 403
    organiser_client = Client()
    organiser_client.force_login(organiser)
    release_url = reverse("scoring:answer_scores_release", args=[campaign.slug])
    assert organiser_client.post(release_url, {"reason": "first"}).status_code == 302
    release = AnswerScoresRelease.objects.get()
    assert release.version == 1
    assert [r["run"] for r in release.nuggets["runs"]] == ["other-run", "t-1"]
    page = participant_client.get(url)
    assert page.status_code == 200
    assert [row["run"] for row in page.context["runs"]] == ["t-1"]
    assert page.context["runs"][0]["values"][0] == 0.75
    assert "other-run" not in page.content.decode()
