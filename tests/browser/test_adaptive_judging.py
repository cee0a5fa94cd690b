"""An assessor judges an adaptive pool in a real browser: each next document is the
strategy's choice, and nothing says which run ranked it where."""

from __future__ import annotations

import pytest

from judging import adaptive, services
from tests.browser.test_judging import press, wait_until_ready
from tests.helpers import PASSWORD, assert_nothing_leaks, make_documents, make_user
from tests.judging.test_adaptive import RUNS, adaptive_pool, reference_order

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_assessor_judges_what_the_strategy_draws(page, live_server, tmp_path):
    adaptive.forget_state()
    page.set_default_timeout(30_000)  # a loaded machine: the first page compiles templates
    pool = adaptive_pool("mtf", budget=12, seed=3)
    make_documents(pool.campaign, {d for run in RUNS.values() for d in run["1"]})
    alice = make_user("alice")
    [assignment] = services.assignments_create(
        pool=pool, topics=pool.campaign.topics.filter(topic_id="1"), assessors=[alice]
    )
    expected = reference_order(pool, "1", 6)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/judge/")
    page.get_by_role("link", name="Continue").click()
    page.get_by_text("Document 1 of 6").wait_for()
    wait_until_ready(page)
    shown = []
    for position, docno in enumerate(expected, 1):
        text = page.locator("main").inner_text()
        assert f"Title of {docno}" in text
        assert_nothing_leaks(page.content(), "good", "poor")
        page.screenshot(path=str(tmp_path / f"adaptive-{position}.png"), full_page=True)
        shown.append(docno)
        key = "1" if docno.startswith("g") else "0"
        if position < len(expected):
            press(page, key, then=f"Document {position + 1} of 6")
        else:
            page.keyboard.press(key)
    assert shown == expected
    # The topic's share of the budget (12 over 2 topics) is spent: nothing more is drawn.
    page.get_by_text("All 6 documents of this topic are judged.").wait_for()
    page.screenshot(path=str(tmp_path / "adaptive-done.png"), full_page=True)
    assert assignment.judgments().count() == 6
    drawn = pool.entries.filter(topic__topic_id="1", sampled=True).order_by("order")
    assert [e.docno for e in drawn] == expected
