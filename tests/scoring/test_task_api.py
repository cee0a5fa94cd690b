"""The task campaign API: uploads with line-level errors as JSON, scores sorted by any
column, a submission's documents equal to the pure core's, and who may use it."""

from __future__ import annotations

import hashlib
import io
import json

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile, UploadedFile
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from pooling import services as pooling_services
from scoring.core.tasks import codiesp, scifact, subtasks
from scoring.models import TaskGold, TaskSubmission
from tests.helpers import (
    CODIESP_CODES,
    CODIESP_GOLD,
    CODIESP_RUN,
    SCIFACT_CLAIMS,
    SCIFACT_PREDICTIONS,
    make_submission,
    make_task_campaign,
    make_task_gold,
)
from workbench.jobs import run_job
from workbench.models import Job

pytestmark = pytest.mark.django_db
BASE = "/api/campaigns/codiesp"


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def api(organiser) -> APIClient:
    return token_client(organiser)


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data)


def post_gold(api, subtask="D", gold=CODIESP_GOLD, codes=(CODIESP_CODES,), base=BASE):
    return api.post(
        f"{base}/gold/",
        {
            "subtask": subtask,
            "file": upload("gold.tsv", gold),
            "codes": [upload(f"codes{i}.tsv", c) for i, c in enumerate(codes)],
        },
        format="multipart",
    )


def post_submission(api, name, data, subtask="D", base=BASE):
    return api.post(
        f"{base}/submissions/",
        {"subtask": subtask, "name": name, "file": upload(f"{name}.tsv", data)},
        format="multipart",
    )


def test_upload_a_gold_and_a_submission_with_a_token(api):
    make_task_campaign()
    response = post_gold(api)
    assert response.status_code == 201
    gold = response.json()
    assert (gold["subtask"], gold["document_count"], gold["code_count"]) == ("D", 2, 4)
    assert (gold["codes_names"], gold["uploaded_by"]) == (["codes0.tsv"], "olivia")
    response = post_submission(api, "team-a", CODIESP_RUN)
    assert response.status_code == 201
    assert response.json()["name"] == "team-a"
    assert [g["subtask"] for g in api.get(f"{BASE}/gold/").json()] == ["D"]
    assert [s["name"] for s in api.get(f"{BASE}/submissions/").json()] == ["team-a"]


def test_a_rejected_gold_answers_every_problem_and_stores_nothing(api):
    make_task_campaign()
    response = post_gold(api, gold=b"a\tx1\tx2\n", codes=(b"x1\n\tz\n",))
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == "Rejected: nothing was stored."
    assert [(e["file"], e["line"]) for e in body["errors"]] == [("gold.tsv", 1), ("codes0.tsv", 2)]
    assert body["errors"][1]["reason"].startswith("empty code")
    assert body["total"] == 2
    assert not TaskGold.objects.exists()


def test_a_rejected_submission_stores_nothing(api):
    campaign = make_task_campaign()
    make_task_gold(campaign)
    response = post_submission(api, "bad", b"a\tx1 x2\n")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {
            "file": "bad.tsv",
            "line": 1,
            "reason": "code 'x1 x2' contains whitespace (the official scripts split or misread it)",
        }
    ]
    assert not TaskSubmission.objects.exists()


@pytest.mark.parametrize("name", ["team\x1b[8m", "team\u202e", "\x7fteam"])
def test_a_submission_name_holding_a_control_character_is_refused(api, name):
    campaign = make_task_campaign()
    make_task_gold(campaign)
    response = post_submission(api, name, CODIESP_RUN)
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["reason"].startswith(f"submission name {name!r} holds U+")
    assert not TaskSubmission.objects.exists()


def test_a_subtask_the_campaign_has_not_is_a_400(api):
    make_task_campaign()
    response = post_gold(api, subtask="claims")
    assert response.status_code == 400
    assert response.json() == {"subtask": ['"claims" is not a valid choice.']}


def test_an_oversized_upload_is_413(api, settings):
    settings.WORKBENCH_MAX_UPLOAD_BYTES = 10
    make_task_campaign()
    assert post_gold(api).status_code == 413
    assert not TaskGold.objects.exists()


