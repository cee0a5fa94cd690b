"""An organiser reads the leaderboard and its pictures in a real browser, with
every request that leaves our server blocked (and counted)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from pooling.models import Pool
from tests.scoring.conftest import judged_demo_pool

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def judged_pool() -> Pool:
    return judged_demo_pool()


def test_the_leaderboard_and_its_pictures_need_nothing_from_outside(page, live_server, judged_pool):
    base = live_server.url
    outside: list[str] = []

    def only_ours(route):
        url = route.request.url
        if url.startswith(base) or url.startswith("data:"):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    page.set_default_timeout(30_000)  # four pictures drawn by a test server
    page.route("**/*", only_ours)
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "organiser")
    page.fill("#id_password", "demo-organiser")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)

    page.goto(base + reverse("scoring:pool_leaderboard", args=[judged_pool.pk]))
    page.select_option('select[name="test"]', "randomization")
    page.get_by_role("button", name="Show").first.click()
    page.wait_for_url(lambda url: "test=randomization" in url, wait_until="domcontentloaded")
    rows = page.locator("table.leaderboard tbody tr")
    assert rows.count() == 8
    assert rows.first.get_attribute("data-run") == "demo-run1"
    # Every picture arrives and is drawn (an SVG from our own view).
    figures = page.locator("figure[data-plot] img")
    assert figures.count() == 5
    for k in range(5):
        figures.nth(k).scroll_into_view_if_needed()
    page.wait_for_function(
        "() => [...document.querySelectorAll('figure[data-plot] img')]"
        ".every(img => img.complete && img.naturalWidth > 0)"
    )
    # Choosing another run redraws the difference-from-median picture for it.
    page.select_option('select[name="run"]', "demo-run8")
    page.get_by_role("button", name="Show").nth(1).click()
    page.wait_for_url(lambda url: "run=demo-run8" in url, wait_until="domcontentloaded")
    median = page.locator('figure[data-plot="median"] img')
    assert "run=demo-run8" in median.get_attribute("src")
    assert page.locator("table.leaderboard tbody tr").count() == 8
    with page.expect_download() as download:
        page.get_by_role("link", name="LATEX").click()
    assert "\\toprule" in Path(download.value.path()).read_text()
    assert outside == []
