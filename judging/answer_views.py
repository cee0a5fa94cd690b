"""Assessor pages of generated answers: one answer at a time beside the topic's
nuggets (or, for citation support, each sentence beside the segments it cites).

As on the relevance page: the assessor sees only her own assignments (another's
is a 404), never the run that wrote an answer, and works from the keyboard.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from judging import answer_machine_services, answer_selectors, answer_services
from judging.core.answer_labels import CITATION_CHOICES, NUGGET_CHOICES
from judging.forms import ActiveTimeForm, CannotJudgeForm, NoteForm
from judging.models import AnswerAssignment, AnswerJudgment, AnswerNote, DocumentNote, NuggetList
from pooling.models import Answer, Document

PANEL = "judging/answer_judge.html#answer-panel"


def _get_assignment_for_user(request: HttpRequest, assignment_id: int) -> AnswerAssignment:
    return get_object_or_404(
        AnswerAssignment.objects.select_related("topic__campaign", "assessor", "prefill__account"),
        pk=assignment_id,
        assessor=request.user,
    )


@login_required
def answer_judge_next(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Continue: the first answer not yet judged (or the page saying all are)."""
    assignment = _get_assignment_for_user(request, assignment_id)
    queue = answer_selectors.answer_queue(assignment)
    position = queue.next_unjudged()
    if position is None:
        return render(request, "judging/answer_judge.html", _context(assignment, queue, None))
    return redirect("judging:answer_judge", assignment.pk, position)


@login_required
def answer_judge(request: HttpRequest, assignment_id: int, position: int) -> HttpResponse:
    """GET shows the answer at a position; POST saves its labels and moves on."""
    assignment = _get_assignment_for_user(request, assignment_id)
    queue = answer_selectors.answer_queue(assignment)
    answer_id = queue.at(position)
    if answer_id is None:
        return redirect("judging:answer_judge_next", assignment.pk)
    answer = Answer.objects.get(pk=answer_id)
    if request.method != "POST":
        return render(
            request, "judging/answer_judge.html", _context(assignment, queue, position, answer)
        )
    timing, note = ActiveTimeForm(request.POST), NoteForm(request.POST)
    if not timing.is_valid():
        return _rejected(
            request, assignment, queue, position, answer, "The time sent is not a number."
        )
    if not note.is_valid():
        return _rejected(
            request, assignment, queue, position, answer, f"Note: {note.errors['note'][0]}"
        )
    nugget_list = None
    if assignment.task == AnswerAssignment.NUGGETS:
        nugget_list = NuggetList.objects.filter(
            pk=request.POST.get("nugget_list") or 0, topic=assignment.topic
        ).first()
        if nugget_list is None:
            return _rejected(
                request,
                assignment,
                queue,
                position,
                answer,
                "Which nugget list was shown is missing.",
            )
    labels = posted_labels(request.POST, assignment.task, answer, nugget_list)
    try:
        answer_services.answer_judgment_record(
            assignment=assignment,
            answer=answer,
            labels=labels,
            seconds=timing.cleaned_data["seconds"] or 0.0,
            nugget_list=nugget_list,
            prefilled_from=answer_machine_services.prefilled_from(
                str(request.POST.get("prefilled_from") or ""), assignment
            ),
        )
        if "note" in request.POST:
            answer_services.answer_note_record(
                assignment=assignment, answer=answer, text=note.cleaned_data["note"]
            )
    except answer_services.AnswerLabelError as error:
        return _rejected(request, assignment, queue, position, answer, f"Not saved: {error}")
    queue = queue.with_judged(answer.pk)  # what the save did, without reading it back
    return _show(request, assignment, queue, queue.next_unjudged(after=position))


def posted_labels(
    posted: Any, task: str, answer: Answer, nugget_list: NuggetList | None
) -> list[Any]:
    """The labels as the form sends them: `n<position>` per nugget; `c<sentence>_<citation>`
    per citation (0-based). A missing one is None, which the service refuses."""
    if task == AnswerAssignment.NUGGETS:
        if nugget_list is None:
            return []
        positions = nugget_list.nuggets.order_by("position").values_list("position", flat=True)
        return [posted.get(f"n{p}") for p in positions]
    return [
        [posted.get(f"c{s}_{c}") for c in range(cited)]
        for s, cited in enumerate(answer_services.citation_counts(answer))
    ]


def label_items(answer: Answer, task: str, nugget_list: NuggetList | None) -> list[dict[str, Any]]:
    """What takes a label, in order, each with its form field `name`: the nuggets of
    the list, or each citation of each sentence with the cited segment's text."""
    if task == AnswerAssignment.NUGGETS:
        nuggets = nugget_list.nuggets.order_by("position") if nugget_list else []
        return [{"name": f"n{nugget.position}", "nugget": nugget} for nugget in nuggets]
    sentences = list(answer.sentences.prefetch_related("citations"))
    segments = {c.segment for s in sentences for c in s.citations.all()}
    texts = dict(
        Document.objects.filter(
            campaign_id=answer.topic.campaign_id, docno__in=segments
        ).values_list("docno", "text")
    )
    return [
        {
            "name": f"c{sentence.position}_{citation.position}",
            "sentence": sentence,
            "citation": citation,
            "segment_text": texts.get(citation.segment),
        }
        for sentence in sentences
        for citation in sentence.citations.all()
    ]


def item_label(labels: Any, task: str, index: int, answer: Answer) -> str | None:
    """The label stored for the `index`-th item of `label_items` (None if absent)."""
    if task == AnswerAssignment.NUGGETS:
        return labels[index] if index < len(labels) else None
    flat = [label for sentence in labels for label in sentence]
    return flat[index] if index < len(flat) else None


