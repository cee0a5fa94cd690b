"""An organiser watches the dashboard while an assessor judges in another browser,
then shrinks the unfinished topic; the assessor's queue changes on the next document."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from judging import services as judging
from judging.models import Assignment
from pooling import pool_services
from pooling.core.spec import PoolSpec
from pooling.models import PoolRevision
from tests.helpers import PASSWORD, make_campaign, make_documents, make_run, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
DOCS = [f"d{i:02d}" for i in range(1, 11)]


@pytest.fixture
def campaign(settings):
    settings.WORKBENCH_DASHBOARD_REFRESH_SECONDS = 1
    make_user("boss", organiser=True)
    alice = make_user("alice")
    campaign = make_campaign("dec", topics=("301", "302"), judgment_budget=30)
    make_documents(campaign, DOCS)
    make_run(campaign, "r1", {"301": DOCS, "302": DOCS})
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=10, order="docno"))
    first, _ = judging.assignments_create(
        pool=pool, topics=list(campaign.topics.all()), assessors=[alice]
    )
    for docno in DOCS:  # topic 301 is finished
        judging.judgment_submit(assignment=first, docno=docno, relevance=0, aspects={})
    return campaign


def log_in(page, base_url: str, username: str) -> None:
    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/login/" not in url)


def judge_not_relevant(page, then: str) -> None:
    page.locator("#judge[data-ready]").wait_for(state="attached")
    page.keyboard.press("0")
    page.get_by_text(then).first.wait_for()


def stat(page, name: str):
    return page.locator(f'[data-stat="{name}"]')


def test_the_dashboard_moves_while_judging_and_a_shrink_reaches_the_queue(
    browser, live_server, campaign
):
    base = live_server.url
    boss = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    alice = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    for page in (boss, alice):
        page.set_default_timeout(10_000)
    log_in(boss, base, "boss")
    boss.goto(f"{base}/judge/campaigns/dec/dashboard/")
    assert stat(boss, "spent").inner_text() == "10"
    assert stat(boss, "left").inner_text() == "10"

    log_in(alice, base, "alice")
    second = Assignment.objects.get(topic__topic_id="302")
    alice.goto(f"{base}/judge/a/{second.pk}/")
    alice.get_by_text("Document 1 of 10").wait_for()
    judge_not_relevant(alice, "Document 2 of 10")
    judge_not_relevant(alice, "Document 3 of 10")

    # The dashboard refreshes itself: no reload.
    expect(stat(boss, "spent")).to_have_text("12")
    # A poll answered late can show the state before for a second (CI, under load):
    # wait for the numbers to settle rather than read them once.
    expect(stat(boss, "left")).to_have_text("8")
    assert "2" in boss.locator('tr[data-topic="302"]').inner_text()

    # Shrink the unfinished topic (302) to depth 4.
    boss.goto(f"{base}/campaigns/dec/pools/{second.pool_id}/replan/")
    boss.fill('input[name="depth"]', "4")
    boss.fill('input[name="reason"]', "budget ran short")
    boss.get_by_role("button", name="Preview").click()
    preview = boss.locator("table", has_text="Leaving the queue")
    assert "302" in preview.inner_text()
    assert "301" not in preview.inner_text()
    boss.get_by_role("button", name="Apply this revision").click()
    boss.get_by_text("Done").first.wait_for()
    revision = PoolRevision.objects.get(number=2)
    assert (revision.topics, revision.reason) == (["302"], "budget ran short")

    # Alice still has d03 open; the next document tells her the queue is shorter.
    judge_not_relevant(alice, "Document 4 of 4")
    boss.goto(f"{base}/judge/campaigns/dec/dashboard/")
    assert stat(boss, "spent").inner_text() == "13"
    assert stat(boss, "left").inner_text() == "1"
    for page in (boss, alice):
        page.context.close()


def test_every_column_of_the_assessors_card_shows_at_1366_pixels(browser, live_server, campaign):
    """Issue 23: the Assessors card clipped its Queue column on a 1366-pixel screen."""
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    log_in(page, live_server.url, "boss")
    page.goto(f"{live_server.url}/judge/campaigns/{campaign.slug}/dashboard/")
    card = page.locator("section.card", has=page.get_by_role("heading", name="Assessors"))
    queue = card.locator('tr[data-assessor="alice"] td').last
    expect(queue).to_contain_text("10 / 20")
    inside, cell = card.bounding_box(), queue.bounding_box()
    assert cell["x"] + cell["width"] <= inside["x"] + inside["width"]
    sizes = card.locator("table").evaluate("t => [t.scrollWidth, t.parentElement.clientWidth]")
    assert sizes[0] <= sizes[1]  # nothing to scroll to either
