"""An organiser downloads the qrels of a TREC DL-like pool in a real browser."""

from __future__ import annotations

import zipfile

import pytest
from django.urls import reverse

from judging import services
from judging.core.judgment_files import ImportedJudgment
from tests.helpers import PASSWORD, make_campaign, make_pool, make_user
from workbench.core.label_schema import SCHEMA_PRESETS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def graded_pool():
    make_user("olivia", organiser=True)
    campaign = make_campaign(
        "dl", topics=("1", "2"), label_schema=SCHEMA_PRESETS["graded-0-3"].schema()
    )
    pool = make_pool(campaign, {"1": ["d1", "d2"], "2": ["d3"]})
    rows = [ImportedJudgment("nist", t, d, r) for t, d, r in (("1", "d1", 3), ("2", "d3", 0))]
    services.judgments_import(campaign=campaign, rows=rows, create_assessors=True)
    return pool


def test_the_bundle_offers_only_what_the_pool_can_produce(page, live_server, graded_pool):
    base = live_server.url
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "olivia")
    page.fill("#id_password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    page.goto(base + reverse("scoring:pool_qrels", args=[graded_pool.pk]))
    boxes = page.locator('input[name="formats"]')
    ticked = {box.get_attribute("value") for box in boxes.all() if box.is_checked()}
    disabled = {box.get_attribute("value") for box in boxes.all() if box.is_disabled()}
    assert ticked == {"qrels", "relevance", "stratified", "infap"}  # every available format
    assert disabled == {"aspects", "correctness", "twoaspects", "threeaspects"}
    assert page.get_by_text("Not available: correctness needs the aspects").is_visible()
    # The bundle is made by a background job; its page offers the file.
    page.get_by_role("button", name="Export the bundle").click()
    link = page.get_by_role("link", name=f"Download dl-pool{graded_pool.pk}-qrels.zip")
    link.wait_for()
    with page.expect_download() as download:
        link.click()
    assert "qrels_infap.txt" in zipfile.ZipFile(download.value.path()).namelist()
