"""The campaign API: create and change campaigns, upload and read topics, answers,
documents, and delete or replace runs, with the pages' checks and errors."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging import services as judging_services
from judging.models import Adjudication, Judgment
from pooling import pool_services, services
from pooling.core.spec import PoolSpec
from pooling.models import Campaign, Document, Run
from tests.helpers import make_campaign, make_pool, make_run, run_text
from workbench.core.label_schema import MAX_GRADE, SCHEMA_PRESETS

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(organiser) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=organiser).key}")
    return client


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data)


# --------------------------------------------------------------------------
# Campaigns


def test_create_a_campaign_with_a_preset_schema(api, organiser):
    response = api.post(
        "/api/campaigns/",
        {"name": "Trec X", "slug": "trec-x", "label_schema": "binary", "judgment_budget": 500},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["slug"] == "trec-x"
    assert body["label_schema"] == SCHEMA_PRESETS["binary"].schema()
    assert body["budget"] == {
        "budget": 500,
        "judgments": 0,
        "adjudications": 0,
        "spent": 0,
        "remaining": 500,
    }
    assert (body["topics"], body["runs"], body["schema_lock"]) == (0, 0, "")
    assert Campaign.objects.get().created_by == organiser


def test_a_custom_schema_is_checked_as_the_page_checks_it(api):
    response = api.post(
        "/api/campaigns/",
        {"name": "X", "slug": "x", "label_schema": {"relevance": "nonsense"}},
        format="json",
    )
    assert response.status_code == 400
    assert "custom_schema" in response.json()
    assert not Campaign.objects.exists()


def _schema_with_top_grade(value: int) -> dict:
    schema = SCHEMA_PRESETS["binary"].schema()
    schema["relevance"]["grades"][1]["value"] = value
    return schema


@pytest.mark.parametrize("value", [MAX_GRADE + 1, 2**31, 10**30])
def test_a_schema_with_a_grade_the_database_cannot_store_is_refused(api, value):
    response = api.post(
        "/api/campaigns/",
        {"name": "X", "slug": "x", "label_schema": _schema_with_top_grade(value)},
        format="json",
    )
    assert response.status_code == 400
    [reason] = response.json()["custom_schema"]
    assert f"at most {MAX_GRADE}" in reason
    assert not Campaign.objects.exists()


def test_the_largest_grade_a_schema_may_declare_is_stored_and_read_back(api, assessor):
    from django.db import connection

    # The bound is the judgment table's: smallint on PostgreSQL, checked here on each database.
    assert connection.ops.integer_field_range("SmallIntegerField")[1] >= MAX_GRADE
    created = api.post(
        "/api/campaigns/",
        {"name": "X", "slug": "x", "label_schema": _schema_with_top_grade(MAX_GRADE)},
        format="json",
    )
    assert created.status_code == 201, created.json()
    campaign = Campaign.objects.get()
    services.topics_import(campaign=campaign, data=b"301\tTitle\n", name="topics.tsv")
    pool = make_pool(campaign, {"301": ["d1"]})
    [assignment] = judging_services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[assessor]
    )
    judging_services.judgment_submit(
        assignment=assignment, docno="d1", relevance=MAX_GRADE, aspects={}, seconds=1
    )
    judging_services.adjudication_record(
        pool=pool,
        topic=campaign.topics.get(),
        docno="d1",
        relevance=MAX_GRADE,
        aspects={},
        reason="",
        decided_by=assessor,
    )
    assert Judgment.objects.get().relevance == MAX_GRADE
    assert Adjudication.objects.get().relevance == MAX_GRADE


def test_a_campaign_name_holding_a_control_character_is_refused(api):
    response = api.post("/api/campaigns/", {"name": "TREC\x1b[31m", "slug": "x"}, format="json")
    assert response.status_code == 400
    [reason] = response.json()["name"]
    assert reason.startswith("campaign name 'TREC\\x1b[31m' holds U+001B (ESC)")
    assert not Campaign.objects.exists()
    make_campaign("trec-x")
    renamed = api.patch("/api/campaigns/trec-x/", {"name": "\u202eX"}, format="json")
    assert renamed.status_code == 400
    assert Campaign.objects.get().name == "TREC-X"


def test_a_taken_slug_is_refused_with_the_forms_words(api):
    make_campaign("trec-x")
    response = api.post("/api/campaigns/", {"name": "Again", "slug": "trec-x"}, format="json")
    assert response.status_code == 400
    assert response.json() == {"slug": ["Campaign with this Slug already exists."]}


def test_campaign_detail_has_the_label_schema_and_counts(api):
    campaign = make_campaign()
    make_run(campaign, "bm25", {"301": ["d1"]})
    body = api.get("/api/campaigns/trec-x/").json()
    assert body["label_schema"] == campaign.label_schema
    assert (body["topics"], body["runs"], body["documents"], body["pools"]) == (3, 1, 0, 0)
    assert "1 run" in body["task_kind_lock"]


def test_patch_changes_only_what_it_names(api):
    make_campaign(description="Old words")
    response = api.patch("/api/campaigns/trec-x/", {"judgment_budget": 40}, format="json")
    assert response.status_code == 200, response.json()
    campaign = Campaign.objects.get()
    assert (campaign.judgment_budget, campaign.description, campaign.name) == (
        40,
        "Old words",
        "TREC-X",
    )


def test_the_schema_cannot_change_once_judged(api, assessor):
    campaign = make_campaign()
    pool = make_pool(campaign, {"301": ["d1"]})
    [assignment] = judging_services.assignments_create(
        pool=pool, topics=campaign.topics.filter(topic_id="301"), assessors=[assessor]
    )
    judging_services.judgment_submit(
        assignment=assignment, docno="d1", relevance=0, aspects={}, seconds=1
    )
    response = api.patch("/api/campaigns/trec-x/", {"label_schema": "binary"}, format="json")
    assert response.status_code == 400
    [reason] = response.json()["label_schema"]
    assert "can no longer change" in reason


def test_campaign_list_orders_by_name(api):
    make_campaign("b-camp", name="B")
    make_campaign("a-camp", name="A")
    names = [c["name"] for c in api.get("/api/campaigns/", {"ordering": "name"}).json()]
    assert names == ["A", "B"]


# --------------------------------------------------------------------------
# Topics, answers, documents


def test_upload_and_list_topics(api):
    make_campaign(topics=())
    data = b"301\tFirst\tAbout one\n302\tSecond\tAbout two\n"
    response = api.post(
        "/api/campaigns/trec-x/topics/", {"file": upload("t.tsv", data)}, format="multipart"
    )
    assert response.status_code == 201, response.json()
    assert response.json() == {
        "detail": "Topics from t.tsv: 2 created, 0 updated.",
        "created": 2,
        "updated": 0,
    }
    listed = api.get("/api/campaigns/trec-x/topics/").json()
    assert listed["count"] == 2
    assert [t["topic_id"] for t in listed["results"]] == ["301", "302"]
    one = api.get("/api/campaigns/trec-x/topics/302/").json()
    assert (one["title"], one["description"]) == ("Second", "About two")


def test_a_bad_topic_file_answers_file_line_and_reason(api):
    make_campaign(topics=())
    data = b"301\tFirst\n301\tAgain\n"
    response = api.post(
        "/api/campaigns/trec-x/topics/",
        {"file": upload("t.tsv", data), "format": "tsv"},
        format="multipart",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == "Rejected: nothing was stored."
    [problem] = body["errors"]
    assert (problem["file"], problem["line"]) == ("t.tsv", 2)
    assert "301" in problem["reason"]
    assert not Campaign.objects.get().topics.exists()


def test_an_unknown_topic_format_is_the_forms_error(api):
    make_campaign(topics=())
    response = api.post(
        "/api/campaigns/trec-x/topics/",
        {"file": upload("t.tsv", b"1\tx\n"), "format": "pdf"},
        format="multipart",
    )
    assert response.status_code == 400
    assert "format" in response.json()


def test_topic_paging(api):
    make_campaign(topics=[str(n) for n in range(1, 8)])
    page = api.get("/api/campaigns/trec-x/topics/", {"limit": 3, "offset": 3}).json()
    assert [t["topic_id"] for t in page["results"]] == ["4", "5", "6"]
    assert page["count"] == 7
    assert "offset=6" in page["next"]


def test_upload_answers(api):
    make_campaign()
    response = api.post(
        "/api/campaigns/trec-x/answers/",
        {"file": upload("answers.txt", b"301 1\n302 -1\n")},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    assert (response.json()["set"], response.json()["changed"]) == (2, 2)


def test_answers_for_unknown_topics_are_rejected_by_line(api):
    make_campaign()
    response = api.post(
        "/api/campaigns/trec-x/answers/",
        {"file": upload("answers.txt", b"301 1\n999 0\n")},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["line"] == 2


def test_upload_list_and_read_documents(api):
    make_campaign()
    data = b"d2\tTitle two\tText two.\nd1\tTitle one\tText one.\n"
    response = api.post(
        "/api/campaigns/trec-x/documents/", {"file": upload("docs.tsv", data)}, format="multipart"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["created"] == 2
    listed = api.get("/api/campaigns/trec-x/documents/").json()["results"]
    assert listed == [
        {"docno": "d1", "title": "Title one", "url": ""},
        {"docno": "d2", "title": "Title two", "url": ""},
    ]
    assert api.get("/api/campaigns/trec-x/documents/d2/").json()["text"] == "Text two."
    assert api.get("/api/campaigns/trec-x/documents/d9/").status_code == 404


def test_an_oversized_document_file_is_a_413(api, settings):
    settings.WORKBENCH_MAX_UPLOAD_BYTES = 5
    make_campaign()
    response = api.post(
        "/api/campaigns/trec-x/documents/",
        {"file": upload("docs.tsv", b"d1\tTitle\tText\n")},
        format="multipart",
    )
    assert response.status_code == 413
    assert not Document.objects.exists()


# --------------------------------------------------------------------------
# Runs


def test_read_and_delete_a_run_before_pooling(api):
    campaign = make_campaign()
    run = make_run(campaign, "bm25", {"301": ["d1"]})
    assert api.get(f"/api/campaigns/trec-x/runs/{run.pk}/").json()["tag"] == "bm25"
    response = api.delete(f"/api/campaigns/trec-x/runs/{run.pk}/")
    assert response.status_code == 204
    assert not Run.objects.exists()


def test_a_pooled_run_is_not_deleted(api):
    campaign = make_campaign()
    run = make_run(campaign, "bm25", {"301": ["d1"]})
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    response = api.delete(f"/api/campaigns/trec-x/runs/{run.pk}/")
    assert response.status_code == 409
    assert response.json()["detail"].startswith(f"Not deleted: run bm25 is in pool {pool.pk}")
    assert Run.objects.exists()


def test_replace_a_run_with_a_corrected_file(api):
    campaign = make_campaign()
    run = make_run(campaign, "bm25", {"301": ["d1"]})
    fixed = upload("bm25.txt", run_text("bm25", {"301": ["d1", "d2"]}))
    response = api.post(
        f"/api/campaigns/trec-x/runs/{run.pk}/replace/", {"file": fixed}, format="multipart"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["line_count"] == 2
    assert Run.objects.get().line_count == 2


def test_a_bad_replacement_keeps_the_run(api):
    campaign = make_campaign()
    run = make_run(campaign, "bm25", {"301": ["d1"]})
    response = api.post(
        f"/api/campaigns/trec-x/runs/{run.pk}/replace/",
        {"file": upload("bad.txt", b"301 Q0 d1\n")},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["errors"][0] == {
        "file": "bad.txt",
        "line": 1,
        "reason": "expected 6 columns (topic Q0 docno rank score tag), found 3",
    }
    assert Run.objects.get().pk == run.pk
