"""Nugget lists as versions, and the labels of answers with their audit log."""

from __future__ import annotations

import pytest

from judging import answer_services
from judging.core.nugget_files import NuggetText
from judging.models import AnswerJudgment, AnswerJudgmentEvent, AnswerNote, JudgmentEvent
from pooling.models import Answer
from tests.helpers import make_answer_campaign, make_nuggets

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    return make_answer_campaign()


@pytest.fixture
def topic(campaign):
    return campaign.topics.get(topic_id="1")


def test_an_edit_makes_the_next_version_and_keeps_the_earlier(topic):
    first = make_nuggets(topic)
    second = make_nuggets(topic, (("okay", "First fact"), ("vital", "Second fact")))
    assert (first.version, second.version) == (1, 2)
    assert answer_services.current_nuggets(topic) == second
    assert list(first.nuggets.values_list("importance", flat=True)) == ["vital", "okay"]


def test_saving_the_same_nuggets_again_makes_no_version(topic):
    first = make_nuggets(topic)
    assert make_nuggets(topic) == first
    assert topic.nugget_lists.count() == 1


def test_a_judgment_records_the_version_it_used_and_an_event(topic, assessor):
    nuggets = make_nuggets(topic)
    assignment = answer_services.answer_assignment_create(topic=topic, assessor=assessor)
    answer = Answer.objects.filter(topic=topic).first()
    answer_services.answer_judgment_record(
        assignment=assignment, answer=answer, labels=["support", "not_support"], seconds=4
    )
    make_nuggets(topic, (("vital", "Changed"),))
    judgment = AnswerJudgment.objects.get()
    assert judgment.nugget_list == nuggets
    assert judgment.labels == ["support", "not_support"]
    event = AnswerJudgmentEvent.objects.get()
    assert (event.action, event.old, event.new, event.nugget_list) == (
        JudgmentEvent.CREATE,
        None,
        ["support", "not_support"],
        nuggets,
    )


def test_the_same_labels_twice_make_one_judgment_and_one_event(topic, assessor):
    make_nuggets(topic)
    assignment = answer_services.answer_assignment_create(topic=topic, assessor=assessor)
    answer = Answer.objects.filter(topic=topic).first()
    for _ in range(2):
        answer_services.answer_judgment_record(
            assignment=assignment, answer=answer, labels=["support", "support"], seconds=2
        )
    assert AnswerJudgment.objects.get().seconds == 4
    assert AnswerJudgmentEvent.objects.count() == 1


def test_labels_that_do_not_fit_are_refused_and_nothing_is_saved(topic, assessor):
    make_nuggets(topic)
    assignment = answer_services.answer_assignment_create(topic=topic, assessor=assessor)
    answer = Answer.objects.filter(topic=topic).first()
    with pytest.raises(answer_services.AnswerLabelError, match="each of the 2"):
        answer_services.answer_judgment_record(
            assignment=assignment, answer=answer, labels=["support"]
        )
    other = Answer.objects.exclude(topic=topic).first()
    with pytest.raises(answer_services.AnswerLabelError, match="not one of this assignment"):
        answer_services.answer_judgment_record(
            assignment=assignment, answer=other, labels=["support", "support"]
        )
    assert not AnswerJudgment.objects.exists()
    assert not AnswerJudgmentEvent.objects.exists()


def test_a_topic_without_nuggets_cannot_be_judged(topic, assessor):
    assignment = answer_services.answer_assignment_create(topic=topic, assessor=assessor)
    with pytest.raises(answer_services.AnswerLabelError, match="no nuggets yet"):
        answer_services.answer_judgment_record(
            assignment=assignment, answer=Answer.objects.filter(topic=topic).first(), labels=[]
        )


def test_undo_removes_a_first_judgment_then_restores_a_revision(topic, assessor):
    make_nuggets(topic)
    assignment = answer_services.answer_assignment_create(topic=topic, assessor=assessor)
    first, second = Answer.objects.filter(topic=topic)[:2]
    record = answer_services.answer_judgment_record
    record(assignment=assignment, answer=first, labels=["support", "support"])
    record(assignment=assignment, answer=second, labels=["not_support", "support"])
    record(assignment=assignment, answer=second, labels=["partial_support", "support"])
    undone = answer_services.answer_judgment_undo(assignment=assignment)
    assert undone.answer == second
    assert undone.reverts.action == JudgmentEvent.UPDATE
    assert AnswerJudgment.objects.get(answer=second).labels == ["not_support", "support"]
    answer_services.answer_judgment_undo(assignment=assignment)
    answer_services.answer_judgment_undo(assignment=assignment)
    assert not AnswerJudgment.objects.exists()
    assert answer_services.answer_judgment_undo(assignment=assignment) is None
    assert AnswerJudgmentEvent.objects.filter(action=JudgmentEvent.UNDO).count() == 3


def test_citation_labels_are_one_per_citation_of_each_sentence(campaign, topic, assessor):
    assignment = answer_services.answer_assignment_create(
        topic=topic, assessor=assessor, task="citations"
    )
    answer = Answer.objects.filter(topic=topic).first()
    assert answer_services.citation_counts(answer) == [1, 2]
    answer_services.answer_judgment_record(
        assignment=assignment, answer=answer, labels=[["full"], ["partial", "no"]]
    )
    assert AnswerJudgment.objects.get(task="citations").nugget_list is None
    with pytest.raises(answer_services.AnswerLabelError, match="sentence 2"):
        answer_services.answer_judgment_record(
            assignment=assignment, answer=answer, labels=[["full"], ["partial"]]
        )


def test_cannot_judge_is_a_note_cleared_by_a_later_judgment(topic, assessor):
    make_nuggets(topic)
    assignment = answer_services.answer_assignment_create(topic=topic, assessor=assessor)
    answer = Answer.objects.filter(topic=topic).first()
    with pytest.raises(answer_services.AnswerLabelError, match="Other"):
        answer_services.answer_note_record(
            assignment=assignment, answer=answer, text="", cannot_judge="other"
        )
    answer_services.answer_note_record(
        assignment=assignment, answer=answer, text="garbled", cannot_judge="unreadable"
    )
    answer_services.answer_judgment_record(
        assignment=assignment, answer=answer, labels=["support", "support"]
    )
    note = AnswerNote.objects.get()
    assert (note.text, note.cannot_judge) == ("garbled", "")


def test_an_import_gives_each_topic_its_next_version(campaign, topic):
    from judging.core.nugget_files import TopicNuggets

    make_nuggets(topic)
    saved = answer_services.nuggets_import(
        campaign=campaign,
        read=[
            TopicNuggets("1", "q", (NuggetText("New", "vital"),), 1),
            TopicNuggets("2", "q", (NuggetText("Other", "okay"),), 2),
        ],
    )
    assert [(s.topic.topic_id, s.version) for s in saved] == [("1", 2), ("2", 1)]
