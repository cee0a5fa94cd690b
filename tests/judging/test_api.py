"""The judging API: assessors' endpoints and the organisers' pool listing."""

from __future__ import annotations

import json

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging import services
from judging.models import Assignment, DocumentNote, Judgment, JudgmentEvent
from tests.helpers import (
    assert_nothing_leaks,
    hide_values_in_pool_entries,
    make_campaign,
    make_documents,
    make_pool,
    make_replanned_assignments,
)

pytestmark = pytest.mark.django_db
RELEVANT = {"relevance": 2, "aspects": {"effectiveness": 3, "credibility": 1}, "seconds": 4.5}


def api_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def assignment(assessor) -> Assignment:
    campaign = make_campaign()
    make_documents(campaign, ["d1", "d2", "d9"])
    pool = make_pool(campaign, {"301": ["d1", "d2"], "302": ["d9"]})
    # Give the pool entries the kind of data an assessor must never see.
    hide_values_in_pool_entries(pool)
    return services.assignments_create(
        pool=pool, topics=campaign.topics.filter(topic_id="301"), assessors=[assessor]
    )[0]


def test_assessor_lists_own_assignments(assessor, assignment):
    [row] = api_for(assessor).get("/api/assignments/").json()
    assert row == {
        "id": assignment.pk,
        "campaign": "trec-x",
        "pool": "pool",
        "topic": {
            "topic_id": "301",
            "title": "Topic 301 title",
            "description": "What about 301?",
            "narrative": "",
        },
        "judged": 0,
        "total": 2,
    }


def test_a_retired_pools_assignments_are_closed_over_the_api(assessor, assignment):
    from pooling import pool_services

    client = api_for(assessor)
    pool_services.pool_retire(pool=assignment.pool)
    assert client.get("/api/assignments/").json() == []
    assert client.get(f"/api/assignments/{assignment.pk}/next/").status_code == 404
    put = client.put(f"/api/assignments/{assignment.pk}/judgments/d1/", RELEVANT, format="json")
    assert put.status_code == 404
    assert not Judgment.objects.exists()


def test_next_document_then_judge_it_idempotently(assessor, assignment):
    api = api_for(assessor)
    url = f"/api/assignments/{assignment.pk}/"
    nxt = api.get(url + "next/").json()
    assert nxt == {
        "position": 1,
        "total": 2,
        "judged": 0,
        "docno": "d1",
        "title": "Title of d1",
        "text": "Text of d1.",
        "url": "",
    }
    for _ in range(3):
        response = api.put(url + "judgments/d1/", RELEVANT, format="json")
        assert response.status_code == 200
    assert response.json()["aspects"] == {"effectiveness": 3, "credibility": 1}
    assert Judgment.objects.count() == 1
    assert JudgmentEvent.objects.count() == 1
    assert Judgment.objects.get().seconds == 4.5
    assert api.get(url + "next/").json()["docno"] == "d2"
    api.put(url + "judgments/d2/", {"relevance": 0}, format="json")
    assert api.get(url + "next/").status_code == 204
    listed = api.get(url + "judgments/").json()
    assert sorted((j["docno"], j["relevance"]) for j in listed) == [("d1", 2), ("d2", 0)]


def test_repeating_the_same_put_leaves_the_active_time_figures_as_they_were(assessor, assignment):
    from judging.status import campaign_status

    api = api_for(assessor)
    url = f"/api/assignments/{assignment.pk}/judgments/d1/"
    body = RELEVANT | {"seconds": 1800}
    assert api.put(url, body, format="json").json()["seconds"] == 1800
    before = campaign_status(assignment.topic.campaign).assessors
    for seconds in (3, 1800, 1800):
        assert api.put(url, body | {"seconds": seconds}, format="json").json()["seconds"] == 1800
    assert Judgment.objects.get().seconds == 1800
    assert list(JudgmentEvent.objects.values_list("seconds", flat=True)) == [1800]
    assert campaign_status(assignment.topic.campaign).assessors == before


def test_rejected_labels_are_400_and_change_nothing(assessor, assignment):
    api = api_for(assessor)
    api.put(f"/api/assignments/{assignment.pk}/judgments/d1/", RELEVANT, format="json")
    response = api.put(
        f"/api/assignments/{assignment.pk}/judgments/d1/",
        {"relevance": 1, "aspects": {"effectiveness": 1}},
        format="json",
    )
    assert response.status_code == 400
    assert response.json() == {"detail": "Credibility is required when Relevance is 1"}
    assert Judgment.objects.get().relevance == 2


