"""Writes of answer judging: nugget lists (versioned), answer assignments, the labels
of answers with their audit log, notes and cannot-judge.

Labels are checked here, once, for the page and the API alike; a write is one
transaction and idempotent: the same labels saved twice make one judgment and
one event.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import transaction
from django.db.models import Count, Max

from judging.core.answer_labels import citation_labels_problem, nugget_labels_problem
from judging.core.nugget_files import NuggetText, TopicNuggets
from judging.models import (
    AnswerAdjudication,
    AnswerAssignment,
    AnswerJudgment,
    AnswerJudgmentEvent,
    AnswerNote,
    DocumentNote,
    JudgmentEvent,
    MachineAssessor,
    Nugget,
    NuggetList,
)
from pooling.models import Answer, Campaign, Citation, Topic


class AnswerLabelError(ValueError):
    """Labels that do not fit the answer (or its nuggets): nothing was saved."""


# --------------------------------------------------------------------------
# Nuggets


def current_nuggets(topic: Topic) -> NuggetList | None:
    """The topic's newest nugget list, or None before the first."""
    return topic.nugget_lists.order_by("-version").first()


def nugget_list_save(
    *, topic: Topic, nuggets: Sequence[NuggetText], created_by: Any = None, note: str = ""
) -> NuggetList:
    """Store `nuggets` as the topic's next version (the same list as the current one
    stores nothing and returns the current one)."""
    with transaction.atomic():
        Topic.objects.select_for_update().filter(pk=topic.pk).first()  # one writer per topic
        current = current_nuggets(topic)
        if current is not None and _texts(current) == [(n.text, n.importance) for n in nuggets]:
            return current
        version = (topic.nugget_lists.aggregate(v=Max("version"))["v"] or 0) + 1
        saved = NuggetList.objects.create(
            topic=topic, version=version, created_by=created_by, note=note[:200]
        )
        Nugget.objects.bulk_create(
            Nugget(nugget_list=saved, position=position, text=n.text, importance=n.importance)
            for position, n in enumerate(nuggets, 1)
        )
    return saved


def _texts(nugget_list: NuggetList) -> list[tuple[str, str]]:
    return list(nugget_list.nuggets.order_by("position").values_list("text", "importance"))


def nuggets_import(
    *, campaign: Campaign, read: Iterable[TopicNuggets], created_by: Any = None
) -> list[NuggetList]:
    """A nuggetizer file's topics, each its next version, in one transaction."""
    topics = {t.topic_id: t for t in campaign.topics.all()}
    with transaction.atomic():
        return [
            nugget_list_save(
                topic=topics[record.topic_id],
                nuggets=record.nuggets,
                created_by=created_by,
                note="imported",
            )
            for record in read
        ]


# --------------------------------------------------------------------------
# Assignments


def answer_assignment_create(
    *, topic: Topic, assessor: Any, task: str = AnswerAssignment.NUGGETS, seed: int = 0
) -> AnswerAssignment:
    """Give an assessor a topic's answers to judge (the same one again: unchanged).
    A machine assessor is never given one (its labels are a pre-fill, not a judge's)."""
    if MachineAssessor.objects.filter(account_id=assessor.pk).exists():
        raise AnswerLabelError(
            f"{assessor.username} is a machine assessor: never given an assignment"
        )
    assignment, _ = AnswerAssignment.objects.get_or_create(
        topic=topic, assessor=assessor, task=task, defaults={"seed": seed}
    )
    return assignment


# --------------------------------------------------------------------------
# Judgments


def citation_counts(answer: Answer) -> list[int]:
    """How many citations each sentence of the answer has, in order."""
    counts = answer.sentences.annotate(n=Count("citations")).order_by("position")
    return list(counts.values_list("n", flat=True))


def answer_judgment_record(
    *,
    assignment: AnswerAssignment,
    answer: Answer,
    labels: Any,
    seconds: float = 0.0,
    nugget_list: NuggetList | None = None,
    prefilled_from: str = "",
) -> AnswerJudgment:
    """Save the assessor's labels of one answer of her assignment, with an event.

    Nuggets: `labels` has one label per nugget of `nugget_list` (the version the
    page showed; by default the topic's current one). Citations: per sentence, one
    per citation. AnswerLabelError when they do not fit; an identical save adds
    only the seconds. `prefilled_from`: the machine account whose labels the page
    started from (recorded on the judgment and its event).
    """
    if answer.topic_id != assignment.topic_id:
        raise AnswerLabelError("the answer is not one of this assignment's topic")
    if assignment.task == AnswerAssignment.NUGGETS:
        nugget_list = nugget_list or current_nuggets(assignment.topic)
        if nugget_list is None or nugget_list.topic_id != assignment.topic_id:
            raise AnswerLabelError("the topic has no nuggets yet: ask the organiser")
        problem = nugget_labels_problem(labels, nugget_list.nuggets.count())
    else:
        nugget_list = None
        problem = citation_labels_problem(labels, citation_counts(answer))
    if problem:
        raise AnswerLabelError(problem)
    seconds = max(0.0, min(float(seconds), 3600.0))
    with transaction.atomic():
        current = (
            AnswerJudgment.objects.select_for_update()
            .filter(assessor=assignment.assessor, answer=answer, task=assignment.task)
            .first()
        )
        if (
            current is not None
            and current.labels == labels
            and (current.nugget_list_id == getattr(nugget_list, "pk", None))
        ):
            current.seconds += seconds
            current.save(update_fields=["seconds", "updated_at"])
            return current
        old = None if current is None else current.labels
        if current is None:
            current = AnswerJudgment(
                assessor=assignment.assessor, answer=answer, task=assignment.task
            )
        current.labels = labels
        current.nugget_list = nugget_list
        current.seconds += seconds
        current.prefilled_from = prefilled_from[:150]
        current.save()
        AnswerJudgmentEvent.objects.create(
            assessor=assignment.assessor,
            answer=answer,
            task=assignment.task,
            action=JudgmentEvent.CREATE if old is None else JudgmentEvent.UPDATE,
            nugget_list=nugget_list,
            old=old,
            new=labels,
            seconds=seconds,
            prefilled_from=prefilled_from[:150],
        )
        AnswerNote.objects.filter(
            assessor=assignment.assessor, answer=answer, task=assignment.task
        ).exclude(cannot_judge="").update(cannot_judge="")
    return current


