"""An adaptive pool's budget re-planned in a browser: the Re-plan button, a
preview with the forecast, then the budget set."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from pooling import pool_services
from pooling.core.spec import PoolSpec
from pooling.models import Pool
from tests.browser.test_uploads import log_in_as_organiser
from tests.helpers import make_campaign, make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_organiser_raises_an_adaptive_pools_budget(page, live_server):
    campaign = make_campaign(judgment_budget=100)
    make_run(campaign, "a", {"301": ["d1", "d2", "d3"], "302": ["d4", "d5"]})
    make_run(campaign, "b", {"301": ["d3", "d6"], "302": ["d5", "d7"]})
    pool = pool_services.pool_build(
        campaign=campaign, spec=PoolSpec(depth=3, strategy="mtf", budget=4)
    )
    log_in_as_organiser(page, live_server.url)
    page.goto(f"{live_server.url}/campaigns/{campaign.slug}/pools/{pool.pk}/")
    page.get_by_role("link", name="Re-plan").click()
    page.fill("#budget-form input[name=budget]", "0")
    # The browser itself refuses a budget below 1 (the server does too: a 400).
    assert not page.eval_on_selector("#budget-form input[name=budget]", "e => e.validity.valid")
    page.fill("#budget-form input[name=budget]", "6")
    page.click("#budget-form button[type=submit]")
    preview = page.locator("#budget-preview")
    assert "Budget 4 → 6 judgments; documents still to judge: +2." in preview.inner_text()
    # The forecast with the change replaces its placeholder (htmx).
    expect(preview).not_to_contain_text("loading")
    shot = os.environ.get("REPLAN_SCREENSHOT")
    if shot:
        page.screenshot(path=shot, full_page=True)
    page.click("#budget-preview button.primary")
    page.wait_for_url(f"**/pools/{pool.pk}/")
    assert "judging budget 4 -> 6 judgments" in page.content().replace("&gt;", ">")
    assert Pool.objects.get(pk=pool.pk).spec["budget"] == 6
