"""Large uploads of runs and documents: streamed to disk, imported by a background job,
refused past the limit."""

from __future__ import annotations

import io

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile, TemporaryUploadedFile
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from pooling import jobs, run_services, services
from pooling.models import Document, Run
from tests.helpers import make_campaign, run_text
from workbench.core.problems import InputError
from workbench.jobs import JobProgress, job_retry
from workbench.models import Job

pytestmark = pytest.mark.django_db

BAD_RUN = b"301 Q0 d1 1 2 bad\n999 Q0 d2 2 1 bad\n301 Q0 d1 3 0 bad\n"


@pytest.fixture(autouse=True)
def _small_threshold(settings):
    """Every upload here counts as large: over 10 bytes goes to a job."""
    settings.WORKBENCH_UPLOAD_JOB_BYTES = 10


@pytest.fixture
def api(organiser) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=organiser).key}")
    return client


def pending_files() -> list[str]:
    if not default_storage.exists("uploads/pending"):
        return []
    folders, _ = default_storage.listdir("uploads/pending")
    return [
        f for folder in folders for f in default_storage.listdir(f"uploads/pending/{folder}")[1]
    ]


def test_a_large_upload_from_the_page_is_imported_by_a_job(
    organiser_client, django_capture_on_commit_callbacks
):
    campaign = make_campaign()
    with django_capture_on_commit_callbacks(execute=True):
        response = organiser_client.post(
            reverse("pooling:runs_upload", args=[campaign.slug]),
            {"files": [SimpleUploadedFile("bm25.txt", run_text("bm25", {"301": ["d1", "d2"]}))]},
        )
    job = Job.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("job_detail", args=[job.pk])
    job.refresh_from_db()
    assert (job.state, job.error, job.result) == (
        "done",
        "",
        {"campaign": "trec-x", "runs": ["bm25"], "rejected": 0},
    )
    run = Run.objects.get()
    assert (run.tag, run.line_count, run.uploaded_by.username) == ("bm25", 2, "olivia")
    assert run.original_file.read() == run_text("bm25", {"301": ["d1", "d2"]})
    assert pending_files() == [], "the uploaded files are removed once imported"
    page = organiser_client.get(response.url).content.decode()
    assert "Open the campaign (1 run(s) stored)" in page


def test_htmx_upload_to_a_job_sends_the_browser_to_the_jobs_page(organiser_client):
    campaign = make_campaign()
    response = organiser_client.post(
        reverse("pooling:runs_upload", args=[campaign.slug]),
        {"files": [SimpleUploadedFile("r.txt", run_text("r", {"301": ["d1"]}))]},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 204
    assert response["HX-Redirect"] == reverse("job_detail", args=[Job.objects.get().pk])


def test_the_api_answers_202_with_the_jobs_address(api, django_capture_on_commit_callbacks):
    make_campaign()
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/campaigns/trec-x/runs/",
            {"file": SimpleUploadedFile("bm25.txt", run_text("bm25", {"301": ["d1"]}))},
            format="multipart",
        )
    assert response.status_code == 202
    body = response.json()
    job = Job.objects.get()
    assert body["job"] == job.pk
    assert body["url"] == f"http://testserver/api/jobs/{job.pk}/"
    assert response["Location"] == f"/api/jobs/{job.pk}/"
    state = api.get(body["url"]).json()
    assert (state["state"], state["result"]["runs"]) == ("done", ["bm25"])


def test_a_bad_file_fails_the_job_with_the_same_problems_and_stores_nothing(
    api, django_capture_on_commit_callbacks
):
    campaign = make_campaign()
    with pytest.raises(InputError) as synchronous:
        run_services.runs_import(
            campaign=campaign, uploads=[run_services.RunUpload("bad.txt", BAD_RUN)]
        )
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/campaigns/trec-x/runs/",
            {"file": SimpleUploadedFile("bad.txt", BAD_RUN)},
            format="multipart",
        )
    assert response.status_code == 202
    job = Job.objects.get()
    assert job.state == "failed"
    assert job.error == str(synchronous.value)
    assert job.error.splitlines() == [
        "bad.txt:2: topic '999' is not a topic of this campaign",
        "bad.txt:3: docno 'd1' appears twice in topic '301' (first on line 1)",
    ]
    assert not Run.objects.exists()
    assert pending_files() == []
    assert not default_storage.exists("runs") or default_storage.listdir("runs") == ([], [])