def answer_judgment_undo(*, assignment: AnswerAssignment) -> AnswerJudgmentEvent | None:
    """Revert the assessor's last change in this assignment (a first judgment is
    removed, a revision put back), as an undo event; None when nothing is left."""
    with transaction.atomic():
        last = (
            # Lock only the event row: the reverted_by test is an outer join.
            AnswerJudgmentEvent.objects.select_for_update(of=("self",))
            .filter(
                assessor=assignment.assessor,
                task=assignment.task,
                answer__topic_id=assignment.topic_id,
                reverted_by__isnull=True,
            )
            .exclude(action=JudgmentEvent.UNDO)
            .order_by("-id")
            .first()
        )
        if last is None:
            return None
        judgment = AnswerJudgment.objects.filter(
            assessor=assignment.assessor, answer_id=last.answer_id, task=assignment.task
        ).first()
        if last.old is None:
            if judgment is not None:
                judgment.delete()
        elif judgment is not None:
            previous = (
                AnswerJudgmentEvent.objects.filter(
                    assessor=assignment.assessor,
                    answer_id=last.answer_id,
                    task=assignment.task,
                    id__lt=last.id,
                )
                .exclude(action=JudgmentEvent.UNDO)
                .order_by("-id")
                .first()
            )
            judgment.labels = last.old
            if previous is not None:
                judgment.nugget_list_id = previous.nugget_list_id
            judgment.save(update_fields=["labels", "nugget_list", "updated_at"])
        return AnswerJudgmentEvent.objects.create(
            assessor=assignment.assessor,
            answer_id=last.answer_id,
            task=assignment.task,
            action=JudgmentEvent.UNDO,
            old=last.new,
            new=last.old,
            reverts=last,
        )


def answer_note_record(
    *, assignment: AnswerAssignment, answer: Answer, text: str, cannot_judge: str = ""
) -> AnswerNote | None:
    """Save the assessor's note on an answer (and, with `cannot_judge`, why she
    cannot judge it: it leaves her queue); an empty note with no reason deletes it."""
    reasons = {value for value, _ in DocumentNote.REASONS}
    if cannot_judge and cannot_judge not in reasons:
        raise AnswerLabelError(f"{cannot_judge!r} is not a reason")
    if cannot_judge == DocumentNote.OTHER and not text.strip():
        raise AnswerLabelError("say why in the details for Other")
    key = {"assessor": assignment.assessor, "answer": answer, "task": assignment.task}
    with transaction.atomic():
        if not text.strip() and not cannot_judge:
            note = AnswerNote.objects.filter(**key).first()
            if note is not None and not note.cannot_judge:
                note.delete()
                return None
            return note
        note, _ = AnswerNote.objects.update_or_create(
            **key,
            defaults={
                "text": text.strip(),
                **({"cannot_judge": cannot_judge} if cannot_judge else {}),
            },
        )
    return note


def cited_segments(answer: Answer) -> list[Citation]:
    """The answer's citations, sentence by sentence (for the citation page)."""
    return list(
        Citation.objects.filter(sentence__answer=answer).order_by("sentence__position", "position")
    )


def answer_adjudicate(
    *,
    answer: Answer,
    task: str,
    labels: Any,
    nugget_list: NuggetList | None = None,
    reason: str = "",
    decided_by: Any = None,
) -> AnswerAdjudication:
    """Set the final labels of an answer (checked as an assessor's are); again: replaced."""
    if task == AnswerAssignment.NUGGETS:
        if nugget_list is None or nugget_list.topic_id != answer.topic_id:
            raise AnswerLabelError("name the nugget version the labels are for")
        problem = nugget_labels_problem(labels, nugget_list.nuggets.count())
    else:
        nugget_list = None
        problem = citation_labels_problem(labels, citation_counts(answer))
    if problem:
        raise AnswerLabelError(problem)
    adjudication, _ = AnswerAdjudication.objects.update_or_create(
        answer=answer,
        task=task,
        defaults={
            "labels": labels,
            "nugget_list": nugget_list,
            "reason": reason.strip(),
            "decided_by": decided_by,
        },
    )
    return adjudication
