"""The one upload rule (`workbench.uploads.upload_receive`): every upload, page or API,
is refused past the size limit with the same sentence, and stores nothing."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from pooling import run_services, services
from pooling.models import Document, Run, Topic
from scoring.models import TaskGold, TaskSubmission
from tests.helpers import make_campaign, make_run, make_task_campaign, make_team
from workbench import uploads
from workbench.models import Job

pytestmark = pytest.mark.django_db

BIG = b"301 Q0 d1 1 2 big\n" * 10  # over the 20-byte limit set below


@pytest.fixture(autouse=True)
def _small_limit(settings):
    settings.WORKBENCH_MAX_UPLOAD_BYTES = 20


def big(name: str = "big.txt") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, BIG)


def stored() -> tuple[int, ...]:
    return tuple(
        model.objects.count() for model in (Topic, Document, Run, TaskGold, TaskSubmission, Job)
    )


ORGANISER_API = [
    ("/api/campaigns/trec-x/topics/", "file"),
    ("/api/campaigns/trec-x/answers/", "file"),
    ("/api/campaigns/trec-x/documents/", "file"),
    ("/api/campaigns/trec-x/runs/", "file"),
    ("/api/campaigns/trec-x/runs/{run}/replace/", "file"),
    ("/api/campaigns/trec-x/judgments/", "file"),
    ("/api/campaigns/codiesp/gold/", "file"),
    ("/api/campaigns/codiesp/submissions/", "file"),
]
ORGANISER_PAGES = [
    ("/campaigns/trec-x/topics/", "file"),
    ("/campaigns/trec-x/answers/", "file"),
    ("/campaigns/trec-x/documents/", "file"),
    ("/campaigns/trec-x/runs/", "files"),
    ("/scores/tasks/codiesp/gold/", "file"),
    ("/scores/tasks/codiesp/submissions/", "file"),
]


@pytest.fixture
def campaigns(organiser):
    campaign = make_campaign()
    run = make_run(campaign, "r1", {"301": ["d1"]})
    make_task_campaign()
    return {"run": run.pk}


@pytest.mark.parametrize(("url", "field"), ORGANISER_API)
def test_every_api_upload_answers_a_file_over_the_limit_with_the_same_413(
    organiser_client: Client, campaigns, url, field
):
    before = stored()
    response = organiser_client.post(url.format(**campaigns), {field: big()})
    assert response.status_code == 413
    assert response.json() == {"detail": uploads.limit_message(["big.txt"])}
    assert stored() == before


@pytest.mark.parametrize(("url", "field"), ORGANISER_PAGES)
def test_every_upload_page_answers_a_file_over_the_limit_with_the_same_413(
    organiser_client: Client, campaigns, url, field
):
    before = stored()
    response = organiser_client.post(url, {field: big()})
    assert response.status_code == 413
    assert uploads.limit_message(["big.txt"]) in response.content.decode()
    assert stored() == before


def test_a_participant_s_run_over_the_limit_is_the_same_413_on_the_page_and_the_api(
    participant_client: Client, participant
):
    team = make_team(make_campaign(), "t1", [participant])
    api = participant_client.post(f"/api/teams/{team.pk}/runs/", {"file": big()})
    page = participant_client.post(f"/teams/{team.pk}/runs/", {"file": big()})
    message = uploads.limit_message(["big.txt"])
    assert (api.status_code, page.status_code) == (413, 413)
    assert api.json() == {"detail": message}
    assert message in page.content.decode()
    assert not Run.objects.exists()


def test_runs_upload_imports_a_small_upload_and_hands_a_large_one_to_a_job(organiser, settings):
    settings.WORKBENCH_MAX_UPLOAD_BYTES = 10_000
    settings.WORKBENCH_UPLOAD_JOB_BYTES = 30
    campaign = make_campaign()
    small = SimpleUploadedFile("small.txt", b"301 Q0 d1 1 2 small\n")
    [run] = run_services.runs_upload(campaign=campaign, files=[small], uploaded_by=organiser)
    assert run.tag == "small"
    job = run_services.runs_upload(campaign=campaign, files=[big()], uploaded_by=organiser)
    assert isinstance(job, Job)
    assert job.kind == "pooling.jobs.runs_import"
    assert list(Run.objects.values_list("tag", flat=True)) == ["small"]


def test_documents_upload_imports_a_small_file_and_hands_a_large_one_to_a_job(organiser, settings):
    settings.WORKBENCH_MAX_UPLOAD_BYTES = 10_000
    settings.WORKBENCH_UPLOAD_JOB_BYTES = 30
    campaign = make_campaign()
    small = SimpleUploadedFile("docs.tsv", b"d1\tTitle\tText\n")
    result = services.documents_upload(campaign=campaign, file=small)
    assert result.created == 1
    large = SimpleUploadedFile("many.tsv", b"d2\tTitle\tText\n" * 5)
    job = services.documents_upload(campaign=campaign, file=large, uploaded_by=organiser)
    assert isinstance(job, Job)
    assert job.kind == "pooling.jobs.documents_import"
    assert list(Document.objects.values_list("docno", flat=True)) == ["d1"]
