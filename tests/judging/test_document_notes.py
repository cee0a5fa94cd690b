"""The assessor's voice: a note on any document, and "cannot judge" with a reason.

A set-aside document is not a judgment: no budget spent, still pooled but
unjudged (-1 in the infAP layout), out of the assessor's queue, listed for
the organiser, shown in the document's history and on the adjudication page.
"""

from __future__ import annotations

import json
import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from judging import services
from judging.models import Assignment, DocumentNote, Judgment
from judging.status import campaign_status
from pooling.selectors import campaign_budget
from scoring.export_selectors import qrels_file
from tests.helpers import make_campaign, make_documents, make_pool, make_replanned_assignments
from workbench.core.label_schema import DEFAULT_LABEL_SCHEMA, schema_problems

pytestmark = pytest.mark.django_db

RELEVANT = {"relevance": "2", "effectiveness": "3", "credibility": "1"}


@pytest.fixture
def assignment(assessor) -> Assignment:
    campaign = make_campaign(judgment_budget=10)
    make_documents(campaign, ["d1", "d2", "d3"])
    pool = make_pool(campaign, {"301": ["d1", "d2", "d3"]})
    return services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[assessor]
    )[0]


def judge_url(assignment: Assignment, position: int, action: str = "judge") -> str:
    return reverse(f"judging:{action}", args=[assignment.pk, position])


def set_aside(client, assignment, position=1, **data):
    return client.post(
        judge_url(assignment, position, "judge_cannot"), {"reason": "unreadable", **data}
    )


def test_a_note_is_saved_with_the_judgment_and_shown_again(assessor_client, assignment):
    response = assessor_client.post(judge_url(assignment, 1), {**RELEVANT, "note": " Half in OCR "})
    assert response.status_code == 302
    note = DocumentNote.objects.get()
    assert (note.docno, note.text, note.cannot_judge) == ("d1", "Half in OCR", "")
    page = assessor_client.get(judge_url(assignment, 1)).content.decode()
    assert ">Half in OCR</textarea>" in page
    # Sent blank with a revision, the note is cleared; the judgment stays one row.
    assessor_client.post(judge_url(assignment, 1), {**RELEVANT, "note": ""})
    assert DocumentNote.objects.get().text == ""
    assert Judgment.objects.count() == 1


def test_an_overlong_note_is_refused_and_nothing_is_stored(assessor_client, assignment):
    response = assessor_client.post(judge_url(assignment, 1), {**RELEVANT, "note": "x" * 2001})
    assert response.status_code == 400
    assert "Note: Ensure this value has at most 2000 characters" in response.content.decode()
    assert not Judgment.objects.exists()
    assert not DocumentNote.objects.exists()


def test_cannot_judge_sets_the_document_aside_without_spending_budget(assessor_client, assignment):
    response = set_aside(assessor_client, assignment, text="scanned upside down")
    assert response.status_code == 302
    assert response.url == judge_url(assignment, 2)
    note = DocumentNote.objects.get()
    assert (note.docno, note.cannot_judge, note.text) == ("d1", "unreadable", "scanned upside down")
    assert not Judgment.objects.exists()
    assert campaign_budget(assignment.topic.campaign).spent == 0
    # Out of the queue: "continue" skips it, and the progress counts no judgment.
    assert assignment.next_unjudged().docno == "d2"
    assert assignment.progress() == (0, 3)


def test_the_queue_ends_by_naming_what_was_set_aside(assessor_client, assignment):
    set_aside(assessor_client, assignment, 1)
    for position in (2, 3):
        assessor_client.post(judge_url(assignment, position), {"relevance": "0"})
    page = assessor_client.get(reverse("judging:judge_next", args=[assignment.pk]))
    text = page.content.decode()
    assert "Every document of this topic is judged or set aside." in text
    assert "1 document set aside as cannot judge (d1)" in text


