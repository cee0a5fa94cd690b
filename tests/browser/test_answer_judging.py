"""An assessor judges generated answers by their nuggets from the keyboard in Chromium;
the database agrees. Screenshots go to $ANSWER_SCREENSHOTS when it is set."""

from __future__ import annotations

import os

import pytest

from judging import answer_services
from judging.models import AnswerJudgment, AnswerJudgmentEvent, AnswerNote
from tests.helpers import PASSWORD, make_answer_campaign, make_nuggets, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def assignment():
    assessor = make_user("alice")
    campaign = make_answer_campaign(topics=("1",))
    topic = campaign.topics.get()
    make_nuggets(topic, (("vital", "First fact"), ("okay", "Second fact"), ("vital", "Third fact")))
    return answer_services.answer_assignment_create(topic=topic, assessor=assessor, seed=7)


def shot(page, name: str) -> None:
    folder = os.environ.get("ANSWER_SCREENSHOTS")
    if folder:
        page.screenshot(path=os.path.join(folder, f"{name}.png"), full_page=True)


def ready(page, then: str) -> None:
    page.get_by_text(then).first.wait_for()
    page.locator("#judge[data-ready]").wait_for(state="attached")


def test_an_answer_is_judged_nugget_by_nugget_from_the_keyboard(page, live_server, assignment):
    base = live_server.url
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/judge/")
    page.get_by_role("link", name="Continue").click()
    ready(page, "Answer 1 of 3")
    # The run shows nowhere but in the answer's own words (the test's answers name it).
    outside = page.locator("#judge").inner_text()
    outside = outside.replace(page.locator(".answer-sentences").inner_text(), "")
    assert not any(tag in outside for tag in ("run-a", "run-b", "run-c"))
    page.keyboard.press("s")
    assert page.locator("fieldset.current legend").inner_text().endswith("Second fact")
    page.keyboard.press("p")
    shot(page, "answer-judging-two-labelled")
    page.keyboard.press("Backspace")  # clears "partial" on the second nugget
    assert page.locator("fieldset.current legend").inner_text().endswith("Second fact")
    page.keyboard.press("n")
    page.keyboard.press("s")
    ready(page, "Answer 2 of 3")
    first = AnswerJudgment.objects.get()
    assert first.labels == ["support", "not_support", "support"]
    assert first.answer_id == assignment.answer_ids()[0]
    assert first.seconds > 0

    page.keyboard.press("/")
    page.keyboard.type("Talks around the question")
    page.keyboard.press("Escape")
    for key in ("p", "p", "n"):
        page.keyboard.press(key)
    ready(page, "Answer 3 of 3")
    assert AnswerNote.objects.get().text == "Talks around the question"

    page.keyboard.press("u")
    ready(page, "Undone: answer 2.")
    assert AnswerJudgment.objects.count() == 1
    assert AnswerJudgmentEvent.objects.filter(action="undo").count() == 1

    page.keyboard.press("?")
    assert page.locator("#keymap").is_visible()
    shot(page, "answer-judging-keys")
    page.keyboard.press("Escape")

    page.keyboard.press("!")
    page.locator("[data-cannot-reason]").select_option("unreadable")
    page.keyboard.press("Enter")
    ready(page, "Answer 3 of 3")
    for key in ("s", "s", "s"):
        page.keyboard.press(key)
    ready(page, "Every answer of this topic is judged")
    shot(page, "answer-judging-done")
    assert AnswerJudgment.objects.count() == 2
    assert AnswerNote.objects.exclude(cannot_judge="").count() == 1
