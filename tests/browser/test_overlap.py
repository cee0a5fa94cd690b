"""The overlap preview in a real browser: its cost tables side by side."""

from __future__ import annotations

import pytest

from judging import services
from tests.helpers import PASSWORD, make_campaign, make_pool, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_assessors_cost_rows_keep_their_height_beside_a_long_topic_list(page, live_server):
    """Issue 23's walkthrough: with 43 topics beside two assessors, the assessors'
    table stretched to the topics' height, 'bob' half a page below 'alice'."""
    make_user("boss", organiser=True)
    ann, ben = make_user("ann"), make_user("ben")
    topics = [str(n) for n in range(1, 21)]
    campaign = make_campaign(topics=tuple(topics))
    pool = make_pool(campaign, {t: [f"d{t}-{k}" for k in range(4)] for t in topics})
    services.assignments_create(pool=pool, topics=list(campaign.topics.all()), assessors=[ann])
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "boss")
    page.fill("#id_password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    page.goto(
        f"{live_server.url}/judge/pools/{pool.pk}/overlap/"
        f"?k=2&fraction=1&seed=0&assessors={ann.pk}&assessors={ben.pk}"
    )
    ann_row = page.locator("tr", has=page.locator("td", has_text="ann")).bounding_box()
    ben_row = page.locator("tr", has=page.locator("td", has_text="ben")).bounding_box()
    topic_row = page.locator("tr", has=page.locator("td", has_text="20")).bounding_box()
    assert ann_row["height"] < 2 * topic_row["height"]
    assert ben_row["y"] - ann_row["y"] < 2 * topic_row["height"]