def test_document_outside_the_assignment_is_404(assessor, assignment):
    response = api_for(assessor).put(
        f"/api/assignments/{assignment.pk}/judgments/d9/", RELEVANT, format="json"
    )
    assert response.status_code == 404
    assert not Judgment.objects.exists()


def test_other_assessors_get_404_on_an_assignment(assessor2, assignment):
    api = api_for(assessor2)
    assert api.get(f"/api/assignments/{assignment.pk}/next/").status_code == 404
    assert (
        api.put(
            f"/api/assignments/{assignment.pk}/judgments/d1/", RELEVANT, format="json"
        ).status_code
        == 404
    )
    assert api.get("/api/assignments/").json() == []


def test_assessor_responses_carry_nothing_that_could_bias(assessor, assignment, assessor2):
    other = services.assignments_create(
        pool=assignment.pool,
        topics=assignment.pool.campaign.topics.filter(topic_id="302"),
        assessors=[assessor2],
    )[0]
    services.judgment_submit(
        assignment=other, docno="d9", relevance=1, aspects={"effectiveness": 1, "credibility": 1}
    )
    api = api_for(assessor)
    api.put(f"/api/assignments/{assignment.pk}/judgments/d1/", RELEVANT, format="json")
    bodies = [
        api.get("/api/assignments/").content,
        api.get(f"/api/assignments/{assignment.pk}/next/").content,
        api.get(f"/api/assignments/{assignment.pk}/judgments/").content,
    ]
    for body in (b.decode() for b in bodies):
        assert_nothing_leaks(body, "rank", "run")


def test_organisers_list_a_pools_judgments_with_filters(organiser, assessor, assignment):
    services.judgment_submit(
        assignment=assignment,
        docno="d1",
        relevance=2,
        aspects={"effectiveness": 3, "credibility": 1},
    )
    services.judgment_submit(assignment=assignment, docno="d2", relevance=0, aspects={})
    api = api_for(organiser)
    url = f"/api/pools/{assignment.pool.pk}/judgments/"
    assert [(j["assessor"], j["docno"]) for j in api.get(url).json()] == [
        ("alice", "d1"),
        ("alice", "d2"),
    ]
    assert [j["docno"] for j in api.get(url, {"relevance": 0}).json()] == ["d2"]
    assert api.get(url, {"topic": "302"}).json() == []
    assert api.get(url, {"assessor": "bob"}).json() == []


def test_a_relevance_filter_that_is_no_number_is_a_400(organiser, assignment):
    response = api_for(organiser).get(
        f"/api/pools/{assignment.pool.pk}/judgments/", {"relevance": "abc"}
    )
    assert response.status_code == 400
    assert response.json() == {"relevance": ["not a valid integer: 'abc'"]}


def test_pool_judgments_leave_out_documents_outside_the_pool(organiser, assessor, assignment):
    from pooling.models import Topic

    services.judgment_record(
        assessor=assessor,
        topic=Topic.objects.get(topic_id="301"),
        docno="elsewhere",
        relevance=0,
        aspects={},
    )
    assert api_for(organiser).get(f"/api/pools/{assignment.pool.pk}/judgments/").json() == []


def test_assessors_cannot_list_pool_judgments(assessor, assignment):
    assert api_for(assessor).get(f"/api/pools/{assignment.pool.pk}/judgments/").status_code == 403


def test_judgment_endpoints_are_in_the_schema(organiser_client):
    schema = json.loads(
        organiser_client.get("/api/schema/", headers={"Accept": "application/json"}).content
    )
    assert "/api/assignments/{assignment_id}/judgments/{docno}/" in schema["paths"]
    assert "/api/pools/{pool_id}/judgments/" in schema["paths"]
    assert "/api/assignments/{assignment_id}/notes/{docno}/" in schema["paths"]


def test_a_docno_with_a_slash_is_judged_over_the_api(assessor):
    campaign = make_campaign("dois", topics=("1",))
    pool = make_pool(campaign, {"1": ["10.1371/journal.pone.0001"]})
    [assignment] = services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[assessor]
    )
    response = api_for(assessor).put(
        f"/api/assignments/{assignment.pk}/judgments/10.1371/journal.pone.0001/",
        RELEVANT,
        format="json",
    )
    assert response.status_code == 200
    assert Judgment.objects.get().docno == "10.1371/journal.pone.0001"


