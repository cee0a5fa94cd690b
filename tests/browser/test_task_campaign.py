"""An organiser scores a CodiEsp campaign in a real browser: gold, submission, scores."""

from __future__ import annotations

import pytest

from scoring.models import TaskGold, TaskSubmission
from tests.browser.test_uploads import log_in_as_organiser
from tests.helpers import CODIESP_CODES, CODIESP_GOLD, CODIESP_RUN, make_task_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def tsv(name: str, data: bytes) -> dict:
    return {"name": name, "mimeType": "text/tab-separated-values", "buffer": data}


def test_upload_gold_and_a_submission_then_read_the_scores(page, live_server):
    campaign = make_task_campaign()
    log_in_as_organiser(page, live_server.url)
    page.goto(f"{live_server.url}/campaigns/{campaign.slug}/")  # the task page answers

    gold = page.locator("#gold-upload")
    gold.get_by_label("Subtask").select_option("D")
    gold.get_by_label("Gold file").set_input_files(files=[tsv("gold-d.tsv", CODIESP_GOLD)])
    gold.get_by_label("Valid-code lists").set_input_files(files=[tsv("codes-d.tsv", CODIESP_CODES)])
    gold.get_by_role("button", name="Upload gold").click()
    page.get_by_text("Gold of Diagnosis coding (D) stored from gold-d.tsv.").wait_for()

    card = page.locator("#submission-upload")
    card.get_by_label("Subtask").select_option("D")
    card.get_by_label("Name").fill("team-a")
    card.get_by_label("Submission file").set_input_files(files=[tsv("bad.tsv", b"a\tx1\tx2\n")])
    card.get_by_role("button", name="Upload submission").click()
    page.get_by_text("Rejected: nothing was stored.").wait_for()
    assert "bad.tsv:1: expected 2 tab-separated columns" in card.inner_text()

    card = page.locator("#submission-upload")
    card.get_by_label("Subtask").select_option("D")
    card.get_by_label("Name").fill("team-a")
    card.get_by_label("Submission file").set_input_files(files=[tsv("run.tsv", CODIESP_RUN)])
    card.get_by_role("button", name="Upload submission").click()
    page.get_by_text("Submission team-a (Diagnosis coding (D)) stored.").wait_for()

    page.get_by_role("link", name="Scores: Diagnosis coding (D)").click()
    row = page.locator("table.task-scores tbody tr")
    row.wait_for()
    assert row.inner_text().split() == ["team-a", "0.4722", "0.5714", "1.0000", "0.7273", "3"]

    row.get_by_role("link", name="team-a").click()
    page.locator("table.task-documents").wait_for()
    first = page.locator("table.task-documents tbody tr").first
    assert first.inner_text().split() == ["a", "0.9167", "0.7500", "1.0000", "0.8571"]
    assert TaskGold.objects.count() == 1
    assert list(TaskSubmission.objects.values_list("name", flat=True)) == ["team-a"]
