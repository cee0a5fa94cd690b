"""Post-edit in a real browser: the machine's label is shown with its warning, nothing
is chosen, the keys still judge, and the judgment records the label shown."""

from __future__ import annotations

import os

import pytest

from judging import machine_services, services
from judging.models import JudgmentEvent
from tests.browser.test_judging import log_in, press, wait_until_ready
from tests.helpers import make_campaign, make_documents, make_pool, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
DOCS = ["d01", "d02", "d03"]


@pytest.fixture
def assignment():
    assessor = make_user("alice")
    campaign = make_campaign(topics=("301",))
    make_documents(campaign, DOCS)
    pool = make_pool(campaign, {"301": DOCS})
    topic = campaign.topics.get()
    baseline = machine_services.machine_baseline(campaign=campaign)
    machine_services.machine_judgments_store(
        machine=baseline,
        labels={(topic.pk, "d01"): {"relevance": 1, "effectiveness": -1, "credibility": -1}},
    )
    services.policy_machine_use_update(pool=pool, queue_order="default", post_edit=True)
    return services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[assessor]
    )[0]


def test_post_edit_shows_the_machine_label_and_the_keys_still_judge(page, live_server, assignment):
    log_in(page, live_server.url)
    page.get_by_role("link", name="Continue").click()
    page.get_by_text("Document 1 of 3").wait_for()
    wait_until_ready(page)
    note = page.locator("#machine-label")
    assert note.is_visible()
    assert "Machine label: Relevant" in note.inner_text()
    assert "(lexical baseline)" in note.inner_text()
    assert "may bias you" in note.inner_text()
    assert page.locator("input[type=radio]:checked").count() == 0
    if os.environ.get("WORKBENCH_SCREENSHOTS"):
        page.screenshot(path=os.path.join(os.environ["WORKBENCH_SCREENSHOTS"], "post_edit.png"))
    press(page, "0", then="Document 2 of 3")
    assert "No machine label for this document." in page.locator("#machine-label").inner_text()
    event = JudgmentEvent.objects.get()
    assert event.new["relevance"] == 0
    assert event.shown_machine_label == {
        "baseline": {"relevance": 1, "effectiveness": -1, "credibility": -1}
    }