def test_an_assessor_notes_and_sets_aside_documents_over_the_api(assessor, assignment):
    api = api_for(assessor)
    url = f"/api/assignments/{assignment.pk}/"
    note = api.put(url + "notes/d1/", {"text": "  mentions 302 too "}, format="json")
    assert note.status_code == 200
    assert (note.json()["docno"], note.json()["text"], note.json()["cannot_judge"]) == (
        "d1",
        "mentions 302 too",
        "",
    )
    # A note is not a judgment: d1 is still next.
    assert api.get(url + "next/").json()["docno"] == "d1"
    aside = api.put(url + "notes/d1/", {"cannot_judge": "unreadable"}, format="json")
    assert aside.status_code == 200
    assert aside.json()["cannot_judge"] == "unreadable"
    assert api.get(url + "next/").json()["docno"] == "d2"
    assert not Judgment.objects.exists()
    listed = api.get(url + "notes/").json()
    assert [(n["docno"], n["cannot_judge"]) for n in listed] == [("d1", "unreadable")]
    # A blank note where there is none stores nothing.
    assert api.put(url + "notes/d2/", {"text": ""}, format="json").status_code == 204
    assert DocumentNote.objects.count() == 1


def test_bad_notes_are_4xx_and_store_nothing(assessor, assessor2, assignment):
    api = api_for(assessor)
    url = f"/api/assignments/{assignment.pk}/notes/"
    unknown = api.put(url + "d1/", {"cannot_judge": "boring"}, format="json")
    assert unknown.status_code == 400
    assert "cannot_judge" in unknown.json()
    other = api.put(url + "d1/", {"cannot_judge": "other"}, format="json")
    assert other.status_code == 400
    assert other.json() == {"detail": "say in a few words why the document cannot be judged"}
    too_long = api.put(url + "d1/", {"text": "x" * 2001}, format="json")
    assert too_long.status_code == 400
    assert api.put(url + "d9/", {"text": "not mine"}, format="json").status_code == 404
    api.put(f"/api/assignments/{assignment.pk}/judgments/d2/", {"relevance": 0}, format="json")
    judged = api.put(url + "d2/", {"cannot_judge": "empty"}, format="json")
    assert judged.status_code == 400
    assert "revise or undo" in judged.json()["detail"]
    stranger = api_for(assessor2)
    assert stranger.put(url + "d1/", {"text": "hi"}, format="json").status_code == 404
    assert stranger.get(url).status_code == 404
    assert not DocumentNote.objects.exists()


def test_a_replan_leaves_the_assessor_her_judgments_and_notes_over_the_api(assessor):
    replanned = make_replanned_assignments(assessor)
    api = api_for(assessor)
    listed = {row["topic"]["topic_id"]: row for row in api.get("/api/assignments/").json()}
    for topic_id, mine in replanned.items():
        assignment = mine["assignment"]
        queue = set(assignment.queue().values_list("docno", flat=True))
        row = listed[topic_id]
        assert (row["judged"], row["total"]) == (len(mine["judged"]), len(queue | mine["judged"]))
        judgments = api.get(f"/api/assignments/{assignment.pk}/judgments/").json()
        assert {j["docno"] for j in judgments} == mine["judged"]
        notes = {n["docno"]: n for n in api.get(f"/api/assignments/{assignment.pk}/notes/").json()}
        assert {d: n["text"] for d, n in notes.items() if n["text"]} == {
            docno: f"read {docno}" for docno in mine["judged"]
        }
        assert notes[mine["set_aside"]]["cannot_judge"] == "empty"

    assignment = replanned["2"]["assignment"]
    out = sorted(replanned["2"]["out"])[0]
    revised = api.put(
        f"/api/assignments/{assignment.pk}/judgments/{out}/", {"relevance": 0}, format="json"
    )
    assert (revised.status_code, revised.json()["relevance"]) == (200, 0)
    noted = api.put(
        f"/api/assignments/{assignment.pk}/notes/{out}/",
        {"text": "on second thought"},
        format="json",
    )
    assert (noted.status_code, noted.json()["text"]) == (200, "on second thought")
    refused = api.put(
        f"/api/assignments/{assignment.pk}/notes/{out}/", {"cannot_judge": "empty"}, format="json"
    )
    assert refused.status_code == 400
    assert "you judged this document" in refused.json()["detail"]