def test_a_set_aside_document_stays_pooled_but_unjudged_in_the_export(assessor_client, assignment):
    set_aside(assessor_client, assignment, 1)
    assessor_client.post(judge_url(assignment, 2), RELEVANT)
    infap = qrels_file(pool=assignment.pool, fmt="infap").text.splitlines()
    assert "301 0 d1 -1" in infap
    assert "301 0 d2 2" in infap
    assert not any(
        " d1 " in line for line in qrels_file(pool=assignment.pool, fmt="qrels").text.splitlines()
    )


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"reason": "other", "text": ""}, "say in a few words why"),
        ({"reason": "bored"}, "reason: Select a valid choice"),
        ({"reason": "empty", "text": "y" * 2001}, "text: Ensure this value has at most 2000"),
    ],
)
def test_a_bad_cannot_judge_is_a_400_that_says_why(assessor_client, assignment, data, reason):
    response = assessor_client.post(judge_url(assignment, 1, "judge_cannot"), data)
    assert response.status_code == 400
    assert reason in response.content.decode()
    assert not DocumentNote.objects.exists()


def test_a_judged_document_is_revised_not_set_aside(assessor_client, assignment):
    assessor_client.post(judge_url(assignment, 1), RELEVANT)
    response = set_aside(assessor_client, assignment, 1)
    assert response.status_code == 400
    assert (
        "you judged this document: revise or undo the judgment instead" in response.content.decode()
    )
    assert not DocumentNote.objects.exists()
    assert Judgment.objects.get().relevance == 2


def test_judging_a_set_aside_document_takes_it_back_and_keeps_the_note(assessor_client, assignment):
    set_aside(assessor_client, assignment, 1, text="login wall, found a mirror")
    assessor_client.post(judge_url(assignment, 1), {"relevance": "0"})
    note = DocumentNote.objects.get()
    assert (note.cannot_judge, note.text) == ("", "login wall, found a mirror")
    assert campaign_status(assignment.topic.campaign).set_aside == []


def test_nobody_sets_aside_in_another_assessors_queue(client, assessor2, assignment):
    client.force_login(assessor2)
    assert set_aside(client, assignment, 1).status_code == 404
    assert not DocumentNote.objects.exists()


def test_the_organiser_sees_the_list_and_gives_the_document_back(
    assessor_client, organiser, assignment
):
    set_aside(assessor_client, assignment, 1, text="scanned upside down")
    campaign = assignment.topic.campaign
    status = campaign_status(campaign)
    assert [(n.topic_id, n.docno, n.assessor, n.reason) for n in status.set_aside] == [
        ("301", "d1", "alice", "Unreadable or garbled")
    ]
    assert status.to_dict()["cannot_judge"][0]["text"] == "scanned upside down"
    # The budget and the plan are untouched: d1 still counts as work to do.
    assert status.topics[0].to_judge == 3
    assert status.topics[0].judged == 0

    give_back = reverse("judging:note_give_back", args=[campaign.slug, status.set_aside[0].note_id])
    assert assessor_client.post(give_back).status_code in (302, 403)
    assert DocumentNote.objects.get().cannot_judge == "unreadable"

    assessor_client.force_login(organiser)
    page = assessor_client.get(reverse("judging:campaign_dashboard", args=[campaign.slug]))
    assert 'data-set-aside="d1"' in page.content.decode()
    assert assessor_client.post(give_back).status_code == 302
    note = DocumentNote.objects.get()
    assert (note.cannot_judge, note.text) == ("", "scanned upside down")
    assert assignment.next_unjudged().docno == "d1"