def choices_of(task: str) -> list[dict[str, str]]:
    choices = NUGGET_CHOICES if task == AnswerAssignment.NUGGETS else CITATION_CHOICES
    return [{"value": v, "name": n, "key": k} for v, n, k in choices]


@login_required
@require_POST
def answer_cannot(request: HttpRequest, assignment_id: int, position: int) -> HttpResponse:
    """Set the answer aside as one the assessor cannot judge, and move on."""
    assignment = _get_assignment_for_user(request, assignment_id)
    queue = answer_selectors.answer_queue(assignment)
    answer_id = queue.at(position)
    if answer_id is None:
        return redirect("judging:answer_judge_next", assignment.pk)
    answer = Answer.objects.get(pk=answer_id)
    form = CannotJudgeForm(request.POST)
    if not form.is_valid():
        reasons = "; ".join(f"{field}: {errors[0]}" for field, errors in form.errors.items())
        return _rejected(request, assignment, queue, position, answer, f"Not set aside: {reasons}")
    try:
        answer_services.answer_note_record(
            assignment=assignment,
            answer=answer,
            text=form.cleaned_data["text"],
            cannot_judge=form.cleaned_data["reason"],
        )
    except answer_services.AnswerLabelError as error:
        return _rejected(request, assignment, queue, position, answer, f"Not set aside: {error}")
    queue = answer_selectors.answer_queue(assignment)
    return _show(
        request,
        assignment,
        queue,
        queue.next_unjudged(after=position),
        note=f"Answer {position} set aside.",
    )


@login_required
@require_POST
def answer_undo(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Undo the last change in this assignment and show that answer again."""
    assignment = _get_assignment_for_user(request, assignment_id)
    reverted = answer_services.answer_judgment_undo(assignment=assignment)
    queue = answer_selectors.answer_queue(assignment)
    if reverted is None:
        return _show(request, assignment, queue, queue.next_unjudged(), note="Nothing to undo.")
    position = queue.position(reverted.answer_id)
    return _show(request, assignment, queue, position, note=f"Undone: answer {position}.")


def _show(
    request: HttpRequest,
    assignment: AnswerAssignment,
    queue: answer_selectors.Queue,
    position: int | None,
    note: str = "",
) -> HttpResponse:
    """After a save or an undo: that answer, swapped in place for htmx."""
    url = (
        reverse("judging:answer_judge", args=[assignment.pk, position])
        if position
        else reverse("judging:answer_judge_next", args=[assignment.pk])
    )
    if not request.htmx:
        if note:
            messages.info(request, note)
        return redirect(url)
    answer = Answer.objects.get(pk=queue.at(position)) if position else None
    response = render(request, PANEL, _context(assignment, queue, position, answer, note=note))
    response["HX-Push-Url"] = url
    return response


def _rejected(
    request: HttpRequest,
    assignment: AnswerAssignment,
    queue: answer_selectors.Queue,
    position: int,
    answer: Answer,
    error: str,
) -> HttpResponse:
    context = _context(assignment, queue, position, answer, error=error, posted=request.POST)
    template = PANEL if request.htmx else "judging/answer_judge.html"
    return render(request, template, context, status=400)


def _context(
    assignment: AnswerAssignment,
    queue: answer_selectors.Queue,
    position: int | None,
    answer: Answer | None = None,
    *,
    error: str = "",
    note: str = "",
    posted: Any = None,
) -> dict[str, Any]:
    judged = len(queue.judged & set(queue.ids))
    context: dict[str, Any] = {
        "assignment": assignment,
        "topic": assignment.topic,
        "campaign": assignment.topic.campaign,
        "position": position,
        "total": queue.total,
        "judged": judged,
        "set_aside": len(queue.set_aside - queue.judged),
        "answer": answer,
        "error": error,
        "note": note,
        "reasons": DocumentNote.REASONS,
        "is_nuggets": assignment.task == AnswerAssignment.NUGGETS,
        "choices": choices_of(assignment.task),
    }
    if answer is None:
        return context
    current = AnswerJudgment.objects.filter(
        assessor=assignment.assessor, answer=answer, task=assignment.task
    ).first()
    my_note = AnswerNote.objects.filter(
        assessor=assignment.assessor, answer=answer, task=assignment.task
    ).first()
    sentences = list(answer.sentences.prefetch_related("citations"))
    context |= {
        "judge_url": reverse("judging:answer_judge", args=[assignment.pk, position]),
        "sentences": sentences,
        "current": current,
        "my_note": my_note,
        "note_text": posted.get("note", "") if posted is not None else getattr(my_note, "text", ""),
    }
    nugget_list = None
    if assignment.task == AnswerAssignment.NUGGETS:
        nugget_list = answer_services.current_nuggets(assignment.topic)
        context["nugget_list"] = nugget_list
        context["older_version"] = bool(
            current and nugget_list and current.nugget_list_id != nugget_list.pk
        )
    same = current is not None and current.nugget_list_id == getattr(nugget_list, "pk", None)
    prefill = None
    if current is None and assignment.task == AnswerAssignment.NUGGETS:
        # Only with the assignment's pre-fill on: otherwise no machine label is read.
        prefill = answer_machine_services.prefill_labels(assignment, answer, nugget_list)
    context["prefilled_from"] = assignment.prefill.account.username if prefill else ""
    items = label_items(answer, assignment.task, nugget_list)
    for index, item in enumerate(items):
        item["chosen"] = (
            posted.get(item["name"])
            if posted is not None
            else prefill[index]
            if prefill and index < len(prefill)
            else None
        )
        item["machine"] = prefill[index] if prefill and index < len(prefill) else None
        item["earlier"] = (
            item_label(current.labels, assignment.task, index, answer) if same else None
        )
    context["items"] = items
    return context
