"""The runs API: upload, list, line-level errors as JSON, and who may use it."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from pooling.models import Run
from tests.helpers import make_campaign, run_text

pytestmark = pytest.mark.django_db
RUNS_URL = "/api/campaigns/trec-x/runs/"


@pytest.fixture
def api(organiser) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=organiser).key}")
    return client


def run_file(tag: str, rows=None) -> SimpleUploadedFile:
    return SimpleUploadedFile(f"{tag}.txt", run_text(tag, rows or {"301": ["d1", "d2"]}))


def test_upload_a_run_with_a_token(api):
    make_campaign()
    response = api.post(RUNS_URL, {"file": run_file("bm25")}, format="multipart")
    assert response.status_code == 201
    [run] = response.json()
    assert run["tag"] == "bm25"
    assert run["line_count"] == 2
    assert run["topic_count"] == 1
    assert run["depth"] == 2
    assert run["documents_per_topic"] == {"301": 2}
    assert run["uploaded_by"] == "olivia"


def test_list_runs(api):
    make_campaign()
    api.post(RUNS_URL, {"file": [run_file("a"), run_file("b")]}, format="multipart")
    assert [r["tag"] for r in api.get(RUNS_URL).json()] == ["a", "b"]


def test_the_runs_list_pages_and_sorts_when_asked(api):
    make_campaign()
    tags = ["c", "a", "d", "b"]
    api.post(RUNS_URL, {"file": [run_file(tag) for tag in tags]}, format="multipart")
    page = api.get(RUNS_URL, {"limit": 2, "offset": 1}).json()
    assert page["count"] == 4
    assert [r["tag"] for r in page["results"]] == ["b", "c"]
    descending = api.get(RUNS_URL, {"ordering": "-tag"}).json()
    assert [r["tag"] for r in descending] == ["d", "c", "b", "a"]


def test_rejected_upload_returns_line_level_errors_and_stores_nothing(api):
    make_campaign()
    bad = SimpleUploadedFile("bad.txt", b"301 Q0 d1 1 2 t\n301 Q0 d1 2 1 t\n302 Q0 d1\n")
    response = api.post(RUNS_URL, {"file": bad}, format="multipart")
    assert response.status_code == 400
    assert response.json() == {
        "detail": "Rejected: nothing was stored.",
        "errors": [
            {
                "file": "bad.txt",
                "line": 2,
                "reason": "docno 'd1' appears twice in topic '301' (first on line 1)",
            },
            {
                "file": "bad.txt",
                "line": 3,
                "reason": "expected 6 columns (topic Q0 docno rank score tag), found 3",
            },
        ],
        "total": 2,
    }
    assert not Run.objects.exists()


def test_keep_valid_over_the_api(api):
    make_campaign()
    response = api.post(
        RUNS_URL,
        {"file": [run_file("good"), SimpleUploadedFile("e.txt", b"")], "keep_valid": "true"},
        format="multipart",
    )
    assert response.status_code == 201
    body = response.json()
    assert body["detail"] == "Stored: good. Some files were rejected and not stored."
    assert [run["tag"] for run in body["stored"]] == ["good"]
    assert body["errors"] == [{"file": "e.txt", "line": 0, "reason": "empty file: no run lines"}]
    assert body["total"] == 1
    assert list(Run.objects.values_list("tag", flat=True)) == ["good"]


def test_keep_valid_0_over_the_api_is_no_as_truthy_reads_it(api):
    make_campaign()
    response = api.post(
        RUNS_URL,
        {"file": [run_file("good"), SimpleUploadedFile("e.txt", b"")], "keep_valid": "0"},
        format="multipart",
    )
    assert response.status_code == 400
    assert not Run.objects.exists()


def test_keep_valid_with_every_file_rejected_stores_nothing(api):
    make_campaign()
    response = api.post(
        RUNS_URL,
        {"file": [SimpleUploadedFile("e.txt", b"")], "keep_valid": "true"},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["detail"] == "Rejected: nothing was stored."
    assert not Run.objects.exists()


def test_upload_without_a_file_is_explained(api):
    make_campaign()
    response = api.post(RUNS_URL, {}, format="multipart")
    assert response.status_code == 400
    assert response.json() == {
        "detail": "Attach at least one run file in the multipart field 'file'."
    }


def test_oversized_upload_is_refused(api, settings):
    settings.WORKBENCH_MAX_UPLOAD_BYTES = 5
    make_campaign()
    response = api.post(RUNS_URL, {"file": run_file("big")}, format="multipart")
    assert response.status_code == 413
    assert not Run.objects.exists()


def test_unknown_campaign_is_404(api):
    assert api.get("/api/campaigns/nope/runs/").status_code == 404


def test_session_auth_works_for_organisers(organiser_client):
    make_campaign()
    assert organiser_client.get(RUNS_URL).status_code == 200
    [campaign] = organiser_client.get("/api/campaigns/").json()
    assert (campaign["slug"], campaign["task_kind"]) == ("trec-x", "ranked")


def test_assessors_get_403(assessor):
    make_campaign()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=assessor).key}")
    assert client.get(RUNS_URL).status_code == 403
    assert client.get("/api/campaigns/").status_code == 403
    assert client.post(RUNS_URL, {"file": run_file("x")}, format="multipart").status_code == 403
    assert not Run.objects.exists()


def test_anonymous_requests_are_refused():
    make_campaign()
    assert APIClient().get(RUNS_URL).status_code == 401


def test_openapi_schema_describes_the_run_upload(organiser_client):
    response = organiser_client.get("/api/schema/", headers={"Accept": "application/json"})
    assert response.status_code == 200
    schema = response.json()
    post = schema["paths"]["/api/campaigns/{slug}/runs/"]["post"]
    assert "multipart/form-data" in post["requestBody"]["content"]
    # With the 401, 403 and 404 every operation with a path parameter documents.
    assert set(post["responses"]) == {"201", "202", "400", "401", "403", "404", "413"}