def test_a_set_aside_document_a_replan_dropped_is_shown_so_and_not_given_back(
    client, organiser, assessor, capsys
):
    replanned = make_replanned_assignments(assessor)
    dropped, kept = replanned["2"]["set_aside"], replanned["1"]["set_aside"]
    assert replanned["2"]["dropped"]
    assert not replanned["1"]["dropped"]
    campaign = replanned["1"]["assignment"].topic.campaign
    listed = {note.docno: note for note in campaign_status(campaign).set_aside}
    assert (listed[dropped].in_queue, listed[kept].in_queue) == (False, True)

    client.force_login(organiser)
    dashboard = reverse("judging:campaign_dashboard", args=[campaign.slug])
    page = client.get(dashboard).content.decode()
    rows = {
        docno: re.search(rf'<tr data-set-aside="{docno}".*?</tr>', page, re.S).group()
        for docno in (dropped, kept)
    }
    assert "no longer in the plan" in rows[dropped]
    assert "Give back" not in rows[dropped]
    assert "no longer in the plan" not in rows[kept]
    assert "Give back" in rows[kept]
    call_command("campaign_status", "--campaign", campaign.slug)
    assert f"{dropped} (alice, empty or no text); no longer in the plan" in capsys.readouterr().out

    def give_back(docno: str) -> str:
        note = DocumentNote.objects.get(docno=docno, cannot_judge="empty")
        url = reverse("judging:note_give_back", args=[campaign.slug, note.pk])
        return client.post(url, follow=True).content.decode()

    said = give_back(dropped)
    assert f"{dropped} is no longer in alice&#x27;s queue for topic 2" in said
    assert "is back in" not in said
    assert f"{kept} is back in alice&#x27;s queue for topic 1." in give_back(kept)
    assert not DocumentNote.objects.exclude(cannot_judge="").exists()


def test_the_command_lists_what_cannot_be_judged(assessor_client, assignment, capsys):
    set_aside(assessor_client, assignment, 1, text="scanned upside down")
    slug = assignment.topic.campaign.slug
    call_command("campaign_status", "--campaign", slug)
    assert "cannot judge: topic 301 d1 (alice, unreadable or garbled: scanned upside down)" in (
        capsys.readouterr().out
    )
    call_command("campaign_status", "--campaign", slug, "--format", "json")
    listed = json.loads(capsys.readouterr().out)["cannot_judge"]
    assert [(n["topic"], n["docno"], n["reason"]) for n in listed] == [
        ("301", "d1", "Unreadable or garbled")
    ]


def test_history_and_adjudication_show_the_notes(assessor_client, assessor2, organiser, assignment):
    set_aside(assessor_client, assignment, 1, text="scanned upside down")
    services.note_record(assessor=assessor2, topic=assignment.topic, docno="d1", text="fine to me")
    assessor_client.force_login(organiser)
    topic = assignment.topic
    for url in (
        reverse("judging:document_history", args=[topic.pk, "d1"]),
        reverse("judging:adjudicate", args=[assignment.pool.pk, topic.pk, "d1"]),
    ):
        page = assessor_client.get(url).content.decode()
        assert "Assessors' notes" in page
        assert "Unreadable or garbled" in page
        assert "scanned upside down" in page
        assert "fine to me" in page


def test_the_note_keys_are_reserved_in_label_schemas():
    schema = json.loads(json.dumps(DEFAULT_LABEL_SCHEMA))
    schema["relevance"]["grades"][1]["key"] = "!"
    assert any("key '!' is reserved" in p for p in schema_problems(schema))


def test_the_assessor_finds_what_they_set_aside_to_judge_it_after_all(assessor_client, assignment):
    set_aside(assessor_client, assignment, 2, text="blank page")
    page = assessor_client.get(reverse("judging:judged_list", args=[assignment.pk]))
    text = page.content.decode()
    assert 'data-set-aside="d2"' in text
    assert "Unreadable or garbled: blank page" in text
    assert judge_url(assignment, 2) in text


def test_the_dashboard_says_since_when_with_the_year(assessor_client, organiser, assignment):
    from datetime import datetime

    from django.utils import timezone

    set_aside(assessor_client, assignment, 1)
    when = timezone.make_aware(datetime(2025, 11, 26, 14, 5))
    DocumentNote.objects.update(updated_at=when)
    assessor_client.force_login(organiser)
    page = assessor_client.get(
        reverse("judging:campaign_dashboard", args=[assignment.topic.campaign.slug])
    ).content.decode()
    row = re.search(r'<tr data-set-aside="d1".*?</tr>', page, re.S).group()
    assert '<td class="nowrap">2025-11-26 14:05</td>' in row
