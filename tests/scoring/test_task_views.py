"""Task campaign pages: uploads with inline errors, the scores of a subtask sorted by
any column, a submission's documents as the pure core computes them, and who may see them."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

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

PERFECT = b"a\tx1\na\tx2\na\tx3\nb\tx1\n"  # MAP 1, F1 1
WEAK = b"a\tx9\nb\tx1\n"  # MAP (0 + 1) / 2, P 1/2, R 1/4, F1 1/3
DASH = "\u2013"  # where the official scorer gives no value
CODIESP_CODES_SET = codiesp.read_codes(CODIESP_CODES)


def page_url(campaign) -> str:
    return reverse("scoring:task_campaign", args=[campaign.slug])


def scores_url(campaign, subtask: str = "D") -> str:
    return reverse("scoring:task_scores", args=[campaign.slug, subtask])


def table(html: str, css_class: str) -> list[list[str]]:
    """The body rows of the table with that class, each cell's text."""
    body = re.search(rf'<table class="{css_class}">.*?<tbody>(.*?)</tbody>', html, re.S)
    assert body, f"no table {css_class}"
    return [
        [
            re.sub(r"<[^>]+>", "", cell).strip()
            for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        ]
        for row in re.findall(r"<tr>(.*?)</tr>", body[1], re.S)
    ]


def gold_upload(subtask="D", gold=CODIESP_GOLD, codes=(CODIESP_CODES,)) -> dict:
    return {
        "subtask": subtask,
        "file": SimpleUploadedFile("gold.tsv", gold),
        "codes": [SimpleUploadedFile(f"codes{i}.tsv", data) for i, data in enumerate(codes)],
    }


def submission_upload(name: str, data: bytes, subtask="D") -> dict:
    return {"subtask": subtask, "name": name, "file": SimpleUploadedFile(f"{name}.tsv", data)}


# --------------------------------------------------------------------------
# Uploads


def test_an_organiser_uploads_a_gold_and_a_submission(organiser_client, organiser):
    campaign = make_task_campaign()
    response = organiser_client.post(
        reverse("scoring:task_gold_upload", args=[campaign.slug]), gold_upload()
    )
    assert response.url == page_url(campaign)
    response = organiser_client.post(
        reverse("scoring:task_submission_upload", args=[campaign.slug]),
        submission_upload("team-a", CODIESP_RUN),
        follow=True,
    )
    page = response.content.decode()
    assert "Submission team-a (Diagnosis coding (D)) stored." in page
    assert "gold.tsv" in page
    assert "2 clinical cases" in page
    assert TaskGold.objects.get().uploaded_by == organiser
    assert TaskSubmission.objects.get().name == "team-a"


