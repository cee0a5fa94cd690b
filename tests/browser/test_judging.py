"""An assessor judges with the keyboard in a real browser; the database agrees."""

from __future__ import annotations

import pytest

from judging import services
from judging.models import DocumentNote, Judgment, JudgmentEvent
from tests.helpers import PASSWORD, make_campaign, make_documents, make_pool, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
DOCS = [f"d{i:02d}" for i in range(1, 9)]


@pytest.fixture
def assignment():
    assessor = make_user("alice")
    campaign = make_campaign(topics=("301",))
    make_documents(campaign, DOCS)
    pool = make_pool(campaign, {"301": DOCS})
    return services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[assessor]
    )[0]


def log_in(page, base_url: str) -> None:
    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base_url}/judge/")


def press(page, *keys: str, then: str) -> None:
    """Press keys, then wait until the page shows `then`."""
    for key in keys:
        page.keyboard.press(key)
    page.get_by_text(then).first.wait_for()
    wait_until_ready(page)


def wait_until_ready(page) -> None:
    """Wait until the judging script has taken over the panel now shown."""
    page.locator("#judge[data-ready]").wait_for(state="attached")


def test_keyboard_judging_undo_revise_and_reload(page, live_server, assignment):
    base = live_server.url
    log_in(page, base)
    page.get_by_role("link", name="Continue").click()
    page.get_by_text("Document 1 of 8").wait_for()
    wait_until_ready(page)
    # The aspect questions appear only once the document is relevant.
    assert not page.locator('fieldset[data-question="effectiveness"]').is_visible()
    page.keyboard.press("2")
    assert page.locator('fieldset[data-question="effectiveness"]').is_visible()
    press(page, "e", "k", then="Document 2 of 8")
    press(page, "0", then="Document 3 of 8")
    press(page, "1", "i", "x", then="Document 4 of 8")
    press(page, "0", then="Document 5 of 8")
    press(page, "2", "c", "k", then="Document 6 of 8")
    assert "5 judged" in page.locator(".judge-progress").inner_text()

    press(page, "u", then="Undone: d05.")
    assert "Document 5 of 8" in page.locator(".judge-progress").inner_text()
    assert "4 judged" in page.locator(".judge-progress").inner_text()

    page.keyboard.press("?")
    assert page.locator("#keymap").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator("#keymap").is_visible()

    page.get_by_role("link", name="Judged documents").click()
    page.locator("tr", has_text="d02").get_by_role("link", name="Reopen").click()
    page.get_by_text("You judged this document before").wait_for()
    wait_until_ready(page)
    press(page, "1", "n", "x", then="Document 5 of 8")

    page.reload()
    assert "4 judged" in page.locator(".judge-progress").inner_text()
    assert "Document 5 of 8" in page.locator(".judge-progress").inner_text()

    stored = {
        j.docno: (j.relevance, j.aspects["effectiveness"], j.aspects["credibility"])
        for j in Judgment.objects.all()
    }
    assert stored == {"d01": (2, 3, 1), "d02": (1, 0, 0), "d03": (1, 1, 0), "d04": (0, -1, -1)}
    assert all(j.seconds > 0 for j in Judgment.objects.all())
    log = list(JudgmentEvent.objects.order_by("id").values_list("docno", "action"))
    assert log == [
        ("d01", "create"),
        ("d02", "create"),
        ("d03", "create"),
        ("d04", "create"),
        ("d05", "create"),
        ("d05", "undo"),
        ("d02", "update"),
    ]


def test_without_javascript_the_form_still_judges(browser, live_server, assignment):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/judge/a/{assignment.pk}/")
    page.get_by_text("Highly relevant (2)").click()
    page.get_by_text("Effective (e)").click()
    page.get_by_text("Credible (k)").click()
    page.get_by_role("button", name="Save and next").click()
    page.get_by_text("Document 2 of 8").wait_for()
    context.close()
    judgment = Judgment.objects.get()
    assert (judgment.docno, judgment.relevance, judgment.aspects) == (
        "d01",
        2,
        {"effectiveness": 3, "credibility": 1},
    )


def test_revising_a_complete_judgment_from_the_keyboard_stores_the_new_labels(
    page, live_server, assignment
):
    """Reopened, a judged document starts from an empty form: the first key
    must not save the old aspects with the new relevance and move on."""
    for docno, relevance, aspects in (
        ("d01", 1, {"effectiveness": 3, "credibility": 1}),
        ("d02", 0, {}),
    ):
        services.judgment_record(
            assessor=assignment.assessor,
            topic=assignment.topic,
            docno=docno,
            relevance=relevance,
            aspects=aspects,
        )
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/judge/a/{assignment.pk}/1/")
    page.get_by_text("You judged this document before").wait_for()
    wait_until_ready(page)
    # The earlier labels are marked, not chosen.
    assert page.locator("input:checked").count() == 0
    assert page.locator("span.previous").count() == 3
    page.keyboard.press("2")
    assert "Document 1 of 8" in page.locator(".judge-progress").inner_text()
    page.keyboard.press("n")
    assert "Document 1 of 8" in page.locator(".judge-progress").inner_text()
    press(page, "x", then="Document 3 of 8")

    assert Judgment.objects.get(docno="d01").labels() == {
        "relevance": 2,
        "effectiveness": 0,
        "credibility": 0,
    }
    assert not Judgment.objects.filter(docno="d03").exists()
    revision = JudgmentEvent.objects.filter(docno="d01", action="update").get()
    assert revision.old == {"relevance": 1, "effectiveness": 3, "credibility": 1}
    assert revision.new == {"relevance": 2, "effectiveness": 0, "credibility": 0}
    assert JudgmentEvent.objects.count() == 3


def test_a_note_and_cannot_judge_from_the_keyboard(page, live_server, assignment):
    log_in(page, live_server.url)
    page.get_by_role("link", name="Continue").click()
    page.get_by_text("Document 1 of 8").wait_for()
    wait_until_ready(page)
    # "/" opens the note; typed keys stay in it; Esc gives the keys back to the labels.
    page.keyboard.press("/")
    page.keyboard.type("only the abstract 0 1 2")
    page.keyboard.press("Escape")
    press(page, "0", then="Document 2 of 8")
    # "!" opens the cannot-judge form on the reason list; Enter sets the document aside.
    page.keyboard.press("!")
    page.keyboard.press("ArrowDown")  # Empty -> Unreadable or garbled
    page.keyboard.press("Enter")
    page.get_by_text("Set aside as cannot judge (unreadable or garbled): d02.").wait_for()
    wait_until_ready(page)
    assert "Document 3 of 8" in page.locator(".judge-progress").inner_text()
    assert "1 judged" in page.locator(".judge-progress").inner_text()

    judged = {j.docno: j.relevance for j in Judgment.objects.all()}
    notes = {n.docno: (n.text, n.cannot_judge) for n in DocumentNote.objects.all()}
    assert judged == {"d01": 0}
    assert notes == {"d01": ("only the abstract 0 1 2", ""), "d02": ("", "unreadable")}