@pytest.fixture
def three_teams(db):
    campaign = make_task_campaign()
    make_task_gold(campaign)
    make_submission(campaign, "hand", CODIESP_RUN)
    make_submission(campaign, "perfect", b"a\tx1\na\tx2\na\tx3\nb\tx1\n")
    make_submission(campaign, "weak", b"a\tx9\nb\tx1\n")
    return campaign


@pytest.mark.parametrize(
    ("sort", "order"),
    [
        (None, ["perfect", "weak", "hand"]),
        ("-f1", ["perfect", "hand", "weak"]),
        ("-name", ["weak", "perfect", "hand"]),
    ],
)
def test_scores_are_sorted_by_the_column_asked(api, three_teams, sort, order):
    response = api.get(f"{BASE}/scores/D/", {"sort": sort} if sort else {})
    body = response.json()
    assert [row["submission"]["name"] for row in body["submissions"]] == order
    assert body["sort"] == (sort or "-map")
    assert body["measures"] == ["map", "precision", "recall", "f1"]


def test_a_bad_sort_is_a_400(api, three_teams):
    response = api.get(f"{BASE}/scores/D/", {"sort": "ndcg"})
    assert response.status_code == 400
    assert "sort" in response.json()


def test_scores_are_the_cores_at_full_precision(api, three_teams):
    body = api.get(f"{BASE}/scores/D/").json()
    hand = next(row for row in body["submissions"] if row["submission"]["name"] == "hand")
    core = codiesp.score_ranked(
        codiesp.read_codings(CODIESP_GOLD),
        codiesp.read_codings(CODIESP_RUN),
        codiesp.read_codes(CODIESP_CODES),
    )
    assert hand["scores"] == {
        "map": core.map,
        "precision": core.precision,
        "recall": core.recall,
        "f1": core.f1,
    }
    assert body["gold"]["original_name"] == "gold.tsv"


def test_a_submissions_documents_are_the_cores_with_null_for_nan(api, three_teams):
    hand = TaskSubmission.objects.get(name="hand")
    body = api.get(f"{BASE}/submissions/{hand.pk}/").json()
    core = codiesp.score_ranked(
        codiesp.read_codings(CODIESP_GOLD),
        codiesp.read_codings(CODIESP_RUN),
        codiesp.read_codes(CODIESP_CODES),
    )
    assert body["document"] == "clinical case"
    assert body["document_measures"] == ["ap", "precision", "recall", "f1"]
    assert body["documents"] == [
        {"document": case, "scores": values}
        for case, values in codiesp.as_json(core)["per_document"].items()
    ]
    assert body["documents"][2] == {
        "document": "c",
        "scores": {"ap": 0.0, "precision": None, "recall": None, "f1": None},
    }
    by_ap = api.get(f"{BASE}/submissions/{hand.pk}/", {"sort": "-ap"}).json()
    assert [d["document"] for d in by_ap["documents"]] == ["a", "b", "c"]


def test_scifact_claims_over_the_api(api):
    make_task_campaign("sf", task_kind="scifact")
    base = "/api/campaigns/sf"
    assert (
        post_gold(api, subtask="claims", gold=SCIFACT_CLAIMS, codes=(), base=base).status_code
        == 201
    )
    response = post_submission(api, "team-a", SCIFACT_PREDICTIONS, subtask="claims", base=base)
    assert response.status_code == 201
    body = api.get(f"{base}/submissions/{response.json()['id']}/").json()
    gold = scifact.read_claims(SCIFACT_CLAIMS)
    predictions = scifact.read_predictions(SCIFACT_PREDICTIONS, gold)
    assert body["scores"] == scifact.score(gold, predictions)
    assert body["documents"] == [
        {"document": str(claim), "scores": values}
        for claim, values in scifact.per_claim(gold, predictions).items()
    ]
    listing = api.get(f"{base}/scores/claims/").json()
    assert list(listing["submissions"][0]["scores"]) == list(scifact.KEYS)


def test_delete_a_submission(api, three_teams):
    weak = TaskSubmission.objects.get(name="weak")
    assert api.delete(f"{BASE}/submissions/{weak.pk}/").status_code == 204
    assert TaskSubmission.objects.count() == 2


