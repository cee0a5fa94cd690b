"""The API of a generated-answers campaign: answer runs and nuggets, with the pages'
checks (400 with file:line, nothing stored)."""

from __future__ import annotations

import io
import json

import pytest

from judging.models import NuggetList
from pooling.models import AnswerRun, Run
from tests.helpers import answer_file, answer_line, make_answer_campaign, make_nuggets

pytestmark = pytest.mark.django_db


def _file(data: bytes, name: str) -> io.BytesIO:
    upload = io.BytesIO(data)
    upload.name = name
    return upload


def test_answer_runs_are_uploaded_and_listed(organiser_client):
    campaign = make_answer_campaign(runs=())
    url = f"/api/campaigns/{campaign.slug}/answer-runs/"
    response = organiser_client.post(
        url, {"file": _file(answer_file(("x", "y")), "a.jsonl"), "pool_cited": "true"}
    )
    assert response.status_code == 201
    assert [r["tag"] for r in response.json()["runs"]] == ["x", "y"]
    assert sorted(Run.objects.values_list("tag", flat=True)) == ["x", "y"]
    listed = organiser_client.get(url).json()
    assert [(r["tag"], r["n_answers"]) for r in listed] == [("x", 2), ("y", 2)]


def test_a_bad_answer_file_is_a_400_with_its_problems_in_json(organiser_client):
    campaign = make_answer_campaign(runs=())
    data = answer_line("x", "1", [("A.", [5])]).encode()
    response = organiser_client.post(
        f"/api/campaigns/{campaign.slug}/answer-runs/", {"file": _file(data, "a.jsonl")}
    )
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["file"], error["line"]) == ("a.jsonl", 1)
    assert "outside" in error["reason"]
    assert not AnswerRun.objects.exists()


def test_nuggets_are_imported_and_read_as_nuggetizer_records(organiser_client):
    campaign = make_answer_campaign()
    make_nuggets(campaign.topics.get(topic_id="1"))
    url = f"/api/campaigns/{campaign.slug}/nuggets/"
    record = {"qid": "1", "query": "q", "nuggets": [{"text": "New", "importance": "okay"}]}
    response = organiser_client.post(url, {"file": _file(json.dumps(record).encode(), "n.jsonl")})
    assert response.status_code == 201
    assert response.json()["versions"] == {"1": 2}
    assert organiser_client.get(url).json() == [
        {
            "qid": "1",
            "query": "Topic 1 title",
            "version": 2,
            "nuggets": [{"text": "New", "importance": "okay"}],
        }
    ]
    bad = {"qid": "1", "query": "q", "nuggets": [{"text": "x", "importance": "high"}]}
    response = organiser_client.post(url, {"file": _file(json.dumps(bad).encode(), "n.jsonl")})
    assert response.status_code == 400
    assert NuggetList.objects.count() == 2


def test_assessors_cannot_use_the_answer_api(assessor_client):
    campaign = make_answer_campaign()
    assert assessor_client.get(f"/api/campaigns/{campaign.slug}/nuggets/").status_code == 403


def test_an_assessor_judges_answers_over_the_api(assessor_client, assessor, assessor2):
    from judging import answer_services
    from judging.models import AnswerJudgment

    campaign = make_answer_campaign()
    topic = campaign.topics.get(topic_id="1")
    nuggets = make_nuggets(topic)
    assignment = answer_services.answer_assignment_create(topic=topic, assessor=assessor)
    listed = assessor_client.get("/api/answer-assignments/").json()
    assert [(a["id"], a["topic_id"], a["task"]) for a in listed] == [
        (assignment.pk, "1", "nuggets")
    ]
    nxt = assessor_client.get(f"/api/answer-assignments/{assignment.pk}/next/").json()
    assert (nxt["position"], nxt["total"], nxt["nugget_list"]) == (1, 3, nuggets.pk)
    assert "run" not in json.dumps({k: v for k, v in nxt.items() if k != "sentences"})
    assert nxt["sentences"][1]["citations"] == [
        {"reference": 1, "segment": "seg-1"},
        {"reference": 2, "segment": "seg-2"},
    ]
    url = f"/api/answer-assignments/{assignment.pk}/answers/{nxt['answer']}/"
    body = {"labels": ["support", "not_support"], "nugget_list": nuggets.pk, "seconds": 3}
    for _ in range(2):
        response = assessor_client.put(url, body, content_type="application/json")
        assert response.status_code == 200
    assert AnswerJudgment.objects.get().seconds == 6
    bad = assessor_client.put(
        url, {**body, "labels": ["maybe", "support"]}, content_type="application/json"
    )
    assert bad.status_code == 400
    assert "'maybe' is not one of" in bad.json()["detail"]
    assert AnswerJudgment.objects.get().labels == ["support", "not_support"]
    nxt = assessor_client.get(f"/api/answer-assignments/{assignment.pk}/next/").json()
    assert (nxt["position"], nxt["judged"]) == (2, 1)


def test_another_assessors_answer_assignment_is_a_404(client, assessor, assessor2):
    from judging import answer_services

    campaign = make_answer_campaign()
    assignment = answer_services.answer_assignment_create(
        topic=campaign.topics.get(topic_id="1"), assessor=assessor
    )
    client.force_login(assessor2)
    assert client.get(f"/api/answer-assignments/{assignment.pk}/next/").status_code == 404
