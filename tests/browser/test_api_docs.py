"""/api/docs/ renders the operations list, for a logged-in user, with nothing fetched
from another host."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.browser.test_uploads import log_in_as_organiser

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_swagger_ui_lists_the_operations_offline(page, live_server):
    host = urlsplit(live_server.url).netloc
    elsewhere: list[str] = []

    def only_our_host(route) -> None:
        url = route.request.url
        if urlsplit(url).netloc == host or url.startswith("data:"):
            route.continue_()
        else:
            elsewhere.append(url)
            route.abort()

    page.route("**/*", only_our_host)
    log_in_as_organiser(page, live_server.url)
    page.goto(f"{live_server.url}/api/docs/")
    operation = page.locator(".opblock-summary-path", has_text="/api/campaigns/{slug}/runs/")
    operation.first.wait_for()
    assert page.locator(".opblock").count() > 5
    assert elsewhere == []