def test_ranked_campaigns_and_unknown_subtasks_are_404(api):
    pooling_services.campaign_create(name="TREC", slug="trec")
    assert api.get("/api/campaigns/trec/gold/").status_code == 404
    make_task_campaign()
    assert api.get(f"{BASE}/scores/claims/").status_code == 404
    assert api.get(f"{BASE}/submissions/999/").status_code == 404


def test_assessors_get_403_and_see_no_scores(assessor, three_teams):
    client = token_client(assessor)
    weak = TaskSubmission.objects.get(name="weak")
    for url in (
        f"{BASE}/gold/",
        f"{BASE}/submissions/",
        f"{BASE}/submissions/{weak.pk}/",
        f"{BASE}/scores/D/",
    ):
        response = client.get(url)
        assert response.status_code == 403, url
        assert "map" not in response.content.decode()
    assert post_gold(client).status_code == 403
    assert post_submission(client, "sneaky", CODIESP_RUN).status_code == 403
    assert client.delete(f"{BASE}/submissions/{weak.pk}/").status_code == 403
    assert TaskSubmission.objects.count() == 3


def test_anonymous_requests_are_refused(three_teams):
    assert APIClient().get(f"{BASE}/scores/D/").status_code == 401


def test_the_schema_describes_the_task_api(organiser_client):
    schema = organiser_client.get("/api/schema/", headers={"Accept": "application/json"}).json()
    post = schema["paths"]["/api/campaigns/{slug}/gold/"]["post"]
    assert "multipart/form-data" in post["requestBody"]["content"]
    # With the 401, 403 and 404 every operation with a path parameter documents.
    assert set(post["responses"]) == {"201", "400", "401", "403", "404", "413"}
    scores = schema["paths"]["/api/campaigns/{slug}/scores/{subtask}/"]["get"]
    assert [p["name"] for p in scores["parameters"] if p["in"] == "query"] == ["sort"]
    assert set(schema["paths"]["/api/campaigns/{slug}/submissions/{submission_id}/"]) == {
        "get",
        "post",  # score its subtask in a job, when too many bytes for a request
        "delete",
    }
    scores_post = schema["paths"]["/api/campaigns/{slug}/scores/{subtask}/"]["post"]
    assert {"200", "202"} <= set(scores_post["responses"])
    assert {"200", "202", "404"} <= set(scores["responses"])


def test_the_api_and_the_command_give_the_same_numbers(api, three_teams, tmp_path):
    """One scorer behind both: the API's full precision is `manage.py codiesp --format json`'s."""
    for name, data in (("gold", CODIESP_GOLD), ("run", CODIESP_RUN), ("codes", CODIESP_CODES)):
        (tmp_path / f"{name}.tsv").write_bytes(data)
    out = io.StringIO()
    call_command(
        "codiesp",
        *("--subtask", "D", "--gold", str(tmp_path / "gold.tsv")),
        *("--pred", str(tmp_path / "run.tsv"), "--codes", str(tmp_path / "codes.tsv")),
        "--format",
        "json",
        stdout=out,
    )
    command = json.loads(out.getvalue())
    hand = TaskSubmission.objects.get(name="hand")
    body = api.get(f"{BASE}/submissions/{hand.pk}/").json()
    assert body["scores"] == {key: command[key] for key in ("map", "precision", "recall", "f1")}
    assert {d["document"]: d["scores"] for d in body["documents"]} == command["per_document"]


# --------------------------------------------------------------------------
# Submissions of many bytes: scored by a job


@pytest.fixture
def many_bytes(settings, three_teams):
    settings.WORKBENCH_UPLOAD_JOB_BYTES = 10
    cache.clear()
    return three_teams