def test_keep_valid_in_a_job_stores_the_good_files_and_logs_the_rejected(
    api, django_capture_on_commit_callbacks
):
    make_campaign()
    with django_capture_on_commit_callbacks(execute=True):
        api.post(
            "/api/campaigns/trec-x/runs/",
            {
                "file": [
                    SimpleUploadedFile("good.txt", run_text("good", {"301": ["d1"]})),
                    SimpleUploadedFile("bad.txt", BAD_RUN),
                ],
                "keep_valid": "true",
            },
            format="multipart",
        )
    job = Job.objects.get()
    assert (job.state, job.result["runs"], job.result["rejected"]) == ("done", ["good"], 1)
    assert "bad.txt:2: topic '999' is not a topic of this campaign" in job.log
    assert list(Run.objects.values_list("tag", flat=True)) == ["good"]


def test_a_large_upload_is_moved_to_the_job_never_read_in_the_request(
    organiser_client, settings, monkeypatch, django_capture_on_commit_callbacks
):
    """Streamed to a temporary file by Django, the upload is moved into storage for the
    job: the request never reads it into memory."""
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0  # every upload goes to a temporary file

    def no_reading(self, *args):
        raise AssertionError("the request read the uploaded file")

    monkeypatch.setattr(TemporaryUploadedFile, "read", no_reading)
    monkeypatch.setattr(TemporaryUploadedFile, "chunks", no_reading)
    campaign = make_campaign()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = organiser_client.post(
            reverse("pooling:runs_upload", args=[campaign.slug]),
            {"files": [SimpleUploadedFile("r.txt", run_text("r", {"301": ["d1"]}))]},
        )
    assert response.status_code == 302
    assert len(pending_files()) == 1
    monkeypatch.undo()
    for callback in callbacks:
        callback()
    assert Job.objects.get().state == "done"
    assert Run.objects.get().tag == "r"


def test_a_file_over_the_limit_is_cut_off_as_it_arrives(api, settings):
    settings.WORKBENCH_MAX_UPLOAD_BYTES = 20
    make_campaign()
    response = api.post(
        "/api/campaigns/trec-x/runs/",
        {"file": SimpleUploadedFile("big.txt", run_text("big", {"301": ["d1", "d2"]}))},
        format="multipart",
    )
    assert response.status_code == 413
    assert response.json()["detail"].startswith(
        "big.txt: over the upload limit of 20 bytes per file; nothing was stored."
    )
    assert not Job.objects.exists()
    assert not Run.objects.exists()


# --------------------------------------------------------------------------
# Documents

COLLECTION = (
    b'{"docno": "d1", "title": "One", "text": "first"}\n{"docno": "d2", "text": "second"}\n'
)
BAD_COLLECTION = b'{"docno": "d1", "text": "x"}\nnot json\n{"docno": "d1", "text": "again"}\n'


def test_a_large_collection_from_the_page_is_imported_by_a_job(
    organiser_client, django_capture_on_commit_callbacks
):
    campaign = make_campaign()
    with django_capture_on_commit_callbacks(execute=True):
        response = organiser_client.post(
            reverse("pooling:documents_upload", args=[campaign.slug]),
            {"file": SimpleUploadedFile("docs.jsonl", COLLECTION), "format": ""},
        )
    job = Job.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("job_detail", args=[job.pk])
    job.refresh_from_db()
    assert (job.state, job.error) == ("done", "")
    assert job.result == {"campaign": "trec-x", "created": 2, "updated": 0}
    assert (job.done, job.total) == (len(COLLECTION), len(COLLECTION))
    assert "docs.jsonl: 2 created, 0 updated" in job.log
    assert dict(Document.objects.values_list("docno", "text")) == {"d1": "first", "d2": "second"}
    assert pending_files() == []
    page = organiser_client.get(response.url).content.decode()
    assert "Open the campaign (2 documents added, 0 updated)" in page


def test_a_bad_collection_fails_the_job_with_every_problem_and_changes_nothing(
    api, django_capture_on_commit_callbacks
):
    campaign = make_campaign()
    services.documents_import(campaign=campaign, stream=io.BytesIO(COLLECTION), name="docs.jsonl")
    with pytest.raises(InputError) as synchronous:
        services.documents_import(
            campaign=campaign, stream=io.BytesIO(BAD_COLLECTION), name="bad.jsonl"
        )
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/campaigns/trec-x/documents/",
            {"file": SimpleUploadedFile("bad.jsonl", BAD_COLLECTION)},
            format="multipart",
        )
    assert response.status_code == 202
    assert response["Location"] == f"/api/jobs/{Job.objects.get().pk}/"
    job = Job.objects.get()
    assert job.state == "failed"
    assert job.error == str(synchronous.value)
    assert job.error.splitlines()[0].startswith("bad.jsonl:2: ")
    # Read to its end to report every problem, as the bar shows.
    assert (job.done, job.total, job.unit) == (len(BAD_COLLECTION), len(BAD_COLLECTION), "bytes")
    assert dict(Document.objects.values_list("docno", "text")) == {"d1": "first", "d2": "second"}
    assert pending_files() == []


