"""An organiser follows the adjudication and history links of odd docnos in a real
browser, which resolves dot segments before it asks: each link opens its own document."""

from __future__ import annotations

import pytest

from judging import services
from tests.helpers import PASSWORD, make_campaign, make_documents, make_pool, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
RELEVANT = {"effectiveness": 3, "credibility": 1}
ODD = ["..", "a/../b", ".", "50%2F?x#y"]


@pytest.fixture
def pool():
    make_user("olivia", organiser=True)
    ann, ben = make_user("ann"), make_user("ben")
    campaign = make_campaign(topics=("1",))
    make_documents(campaign, ["b"])
    pool = make_pool(campaign, {"1": [*ODD, "b"]})
    topic = campaign.topics.get()
    for docno in ODD:
        for user, relevance in ((ann, 0), (ben, 2)):
            services.judgment_record(
                assessor=user,
                topic=topic,
                docno=docno,
                relevance=relevance,
                aspects=RELEVANT if relevance else {},
            )
    return pool


def test_each_odd_docnos_links_open_its_own_pages(page, live_server, pool):
    base = live_server.url
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "olivia")
    page.fill("#id_password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/campaigns/")
    queue = f"{base}/judge/pools/{pool.pk}/adjudication/"
    for docno in ODD:
        page.goto(queue)
        # The row whose document cell is exactly the docno (has_text matches substrings).
        row = page.locator("tr").filter(has=page.locator(f'td.mono:text-is("{docno}")'))
        row.get_by_role("link", name="Adjudicate").click()
        assert page.locator("h1 .mono").inner_text() == docno
        page.get_by_role("link", name="Full history").click()
        assert page.locator("h1 .mono").inner_text() == docno