def test_scores_of_many_bytes_answer_202_with_the_job_then_the_scores(
    api, many_bytes, settings, django_capture_on_commit_callbacks
):
    url = f"{BASE}/scores/D/"
    none = api.get(url)
    assert none.status_code == 404
    assert (
        none.json()["detail"] == "no scores of the current gold and submissions: POST to make one"
    )
    with django_capture_on_commit_callbacks(execute=False):
        accepted = api.post(url)
    assert accepted.status_code == 202
    job = Job.objects.get(pk=accepted.json()["job"])
    assert accepted["Location"] == f"/api/jobs/{job.pk}/"
    assert api.get(url).status_code == 202  # queued: poll the job
    run_job.call(job.pk)
    done = api.get(url)
    assert done.status_code == 200
    settings.WORKBENCH_UPLOAD_JOB_BYTES = 10**9
    cache.clear()
    assert done.json() == api.get(url).json()


def test_a_submissions_values_of_many_bytes_come_from_the_job(
    api, many_bytes, settings, django_capture_on_commit_callbacks
):
    hand = TaskSubmission.objects.get(name="hand")
    url = f"{BASE}/submissions/{hand.pk}/"
    assert api.get(url).status_code == 404
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post(url).status_code == 202
    by_job = api.get(url, {"sort": "-ap"})
    assert by_job.status_code == 200
    settings.WORKBENCH_UPLOAD_JOB_BYTES = 10**9
    cache.clear()
    assert by_job.json() == api.get(url, {"sort": "-ap"}).json()


def test_a_failed_scores_job_answers_404_with_the_reason(
    api, many_bytes, django_capture_on_commit_callbacks, monkeypatch
):
    def broken(*args, **kwargs):
        raise ValueError("the disk is gone")

    monkeypatch.setattr(subtasks, "score", broken)
    with django_capture_on_commit_callbacks(execute=True):
        api.post(f"{BASE}/scores/D/")
    failed = api.get(f"{BASE}/scores/D/")
    assert failed.status_code == 404
    assert failed.json()["detail"] == "the last attempt failed: the disk is gone; POST to try again"


def test_a_small_subtask_answers_a_post_with_its_scores_and_no_job(api, three_teams):
    response = api.post(f"{BASE}/scores/D/")
    assert response.status_code == 200
    assert len(response.json()["submissions"]) == 3
    assert not Job.objects.exists()


def test_an_upload_is_read_from_its_file_not_whole_into_memory(api, monkeypatch, settings):
    """The uploaded file (on disk, as any upload over FILE_UPLOAD_MAX_MEMORY_SIZE is)
    is handed to the readers and to storage as a file: its bytes are never read
    whole (a submission may be hundreds of megabytes)."""
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0
    make_task_gold(make_task_campaign())

    def in_blocks(upload):
        def read(size=-1):
            if not isinstance(upload, SimpleUploadedFile):  # the client's, which it encodes
                assert size is not None, "read whole"
                assert size >= 0, "read whole"
            return upload.file.read(size)

        return read

    monkeypatch.setattr(UploadedFile, "read", property(in_blocks), raising=False)
    response = post_submission(api, "team", CODIESP_RUN)
    monkeypatch.undo()
    assert response.status_code == 201
    stored = TaskSubmission.objects.get()
    with stored.file.open("rb") as file:
        assert file.read() == CODIESP_RUN
    assert stored.sha256 == hashlib.sha256(CODIESP_RUN).hexdigest()


def test_a_submission_is_replaced_in_one_step_and_a_refused_file_changes_nothing(api):
    campaign = make_task_campaign()
    make_task_gold(campaign)
    submission = make_submission(campaign, "team-a", CODIESP_RUN)
    url = f"{BASE}/submissions/{submission.pk}/replace/"
    refused = api.post(url, {"file": upload("bad.tsv", b"a x1\n")}, format="multipart")
    assert refused.status_code == 400
    assert refused.json()["detail"] == "Rejected: the submission was not replaced."
    assert refused.json()["errors"][0]["file"] == "bad.tsv"
    assert TaskSubmission.objects.get().sha256 == submission.sha256
    done = api.post(url, {"file": upload("v2.tsv", b"a\tx1\n")}, format="multipart")
    assert done.status_code == 200
    assert (done.json()["id"], done.json()["name"], done.json()["original_name"]) == (
        submission.pk,
        "team-a",
        "v2.tsv",
    )
    assert api.post(url, {}, format="multipart").status_code == 400
    assert api.post(f"{BASE}/submissions/999/replace/", {}, format="multipart").status_code == 404