def test_the_api_imports_a_large_collection_in_a_job(api, django_capture_on_commit_callbacks):
    make_campaign()
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/campaigns/trec-x/documents/",
            {"file": SimpleUploadedFile("docs.jsonl", COLLECTION)},
            format="multipart",
        )
    assert response.status_code == 202
    state = api.get(response.json()["url"]).json()
    assert (state["state"], state["result"]["created"]) == ("done", 2)
    assert Document.objects.count() == 2


def test_a_small_collection_is_still_stored_in_the_request(api, settings):
    settings.WORKBENCH_UPLOAD_JOB_BYTES = 10_000
    make_campaign()
    response = api.post(
        "/api/campaigns/trec-x/documents/",
        {"file": SimpleUploadedFile("docs.jsonl", COLLECTION)},
        format="multipart",
    )
    assert response.status_code == 201
    assert response.json()["created"] == 2
    assert not Job.objects.exists()


class _TakenOver:
    """A job's progress whose lease another worker takes at the first step."""

    def __init__(self, job, progress) -> None:
        self.job, self.progress = job, progress

    def __call__(self, *args, **kwargs) -> None:
        self.progress(*args, **kwargs)

    def note(self, line: str) -> None:
        self.progress.note(line)

    def advance(self, steps: int = 1) -> None:
        Job.objects.filter(pk=self.job.pk).update(lease_token="another-run")
        self.progress.note("a step")  # written at once: the run finds out


def taken_over_runs_import(job, progress):
    """pooling.jobs.runs_import, whose lease another worker takes as it reads the files."""
    from pooling.jobs import runs_import

    return runs_import(job, _TakenOver(job, progress))


def test_an_import_that_lost_its_lease_leaves_the_files_to_the_run_that_took_over(
    organiser, django_capture_on_commit_callbacks
):
    campaign = make_campaign()
    upload = SimpleUploadedFile("bm25.txt", run_text("bm25", {"301": ["d1"]}))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = jobs.runs_import_start(campaign=campaign, files=[upload], uploaded_by=organiser)
    Job.objects.filter(pk=job.pk).update(
        kind="tests.pooling.test_upload_jobs.taken_over_runs_import"
    )
    callbacks[0]()
    assert len(pending_files()) == 1
    assert not Run.objects.exists()
    # The run that took over imports them, and removes them.
    Job.objects.filter(pk=job.pk).update(kind="pooling.jobs.runs_import", state=Job.QUEUED)
    callbacks[0]()
    job.refresh_from_db()
    assert (job.state, job.result["runs"]) == ("done", ["bm25"])
    assert pending_files() == []


def test_a_failed_import_retried_after_its_files_are_gone_says_to_upload_again(
    organiser, django_capture_on_commit_callbacks
):
    campaign = make_campaign()
    upload = SimpleUploadedFile("bad.txt", BAD_RUN)
    with django_capture_on_commit_callbacks(execute=True):
        job = jobs.runs_import_start(campaign=campaign, files=[upload], uploaded_by=organiser)
    job.refresh_from_db()
    assert job.state == "failed"
    assert pending_files() == [], "a rejected upload is removed"
    with django_capture_on_commit_callbacks(execute=True):
        job_retry(job=job, by=organiser)
    job.refresh_from_db()
    assert job.error == (
        "bad.txt: the uploaded file is gone (an earlier run of this job ended and removed it): "
        "upload it again"
    )


@pytest.mark.parametrize("kind", ["runs", "documents"])
def test_an_import_records_its_job_done_in_the_transaction_that_stores_it(
    kind, organiser, django_capture_on_commit_callbacks
):
    """Were its worker killed right after, the job would be done already: not run again."""
    from pooling import jobs

    campaign = make_campaign()
    with django_capture_on_commit_callbacks(execute=False):
        if kind == "runs":
            upload = SimpleUploadedFile("bm25.txt", run_text("bm25", {"301": ["d1"]}))
            job = jobs.runs_import_start(campaign=campaign, files=[upload])
        else:
            upload = SimpleUploadedFile("docs.jsonl", b'{"docno": "d1", "text": "t"}\n')
            job = jobs.documents_import_start(campaign=campaign, file=upload)
    Job.objects.filter(pk=job.pk).update(state=Job.RUNNING, lease_token="a-run")
    job.refresh_from_db()
    getattr(jobs, f"{kind}_import")(job, JobProgress(job))  # without the end of `run_job`
    job.refresh_from_db()
    assert job.state == "done"
    assert job.result["campaign"] == "trec-x"
