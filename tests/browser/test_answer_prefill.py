"""An assessor post-edits a machine's pre-filled nugget labels from the keyboard in
Chromium: each key confirms or changes the highlighted nugget, the answer is saved
after the last, and the judgment records the pre-fill. Screenshots go to
$ANSWER_SCREENSHOTS when it is set."""

from __future__ import annotations

import os

import pytest

from judging import answer_machine_services, answer_services
from judging.models import AnswerJudgment, AnswerJudgmentEvent
from tests.helpers import PASSWORD, make_answer_campaign, make_nuggets, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def assignment():
    assessor = make_user("alice")
    campaign = make_answer_campaign(topics=("1",))
    topic = campaign.topics.get()
    make_nuggets(topic, (("vital", "says one thing"), ("okay", "penguins fly south")))
    assignment = answer_services.answer_assignment_create(topic=topic, assessor=assessor, seed=7)
    machine = answer_machine_services.machine_named(campaign=campaign, name="baseline")
    answer_machine_services.machine_answers_assign(machine=machine, campaign=campaign)
    answer_machine_services.answer_prefill_set(campaign=campaign, machine=machine)
    return assignment


def shot(page, name: str) -> None:
    folder = os.environ.get("ANSWER_SCREENSHOTS")
    if folder:
        page.screenshot(path=os.path.join(folder, f"{name}.png"), full_page=True)


def ready(page, then: str) -> None:
    page.get_by_text(then).first.wait_for()
    page.locator("#judge[data-ready]").wait_for(state="attached")


def test_a_prefilled_answer_is_checked_nugget_by_nugget(page, live_server, assignment):
    base = live_server.url
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/judge/")
    page.goto(f"{base}/judge/answers/a/{assignment.pk}/")
    ready(page, "Answer 1 of 3")
    assert page.get_by_text("Pre-filled by a machine: check every label").is_visible()
    assert page.locator('input[name="n1"][value="support"]').is_checked()
    assert page.locator('input[name="n2"][value="not_support"]').is_checked()
    assert page.locator("fieldset.current legend").inner_text().endswith("says one thing")
    shot(page, "answer-prefill")
    page.locator('label:has(input[name="n2"][value="partial_support"])').click()  # saves nothing
    assert AnswerJudgment.objects.filter(assessor__username="alice").count() == 0
    page.keyboard.press("s")  # confirms nugget 1
    assert page.locator("fieldset.current legend").inner_text().endswith("penguins fly south")
    page.keyboard.press("n")  # changes nugget 2 back, and saves
    ready(page, "Answer 2 of 3")
    judgment = AnswerJudgment.objects.get(assessor__username="alice")
    assert judgment.labels == ["support", "not_support"]
    assert judgment.prefilled_from == "machine.rag.baseline"
    assert AnswerJudgmentEvent.objects.get(assessor__username="alice").prefilled_from


def test_the_organiser_proposes_nuggets_with_the_baseline_then_edits_them(page, live_server):
    from judging.models import NuggetList

    make_user("olivia", organiser=True)
    campaign = make_answer_campaign(topics=("1",))
    topic = campaign.topics.get()
    base = live_server.url
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "olivia")
    page.fill("#id_password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    page.goto(f"{base}/judge/campaigns/{campaign.slug}/nuggets/{topic.pk}/")
    page.get_by_role("button", name="Propose nuggets with baseline").click()
    page.get_by_text("The current version is a machine's proposal").wait_for()
    shot(page, "nuggets-proposed")
    proposed = NuggetList.objects.get()
    assert proposed.note.startswith("machine pre-fill by baseline")
    page.fill("textarea[name=text]", "vital: run says one thing\nokay: and another")
    page.get_by_role("button", name="Save as a new version").click()
    page.get_by_text("saved as version 2").wait_for()
    assert NuggetList.objects.get(version=2).created_by.username == "olivia"
