"""The main pages under the Content-Security-Policy in a real browser: no violation.

Chromium reports every blocked script, style, image or connection as a
`securitypolicyviolation` event and a console error; any one fails the test.
The pages must also still work: htmx swaps, the agreement page's selects
submit, Swagger UI lists the operations.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from judging import services as judging
from pooling import pool_services
from pooling.core.spec import PoolSpec
from tests.browser.test_judging import wait_until_ready
from tests.helpers import PASSWORD, make_campaign, make_documents, make_run, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DOCS = ["d1", "d2", "d3", "d4"]
# Runs in the page before its own scripts: Playwright injects it past the policy.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI || "inline"}`);
});
"""


@pytest.fixture
def violations(page):
    found: list[str] = []
    page.add_init_script(REPORT_VIOLATIONS)

    def on_console(message) -> None:
        text = message.text
        if "Content Security Policy" in text or "CSP violation" in text:
            found.append(f"{page.url}: {text}")

    page.on("console", on_console)
    return found


@pytest.fixture
def campaign_site():
    organiser = make_user("olivia", organiser=True)
    alice, bob = make_user("alice"), make_user("bob")
    campaign = make_campaign(topics=("301",))
    make_documents(campaign, DOCS)
    make_run(campaign, "bm25", {"301": DOCS})
    make_run(campaign, "dense", {"301": DOCS[::-1]})
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=4), created_by=organiser)
    topic = campaign.topics.get()
    assignment = judging.assignments_create(pool=pool, topics=[topic], assessors=[alice])[0]
    # Two assessors' labels on the same documents, for the agreement page.
    for docno, relevance in zip(DOCS[:3], (0, 1, 2), strict=True):
        for user, shift in ((alice, 0), (bob, 1)):
            aspects = {"effectiveness": 1, "credibility": 1} if (relevance + shift) % 3 else {}
            judging.judgment_record(
                assessor=user,
                topic=topic,
                docno=docno,
                relevance=(relevance + shift) % 3,
                aspects=aspects,
            )
    return {"campaign": campaign, "pool": pool, "assignment": assignment, "alice": alice}


def log_in(page, base: str, username: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def test_organiser_pages_run_under_the_policy(page, live_server, violations, campaign_site):
    base = live_server.url
    slug, pool = campaign_site["campaign"].slug, campaign_site["pool"]
    log_in(page, base, "olivia")

    page.goto(base + reverse("pooling:campaign_detail", args=[slug]))
    page.locator("#run-upload").wait_for()

    page.goto(base + reverse("pooling:pool_detail", args=[slug, pool.pk]))
    page.locator("table.overlap").wait_for()

    # The what-if table is swapped in by htmx as the depth changes.
    page.goto(base + reverse("pooling:pool_new", args=[slug]))
    before = page.locator("#whatif").inner_text()
    page.fill("input[name=depth]", "2")
    page.wait_for_function(
        "before => document.querySelector('#whatif').innerText !== before", arg=before
    )

    # The agreement page's selects submit their form by themselves.
    page.goto(base + reverse("judging:pool_agreement", args=[pool.pk]))
    page.select_option("select[name=statistic]", "observed_agreement")
    page.wait_for_url(lambda url: "statistic=observed_agreement" in url)

    page.goto(base + reverse("admin:auth_user_change", args=[campaign_site["alice"].pk]))
    page.locator("#user_form").wait_for()

    page.goto(base + reverse("api-docs"))
    operation = page.locator(".opblock-summary-path", has_text="/api/campaigns/{slug}/runs/")
    operation.first.wait_for()
    operation.first.click()
    page.locator(".opblock-body").first.wait_for()

    assert violations == []


def test_judging_from_the_keyboard_runs_under_the_policy(
    page, live_server, violations, campaign_site
):
    base = live_server.url
    log_in(page, base, "alice")
    page.goto(base + reverse("judging:judge_next", args=[campaign_site["assignment"].pk]))
    wait_until_ready(page)
    first = page.locator(".judge-progress").inner_text()
    page.keyboard.press("0")
    page.wait_for_function(
        "first => document.querySelector('.judge-progress').innerText !== first", arg=first
    )
    wait_until_ready(page)
    assert violations == []


def test_a_violation_is_caught(page, live_server, violations):
    """The check itself: an inline script without the nonce is reported."""
    page.goto(f"{live_server.url}/accounts/login/")
    page.evaluate(
        "() => { const s = document.createElement('script');"
        " s.textContent = 'window.ran = true'; document.body.append(s); }"
    )
    page.wait_for_timeout(200)
    assert page.evaluate("window.ran") is None
    assert violations
