"""Organisers' judging API: assignments, overlap, judgments from a file, agreement,
adjudication and policy, with the organiser pages' checks."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging import services
from judging.models import Adjudication, Assignment, Judgment, PoolPolicy
from pooling.models import Pool
from tests.helpers import make_campaign, make_pool, make_pool_with_outsiders, make_user
from workbench.core.label_schema import SCHEMA_PRESETS

pytestmark = pytest.mark.django_db
GRADED = SCHEMA_PRESETS["graded-0-2"].schema()


@pytest.fixture
def api(organiser) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=organiser).key}")
    return client


@pytest.fixture
def pool(assessor, assessor2):
    campaign = make_campaign(topics=("301", "302"), label_schema=GRADED)
    return make_pool(campaign, {"301": ["d1", "d2", "d3"], "302": ["d4", "d5"]})


def judge(assignment: Assignment, docno: str, relevance: int) -> None:
    services.judgment_submit(
        assignment=assignment, docno=docno, relevance=relevance, aspects={}, seconds=1
    )


def test_assign_list_and_delete(api, pool, assessor, assessor2):
    response = api.post(
        f"/api/pools/{pool.pk}/assignments/",
        {"topics": ["302", "301"], "assessors": ["bob", "alice"]},
        format="json",
    )
    assert response.status_code == 201, response.json()
    # Dealt as the page deals them: topics by position, assessors by name.
    assert [(a["topic"], a["assessor"], a["total"]) for a in response.json()] == [
        ("301", "alice", 3),
        ("302", "bob", 2),
    ]
    listed = api.get(f"/api/pools/{pool.pk}/assignments/", {"assessor": "bob"}).json()
    assert [(a["topic"], a["judged"]) for a in listed["results"]] == [("302", 0)]
    response = api.delete(f"/api/pools/{pool.pk}/assignments/{listed['results'][0]['id']}/")
    assert response.status_code == 204
    assert list(Assignment.objects.values_list("assessor__username", flat=True)) == ["alice"]


def test_assigning_unknown_topics_or_accounts_is_a_400(api, pool):
    response = api.post(
        f"/api/pools/{pool.pk}/assignments/",
        {"topics": ["301", "999"], "assessors": ["alice", "zed"]},
        format="json",
    )
    assert response.status_code == 400
    assert response.json() == {
        "topics": ["no such topic: 999"],
        "assessors": ["zed: no such account"],
    }
    assert not Assignment.objects.exists()


def test_a_second_primary_assessor_is_refused(api, pool, assessor, assessor2):
    services.assignments_create(
        pool=pool, topics=pool.campaign.topics.filter(topic_id="301"), assessors=[assessor]
    )
    response = api.post(
        f"/api/pools/{pool.pk}/assignments/",
        {"topics": ["301"], "assessors": ["bob"]},
        format="json",
    )
    assert response.status_code == 400
    assert response.json() == {"detail": "topic 301 already has primary assessor alice"}


def test_overlap_preview_and_assign(api, pool, assessor, assessor2):
    topics = pool.campaign.topics.all()
    services.assignments_create(pool=pool, topics=topics, assessors=[assessor, assessor2])
    preview = api.get(f"/api/pools/{pool.pk}/overlap/", {"k": 2, "topics": "301"})
    assert preview.status_code == 200, preview.json()
    assert preview.json()["cost"] == {
        "total": 3,
        "per_assessor": {"alice": 0, "bob": 3},
        "per_topic": {"301": 3},
    }
    assert not Assignment.objects.filter(kind=Assignment.OVERLAP).exists()
    response = api.post(
        f"/api/pools/{pool.pk}/overlap/", {"k": 2, "topics": ["301"]}, format="json"
    )
    assert response.status_code == 201, response.json()
    overlap = Assignment.objects.get(kind=Assignment.OVERLAP)
    assert (overlap.assessor.username, overlap.topic.topic_id) == ("bob", "301")


def test_overlap_past_the_budget_needs_confirming(api, pool, assessor, assessor2):
    pool.campaign.judgment_budget = 1
    pool.campaign.save()
    topics = pool.campaign.topics.all()
    services.assignments_create(pool=pool, topics=topics, assessors=[assessor, assessor2])
    response = api.post(f"/api/pools/{pool.pk}/overlap/", {"k": 2}, format="json")
    assert response.status_code == 409
    assert "Confirm to go past the budget" in response.json()["detail"]
    assert not Assignment.objects.filter(kind=Assignment.OVERLAP).exists()


def test_overlap_with_an_unknown_assessor_is_a_400(api, pool):
    response = api.get(f"/api/pools/{pool.pk}/overlap/", {"k": 2, "assessors": "zed"})
    assert response.status_code == 400
    assert response.json() == {"assessors": ["zed: no such account"]}


def test_overlap_goes_to_the_pools_assessors_unless_named_and_never_to_accounts_that_cannot_log_in(
    api, tmp_path
):
    pool = make_pool_with_outsiders(tmp_path)
    preview = api.get(f"/api/pools/{pool.pk}/overlap/", {"k": 2, "fraction": 0.1, "seed": 0})
    assert set(preview.json()["cost"]["per_assessor"]) == {"ann", "ben"}
    refused = api.get(f"/api/pools/{pool.pk}/overlap/", {"k": 2, "assessors": ["dora", "nist"]})
    assert refused.status_code == 400
    assert refused.json() == {
        "assessors": ["nist: the account cannot log in (no password: set one in the admin first)"]
    }
    named = api.get(f"/api/pools/{pool.pk}/overlap/", {"k": 2, "assessors": ["ann", "dora"]})
    assert set(named.json()["cost"]["per_assessor"]) <= {"ann", "dora"}
    again = make_pool(pool.campaign, {"1": ["d1"]}, name="again")
    response = api.post(
        f"/api/pools/{again.pk}/assignments/",
        {"topics": ["1"], "assessors": ["nist"]},
        format="json",
    )
    assert response.status_code == 400
    assert "nist: the account cannot log in" in response.json()["assessors"][0]
    assert not Assignment.objects.filter(pool=again).exists()


def test_import_judgments_from_a_file(api, pool, assessor):
    data = b"assessor\ttopic\tdocno\trel\nalice\t301\td1\t1\ncarol\t301\td2\t0\n"
    response = api.post(
        f"/api/campaigns/{pool.campaign.slug}/judgments/",
        {"file": SimpleUploadedFile("j.tsv", data), "create_assessors": "true"},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["created"], body["new_assessors"], body["pool"]) == (2, ["carol"], None)
    assert Judgment.objects.count() == 2


def test_a_bad_judgments_file_is_rejected_by_line(api, pool, assessor):
    data = b"alice\t301\td1\t1\nalice\t999\td2\t0\nzed\t301\td3\t0\n"
    response = api.post(
        f"/api/campaigns/{pool.campaign.slug}/judgments/",
        {"file": SimpleUploadedFile("j.tsv", data)},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json() == {
        "detail": "Rejected: nothing was stored.",
        "errors": [
            {"file": "j.tsv", "line": 2, "reason": "topic '999' is not a topic of this campaign"},
            {"file": "j.tsv", "line": 3, "reason": "no assessor named 'zed'"},
        ],
        "total": 2,
    }
    assert not Judgment.objects.exists()


def test_import_judgments_and_make_a_pool(api, assessor):
    campaign = make_campaign(topics=("301",), label_schema=GRADED)
    response = api.post(
        f"/api/campaigns/{campaign.slug}/judgments/",
        {"file": SimpleUploadedFile("j.tsv", b"alice\t301\td1\t1\n"), "make_pool": "nist"},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    assert Pool.objects.get(pk=response.json()["pool"]).name == "nist"


def disagreement(pool, assessor, assessor2) -> None:
    topics = pool.campaign.topics.filter(topic_id="301")
    [primary] = services.assignments_create(pool=pool, topics=topics, assessors=[assessor])
    second = Assignment.objects.create(
        pool=pool, topic=primary.topic, assessor=assessor2, kind=Assignment.OVERLAP
    )
    entry = pool.entries.get(topic=primary.topic, docno="d1")
    second.items.create(entry=entry, position=1)
    judge(primary, "d1", 2)
    judge(second, "d1", 0)


def test_agreement_and_the_adjudication_queue(api, pool, assessor, assessor2):
    disagreement(pool, assessor, assessor2)
    body = api.get(f"/api/pools/{pool.pk}/agreement/").json()
    assert body["aspect"] == "relevance"
    assert body["labels"] == 2
    assert {(p["assessor_a"], p["assessor_b"]) for p in body["campaign_pairs"]} == {
        ("alice", "bob")
    }
    matrix = api.get(f"/api/pools/{pool.pk}/agreement/", {"a": "alice", "b": "bob"}).json()
    assert matrix["confusion"]["a"] == "alice"
    assert api.get(f"/api/pools/{pool.pk}/agreement/", {"aspect": "zz"}).status_code == 400

    queue = api.get(f"/api/pools/{pool.pk}/adjudication/").json()
    assert queue["count"] == 1
    [item] = queue["results"]
    assert (item["query_id"], item["doc_id"], item["relevance_values"]) == ("301", "d1", [2, 0])

    response = api.post(
        f"/api/pools/{pool.pk}/adjudication/",
        {"topic": "301", "docno": "d1", "relevance": 1, "reason": "partly"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    assert (response.json()["relevance"], response.json()["decided_by"]) == (1, "olivia")
    assert Adjudication.objects.get().reason == "partly"
    assert api.get(f"/api/pools/{pool.pk}/adjudication/").json()["count"] == 0


def test_an_adjudication_outside_the_schema_is_a_400(api, pool):
    response = api.post(
        f"/api/pools/{pool.pk}/adjudication/",
        {"topic": "301", "docno": "d1", "relevance": 99},
        format="json",
    )
    assert response.status_code == 400
    assert not Adjudication.objects.exists()


def test_read_and_set_the_policy(api, pool):
    assert api.get(f"/api/pools/{pool.pk}/policy/").json() == {
        "steps": ["adjudicated", "primary", "majority", "maximum"],
        "disagreement_mode": "relevance_line",
        "queue_order": "default",
        "post_edit": False,
        "overlap_spec": None,
    }
    response = api.put(
        f"/api/pools/{pool.pk}/policy/",
        {"steps": ["adjudicated", "maximum"], "disagreement_mode": "any"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    policy = PoolPolicy.objects.get()
    assert (policy.label_policy["steps"], policy.disagreement_mode) == (
        ["adjudicated", "maximum"],
        "any",
    )
    bad = api.put(
        f"/api/pools/{pool.pk}/policy/",
        {"steps": ["whim"], "disagreement_mode": "any"},
        format="json",
    )
    assert bad.status_code == 400
    assert bad.json()["detail"].startswith("Policy not changed:")


def test_an_assessor_may_not_import_judgments(pool, assessor):
    client = APIClient()
    client.force_authenticate(make_user("eve"))
    response = client.post(
        f"/api/campaigns/{pool.campaign.slug}/judgments/",
        {"file": SimpleUploadedFile("j.tsv", b"eve\t301\td1\t1\n")},
        format="multipart",
    )
    assert response.status_code == 403


def test_an_assessor_id_past_bigint_is_an_invalid_choice_on_the_overlap_page(
    organiser_client, pool
):
    response = organiser_client.get(
        f"/judge/pools/{pool.pk}/overlap/", {"k": "2", "assessors": str(2**64)}
    )
    assert response.status_code == 200
    assert "is not one of the available choices" in response.content.decode()
