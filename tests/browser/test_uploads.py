"""An organiser uploads files on the campaign page; errors appear in place."""

from __future__ import annotations

import pytest

from pooling.models import Run
from tests.helpers import PASSWORD, make_campaign, make_user, run_text

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def log_in_as_organiser(page, base_url: str) -> None:
    make_user("olivia", organiser=True)
    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", "olivia")
    page.fill("#id_password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base_url}/campaigns/")


@pytest.mark.parametrize("debug", [True, False], ids=["debug", "production"])
def test_a_rejected_upload_shows_its_errors_inside_the_page(page, live_server, settings, debug):
    """With DEBUG on, django-htmx's debug script used to replace the whole page
    with the bare error fragment (no styles, no navigation)."""
    settings.DEBUG = debug
    campaign = make_campaign()
    log_in_as_organiser(page, live_server.url)
    page.goto(f"{live_server.url}/campaigns/{campaign.slug}/")
    card = page.locator("#run-upload")
    card.locator("input[type=file]").set_input_files(
        files=[{"name": "bad.txt", "mimeType": "text/plain", "buffer": b"999 Q0 d1 1 1 t\n"}]
    )
    card.get_by_role("button", name="Upload runs").click()
    page.get_by_text("Rejected: nothing was stored.").wait_for()
    assert "bad.txt:1: topic '999' is not a topic of this campaign" in card.inner_text()
    # The rest of the page is still there, styled, and the busy note is gone.
    assert page.locator("header.topbar").is_visible()
    assert page.locator("#document-upload").is_visible()
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(245, 247, 250)"
    assert not page.get_by_text("Checking and importing…").is_visible()
    assert not Run.objects.exists()


def test_keep_valid_upload_refreshes_the_run_list_and_lists_the_rejected(page, live_server):
    campaign = make_campaign()
    log_in_as_organiser(page, live_server.url)
    page.goto(f"{live_server.url}/campaigns/{campaign.slug}/")
    card = page.locator("#run-upload")
    card.locator("input[type=file]").set_input_files(
        files=[
            {
                "name": "good.txt",
                "mimeType": "text/plain",
                "buffer": run_text("good", {"301": ["d1"]}),
            },
            {"name": "bad.txt", "mimeType": "text/plain", "buffer": b"999 Q0 d1 1 1 bad\n"},
        ]
    )
    card.get_by_label("Store the valid files even if others are rejected").check()
    card.get_by_role("button", name="Upload runs").click()
    page.get_by_text("Stored 1 run(s): good.").wait_for()
    assert "These files were rejected and not stored." in page.locator("#run-upload").inner_text()
    assert page.locator("td.mono", has_text="good").is_visible()
    assert page.get_by_role("link", name="New pool").is_visible()
    page.screenshot(path="/tmp/keep-valid.png", full_page=True)
    assert list(Run.objects.values_list("tag", flat=True)) == ["good"]
