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