def test_a_rejected_gold_shows_its_problems_and_stores_nothing(organiser_client):
    campaign = make_task_campaign()
    response = organiser_client.post(
        reverse("scoring:task_gold_upload", args=[campaign.slug]),
        gold_upload(gold=b"a\tx1\na\tx2\textra\n"),
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert "Rejected: nothing was stored." in page
    assert "gold.tsv:2: expected 2 tab-separated columns (case&lt;TAB&gt;code), found 3" in page
    assert not TaskGold.objects.exists()


def test_a_rejected_submission_over_htmx_returns_only_its_card(organiser_client):
    campaign = make_task_campaign()
    make_task_gold(campaign)
    response = organiser_client.post(
        reverse("scoring:task_submission_upload", args=[campaign.slug]),
        submission_upload("bad", b"a\t\n"),
        headers={"HX-Request": "true"},
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert page.lstrip().startswith('<section class="card" id="submission-upload">')
    assert "bad.tsv:1: empty code" in page
    assert not TaskSubmission.objects.exists()


def test_a_successful_htmx_upload_refreshes_the_page(organiser_client):
    campaign = make_task_campaign()
    response = organiser_client.post(
        reverse("scoring:task_gold_upload", args=[campaign.slug]),
        gold_upload(),
        headers={"HX-Request": "true"},
    )
    assert (response.status_code, response["HX-Redirect"]) == (204, page_url(campaign))


def test_a_submission_before_its_gold_is_refused(organiser_client):
    campaign = make_task_campaign()
    response = organiser_client.post(
        reverse("scoring:task_submission_upload", args=[campaign.slug]),
        submission_upload("early", CODIESP_RUN, subtask="X"),
    )
    assert response.status_code == 400
    assert "early.tsv: no gold for Explainable coding (X) yet" in response.content.decode()


def test_a_subtask_of_another_task_is_a_form_error(organiser_client):
    campaign = make_task_campaign("sf", task_kind="scifact")
    response = organiser_client.post(
        reverse("scoring:task_gold_upload", args=[campaign.slug]), gold_upload()
    )
    assert response.status_code == 400
    assert "Select a valid choice. D is not one of the available choices." in (
        response.content.decode()
    )


def test_an_oversized_upload_is_refused(organiser_client, settings):
    settings.WORKBENCH_MAX_UPLOAD_BYTES = 10
    campaign = make_task_campaign()
    response = organiser_client.post(
        reverse("scoring:task_gold_upload", args=[campaign.slug]), gold_upload()
    )
    assert response.status_code == 413
    assert not TaskGold.objects.exists()


def test_delete_a_submission(organiser_client):
    campaign = make_task_campaign()
    make_task_gold(campaign)
    submission = make_submission(campaign, "team-a", CODIESP_RUN)
    response = organiser_client.post(
        reverse("scoring:task_submission_delete", args=[campaign.slug, submission.pk])
    )
    assert response.url == page_url(campaign)
    assert not TaskSubmission.objects.exists()


# --------------------------------------------------------------------------
# Scores


@pytest.fixture
def three_teams(db):
    campaign = make_task_campaign()
    make_task_gold(campaign)
    for name, data in (("hand", CODIESP_RUN), ("perfect", PERFECT), ("weak", WEAK)):
        make_submission(campaign, name, data)
    return campaign


@pytest.mark.parametrize(
    ("sort", "order"),
    [
        (None, ["perfect", "weak", "hand"]),  # best first by MAP: 1, 0.5, 0.472
        ("-f1", ["perfect", "hand", "weak"]),  # 1, 0.727, 0.333
        ("recall", ["weak", "hand", "perfect"]),  # 0.25, then 1 and 1 in name order
        ("name", ["hand", "perfect", "weak"]),
        ("-name", ["weak", "perfect", "hand"]),
        ("nonsense", ["perfect", "weak", "hand"]),  # an unknown sort: the default
    ],
)
def test_the_scores_are_sorted_by_the_column_asked(organiser_client, three_teams, sort, order):
    query = {"sort": sort} if sort else {}
    page = organiser_client.get(scores_url(three_teams), query).content.decode()
    assert [row[0] for row in table(page, "task-scores")] == order


def test_the_scores_are_the_official_measures(organiser_client, three_teams):
    page = organiser_client.get(scores_url(three_teams)).content.decode()
    # Sorted by MAP, best first; its heading's link turns the order around.
    assert '<th class="num" aria-sort="descending"><a href="?sort=map"' in page
    rows = {row[0]: row[1:] for row in table(page, "task-scores")}
    core = codiesp.score_ranked(
        codiesp.read_codings(CODIESP_GOLD),
        codiesp.read_codings(CODIESP_RUN),
        codiesp.read_codes(CODIESP_CODES),
    )
    assert rows["hand"] == [
        *(f"{v:.4f}" for v in (core.map, core.precision, core.recall, core.f1)),
        "3",  # clinical cases coded
    ]
    assert rows["hand"][0] == "0.4722"
    assert rows["weak"] == ["0.5000", "0.5000", "0.2500", "0.3333", "2"]


def test_the_scores_download_as_tsv_in_the_pages_order(organiser_client, three_teams):
    response = organiser_client.get(scores_url(three_teams), {"sort": "-f1", "download": "tsv"})
    assert response["Content-Type"] == "text/tab-separated-values"
    assert 'filename="codiesp-D-scores.tsv"' in response["Content-Disposition"]
    lines = [line.split("\t") for line in response.content.decode().splitlines()]
    assert lines[0] == ["submission", "map", "precision", "recall", "f1"]
    page = organiser_client.get(scores_url(three_teams), {"sort": "-f1"}).content.decode()
    assert lines[1:] == [row[:-1] for row in table(page, "task-scores")]  # without the count
    assert "sort=-f1&amp;download=tsv" in page


def test_the_scores_download_writes_formula_like_submission_names_as_text(organiser_client):
    campaign = make_task_campaign()
    make_task_gold(campaign)
    for name in ("=cmd|'/C calc'!A0", "@team", "-2"):
        make_submission(campaign, name, CODIESP_RUN)
    response = organiser_client.get(scores_url(campaign), {"sort": "name", "download": "tsv"})
    rows = [line.split("\t") for line in response.content.decode().splitlines()[1:]]
    assert sorted(row[0] for row in rows) == ["'=cmd|'/C calc'!A0", "'@team", "-2"]
    assert {row[1] for row in rows} == {"0.4722"}


def test_a_submissions_documents_are_the_pure_cores(organiser_client, three_teams):
    submission = TaskSubmission.objects.get(name="hand")
    url = reverse("scoring:task_submission", args=[three_teams.slug, submission.pk])
    page = organiser_client.get(url).content.decode()
    core = codiesp.score_ranked(
        codiesp.read_codings(CODIESP_GOLD),
        codiesp.read_codings(CODIESP_RUN),
        codiesp.read_codes(CODIESP_CODES),
    )

    def shown(value: float) -> str:
        return DASH if value != value else f"{value:.4f}"

    assert table(page, "task-documents") == [
        [case, shown(s.ap), shown(s.precision), shown(s.recall), shown(s.f1)]
        for case, s in core.per_document.items()
    ]
    assert table(page, "task-documents")[2] == ["c", "0.0000", DASH, DASH, DASH]
    assert table(page, "task-summary") == [["0.4722", "0.5714", "1.0000", "0.7273"]]
    by_precision = organiser_client.get(url, {"sort": "-precision"}).content.decode()
    assert [row[0] for row in table(by_precision, "task-documents")] == ["a", "b", "c"]
    by_ap = organiser_client.get(url, {"sort": "ap"}).content.decode()
    assert [row[0] for row in table(by_ap, "task-documents")] == ["c", "b", "a"]


def test_a_scifact_claims_values_are_the_pure_cores(organiser_client):
    campaign = make_task_campaign("sf", task_kind="scifact")
    make_task_gold(campaign, subtask="claims", gold=SCIFACT_CLAIMS, codes=())
    submission = make_submission(campaign, "team-a", SCIFACT_PREDICTIONS, subtask="claims")
    gold = scifact.read_claims(SCIFACT_CLAIMS)
    predictions = scifact.read_predictions(SCIFACT_PREDICTIONS, gold)
    listing = organiser_client.get(scores_url(campaign, "claims")).content.decode()
    overall = scifact.score(gold, predictions)
    assert table(listing, "task-scores") == [
        ["team-a", *(f"{overall[key]:.4f}" for key in scifact.KEYS), "2"]
    ]
    url = reverse("scoring:task_submission", args=[campaign.slug, submission.pk])
    page = organiser_client.get(url).content.decode()
    per_claim = scifact.per_claim(gold, predictions)
    assert table(page, "task-documents") == [
        [str(claim), *(f"{values[key]:.4f}" for key in scifact.KEYS)]
        for claim, values in per_claim.items()
    ]


def test_scores_before_the_gold_say_so(organiser_client):
    campaign = make_task_campaign()
    page = organiser_client.get(scores_url(campaign, "X")).content.decode()
    assert "No gold for Explainable coding (X) yet" in page


# --------------------------------------------------------------------------
# Who may see what


def task_pages(campaign, submission) -> list[str]:
    return [
        page_url(campaign),
        scores_url(campaign),
        reverse("scoring:task_submission", args=[campaign.slug, submission.pk]),
    ]


def task_posts(campaign, submission) -> list[str]:
    return [
        reverse("scoring:task_gold_upload", args=[campaign.slug]),
        reverse("scoring:task_submission_upload", args=[campaign.slug]),
        reverse("scoring:task_submission_delete", args=[campaign.slug, submission.pk]),
    ]


def test_assessors_see_nothing_of_a_task_campaign(assessor_client, three_teams):
    submission = TaskSubmission.objects.first()
    for url in task_pages(three_teams, submission):
        response = assessor_client.get(url)
        assert response.status_code == 403, url
        assert b"0.4722" not in response.content
    for url in task_posts(three_teams, submission):
        assert assessor_client.post(url, gold_upload()).status_code == 403, url
    assert TaskSubmission.objects.count() == 3
    assert TaskGold.objects.count() == 1


def test_anonymous_users_are_sent_to_log_in(client, three_teams):
    submission = TaskSubmission.objects.first()
    for url in task_pages(three_teams, submission):
        response = client.get(url)
        assert response.status_code == 302
        assert response.url.startswith(reverse("login"))


def test_a_ranked_campaign_has_no_task_pages(organiser_client):
    campaign = pooling_services.campaign_create(name="TREC", slug="trec")
    assert organiser_client.get(page_url(campaign)).status_code == 404
    assert organiser_client.get(scores_url(campaign)).status_code == 404


def test_unknown_subtasks_and_other_campaigns_submissions_are_404(organiser_client, three_teams):
    assert organiser_client.get(scores_url(three_teams, "claims")).status_code == 404
    other = make_task_campaign("other")
    submission = TaskSubmission.objects.first()
    url = reverse("scoring:task_submission", args=[other.slug, submission.pk])
    assert organiser_client.get(url).status_code == 404


# --------------------------------------------------------------------------
# Submissions of many bytes: scored by a job


@pytest.fixture
def many_bytes(settings, three_teams):
    """The three teams' submissions are more bytes than a request scores."""
    settings.WORKBENCH_UPLOAD_JOB_BYTES = 10
    cache.clear()
    return three_teams


def start_the_job(client, url, capture, *, execute=True):
    with capture(execute=execute):
        response = client.post(url)
    assert response.status_code == 302
    assert response.url == url
    return Job.objects.get(kind="scoring.jobs.task_scores")  # the name rows store


def test_a_subtask_of_many_bytes_offers_a_job_and_a_get_starts_nothing(
    organiser_client, many_bytes
):
    page = organiser_client.get(scores_url(many_bytes))
    html = page.content.decode()
    assert page.status_code == 200
    assert "Score them" in html
    assert "task-scores" not in html
    assert "No submissions" not in html
    assert not Job.objects.exists()


def test_a_job_scores_a_subtask_of_many_bytes_as_a_request_does(
    organiser_client, many_bytes, settings, django_capture_on_commit_callbacks
):
    url = scores_url(many_bytes)
    job = start_the_job(organiser_client, url, django_capture_on_commit_callbacks)
    assert (job.state, job.unit) == (Job.DONE, "bytes")
    sizes = sum(s.file.size for s in TaskSubmission.objects.all())
    assert job.done == job.total == sizes
    page = organiser_client.get(url).content.decode()
    assert "Scored in the background by" in page
    by_job = table(page, "task-scores")
    settings.WORKBENCH_UPLOAD_JOB_BYTES = 10**9
    cache.clear()
    assert by_job == table(organiser_client.get(url).content.decode(), "task-scores")
    assert [row[0] for row in by_job] == ["perfect", "weak", "hand"]


def test_a_submissions_page_shows_the_jobs_values(
    organiser_client, many_bytes, django_capture_on_commit_callbacks
):
    hand = TaskSubmission.objects.get(name="hand")
    url = reverse("scoring:task_submission", args=[many_bytes.slug, hand.pk])
    waiting = organiser_client.get(url).content.decode()
    assert "Score them" in waiting
    assert "task-documents" not in waiting
    start_the_job(organiser_client, url, django_capture_on_commit_callbacks)
    rows = table(organiser_client.get(url).content.decode(), "task-documents")
    core = codiesp.score_ranked(
        codiesp.read_codings(CODIESP_GOLD), codiesp.read_codings(CODIESP_RUN), CODIESP_CODES_SET
    )
    assert [row[0] for row in rows] == list(core.per_document)
    assert rows[0][1] == f"{core.per_document['a'].ap:.4f}"


def test_the_page_shows_the_job_while_it_runs_and_its_progress(
    organiser_client, many_bytes, django_capture_on_commit_callbacks
):
    url = scores_url(many_bytes)
    job = start_the_job(organiser_client, url, django_capture_on_commit_callbacks, execute=False)
    Job.objects.filter(pk=job.pk).update(state=Job.RUNNING, done=40, total=100, unit="bytes")
    page = organiser_client.get(url)
    html = page.content.decode()
    assert page.status_code == 200
    assert "Scoring the submissions in the background" in html
    assert "40 of 100 bytes read" in html
    assert 'hx-trigger="every 2s"' in html


def test_a_failed_job_leaves_the_page_working_with_the_reason_and_a_retry(
    organiser_client, many_bytes, django_capture_on_commit_callbacks, monkeypatch
):
    url = scores_url(many_bytes)

    def broken(*args, **kwargs):
        raise ValueError("the disk is gone")

    monkeypatch.setattr(subtasks, "score", broken)
    job = start_the_job(organiser_client, url, django_capture_on_commit_callbacks)
    assert job.state == Job.FAILED
    page = organiser_client.get(url)
    html = page.content.decode()
    assert page.status_code == 200
    assert "The last attempt failed: the disk is gone" in html
    assert "Score them" in html
    monkeypatch.undo()
    with django_capture_on_commit_callbacks(execute=True):
        organiser_client.post(url)
    assert Job.objects.latest("created_at").state == Job.DONE
    assert table(organiser_client.get(url).content.decode(), "task-scores")


def test_a_new_submission_makes_the_jobs_scores_out_of_date(
    organiser_client, many_bytes, django_capture_on_commit_callbacks
):
    url = scores_url(many_bytes)
    start_the_job(organiser_client, url, django_capture_on_commit_callbacks)
    make_submission(many_bytes, "late", PERFECT)
    html = organiser_client.get(url).content.decode()
    assert "Out of date" in html
    assert "task-scores" not in html


def test_a_job_refuses_to_score_a_subtask_changed_since_it_was_asked(
    organiser_client, many_bytes, django_capture_on_commit_callbacks
):
    job = start_the_job(
        organiser_client, scores_url(many_bytes), django_capture_on_commit_callbacks, execute=False
    )
    make_submission(many_bytes, "late", PERFECT)
    run_job.call(job.pk)
    job.refresh_from_db()
    assert job.state == Job.FAILED
    assert "changed since this job was started: score them again" in job.error


def test_a_submission_is_replaced_from_its_page_and_a_refused_file_changes_nothing(
    organiser_client,
):
    campaign = make_task_campaign()
    make_task_gold(campaign)
    submission = make_submission(campaign, "team-a", CODIESP_RUN)
    url = reverse("scoring:task_submission_replace", args=[campaign.slug, submission.pk])
    page = reverse("scoring:task_submission", args=[campaign.slug, submission.pk])
    assert url in organiser_client.get(page).content.decode()
    refused = organiser_client.post(url, {"file": SimpleUploadedFile("bad.tsv", b"a x1\n")})
    assert refused.status_code == 400
    assert "bad.tsv:1: expected 2 tab-separated columns" in refused.content.decode()
    assert TaskSubmission.objects.get().sha256 == submission.sha256
    done = organiser_client.post(url, {"file": SimpleUploadedFile("v2.tsv", b"a\tx1\n")})
    assert done.url == page
    text = organiser_client.get(page).content.decode()
    assert "Submission team-a replaced by v2.tsv." in text
    assert TaskSubmission.objects.get().original_name == "v2.tsv"
