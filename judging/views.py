"""Assessor pages: their topics and the judging screen.

An assessor sees only their own assignments: another assessor's assignment
is a 404, and no page shows ranks, runs, scores, strata or other labels.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from judging import selectors, services
from judging.core.highlight import highlight_html, query_terms
from judging.forms import ActiveTimeForm, CannotJudgeForm, NoteForm
from judging.machine_selectors import post_edit_labels
from judging.models import Assignment, DocumentNote, Judgment
from pooling.models import Document, PoolEntry
from workbench.core.label_schema import LabelError
from workbench.roles import is_organiser, is_participant

PANEL = "judging/judge.html#judge-panel"


def _get_assignment_for_user(request: HttpRequest, assignment_id: int) -> Assignment:
    return get_object_or_404(
        Assignment.objects.open().select_related("topic__campaign", "assessor"),
        pk=assignment_id,
        assessor=request.user,
    )


# --------------------------------------------------------------------------
# Assessors


@login_required
def assessor_home(request: HttpRequest) -> HttpResponse:
    if is_participant(request.user) and not is_organiser(request.user):
        return redirect("teams:team_home")  # participants submit runs; they never judge
    assignments = (
        request.user.assignments.open()
        .select_related("topic__campaign", "pool")
        .order_by("pool__campaign__name", "pool__created_at", "topic__position")
        .list_with_progress()
    )
    answer_assignments = request.user.answer_assignments.select_related("topic__campaign")
    return render(
        request,
        "judging/assessor_home.html",
        {"assignments": assignments, "answer_assignments": answer_assignments},
    )


@login_required
def judge_next(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Continue: the first document not yet judged."""
    assignment = _get_assignment_for_user(request, assignment_id)
    entry = assignment.next_unjudged()
    if entry is None:
        return render(request, "judging/judge.html", _panel_context(assignment, None))
    return redirect("judging:judge", assignment.pk, entry.position)


@login_required
def judge(request: HttpRequest, assignment_id: int, position: int) -> HttpResponse:
    """GET shows the document at a queue position; POST judges it and moves on."""
    assignment = _get_assignment_for_user(request, assignment_id)
    entry = assignment.entry_at(position)
    if entry is None:
        return redirect("judging:judge_next", assignment.pk)
    return _judge_entry(request, assignment, entry)


@login_required
def judge_document(request: HttpRequest, assignment_id: int, docno: str) -> HttpResponse:
    """A document the assessor judged that a re-plan took out of her queue: still
    hers to see and revise (GET shows it, POST revises it). One in the queue is
    shown at its position."""
    assignment = _get_assignment_for_user(request, assignment_id)
    entry = assignment.entry_of(docno)
    if entry is None:
        raise Http404(f"you have no document {docno!r} in this assignment")
    if entry.position is not None:
        return redirect("judging:judge", assignment.pk, entry.position)
    return _judge_entry(request, assignment, entry)


def _judge_entry(request: HttpRequest, assignment: Assignment, entry: PoolEntry) -> HttpResponse:
    if request.method != "POST":
        return render(request, "judging/judge.html", _panel_context(assignment, entry))
    schema = assignment.topic.campaign.schema
    aspects = {a.id: request.POST.get(a.id) for a in schema.aspects if a.id in request.POST}
    timing = ActiveTimeForm(request.POST)
    if not timing.is_valid():
        return _rejected(request, assignment, entry, "The active time sent is not a number.")
    note = NoteForm(request.POST)
    if not note.is_valid():
        return _rejected(request, assignment, entry, f"Note: {note.errors['note'][0]}")
    try:
        # The entry came from this assignment (`entry_at`, `entry_of`): no need to
        # check it again.
        services.judgment_record(
            assessor=assignment.assessor,
            topic=assignment.topic,
            docno=entry.docno,
            relevance=request.POST.get("relevance"),
            aspects=aspects,
            seconds=timing.cleaned_data["seconds"] or 0.0,
            schema=schema,
            shown_machine_label=_shown_machine_label(assignment, entry),
        )
    except LabelError as error:
        return _rejected(request, assignment, entry, str(error))
    if "note" in request.POST:
        services.note_record(
            assessor=assignment.assessor,
            topic=assignment.topic,
            docno=entry.docno,
            text=note.cleaned_data["note"],
        )
    return _show_next(request, assignment, assignment.next_unjudged(after=entry.position or 0))


@login_required
@require_POST
def judge_cannot(request: HttpRequest, assignment_id: int, position: int) -> HttpResponse:
    """Set the document aside as one the assessor cannot judge, and move on."""
    assignment = _get_assignment_for_user(request, assignment_id)
    entry = assignment.entry_at(position)
    if entry is None:
        return redirect("judging:judge_next", assignment.pk)
    form = CannotJudgeForm(request.POST)
    if not form.is_valid():
        reasons = "; ".join(f"{field}: {errors[0]}" for field, errors in form.errors.items())
        return _rejected(request, assignment, entry, f"Not set aside: {reasons}")
    try:
        note = services.cannot_judge_record(
            assignment=assignment,
            docno=entry.docno,
            reason=form.cleaned_data["reason"],
            text=form.cleaned_data["text"],
        )
    except services.NoteError as error:
        return _rejected(request, assignment, entry, f"Not set aside: {error}")
    said = f"Set aside as cannot judge ({note.get_cannot_judge_display().lower()}): {entry.docno}."
    return _show_next(request, assignment, assignment.next_unjudged(after=position), note=said)


@login_required
@require_POST
def judge_undo(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Undo the last judgment on this topic and show that document again."""
    assignment = _get_assignment_for_user(request, assignment_id)
    reverted = services.judgment_undo(assignment=assignment)
    if reverted is None:
        messages.info(request, "Nothing to undo.")
        return _show_next(request, assignment, assignment.next_unjudged())
    # Shown again if it is still hers: in the queue, or judged (a revision undone).
    entry = assignment.entry_of(reverted.docno) or assignment.next_unjudged()
    return _show_next(request, assignment, entry, note=f"Undone: {reverted.docno}.")


@login_required
def judged_list(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """The assessor's judged documents of this topic, to reopen and revise: every one
    she judged, in her queue or taken out of it by a re-plan since."""
    assignment = _get_assignment_for_user(request, assignment_id)
    positions = dict(assignment.queue().values_list("docno", "position"))
    schema = assignment.topic.campaign.schema
    rows = [
        {
            "position": positions.get(j.docno),
            "url": _entry_url(assignment, j.docno, positions.get(j.docno)),
            "docno": j.docno,
            "labels": schema.label_names(j.labels()),
            "updated_at": j.updated_at,
        }
        for j in assignment.judgments().order_by("-updated_at")
    ]
    titles = dict(
        Document.objects.filter(
            campaign=assignment.topic.campaign, docno__in=[r["docno"] for r in rows]
        ).values_list("docno", "title")
    )
    for row in rows:
        row["title"] = titles.get(row["docno"], "")
    set_aside = [
        {"position": positions.get(note.docno), "docno": note.docno, "note": note}
        for note in assignment.notes().exclude(cannot_judge="").order_by("-updated_at")
    ]
    return render(
        request,
        "judging/judged_list.html",
        {"assignment": assignment, "rows": rows, "set_aside": set_aside},
    )


def _entry_url(assignment: Assignment, docno: str, position: int | None) -> str:
    """Where the assessor sees one of her documents: its place in the queue, or (taken
    out of the queue by a re-plan, judged) its docno."""
    if position is not None:
        return reverse("judging:judge", args=[assignment.pk, position])
    return reverse("judging:judge_document", args=[assignment.pk, docno])


def _post_edit(assignment: Assignment) -> bool:
    return selectors.policy_of(assignment.pool).post_edit


def _shown_machine_label(assignment: Assignment, entry: PoolEntry) -> dict[str, Any] | None:
    """With post-edit on, what the page shows of the machines' labels of the document,
    {machine name: labels} ({} for none), recorded with the judgment; else None."""
    if not _post_edit(assignment):
        return None
    return {s.machine: s.labels for s in post_edit_labels(assignment.topic, entry.docno)}


def _rejected(
    request: HttpRequest, assignment: Assignment, entry: PoolEntry, error: str
) -> HttpResponse:
    """The same document again, with what was chosen and why it was not saved (400)."""
    context = _panel_context(assignment, entry, error=error, posted=request.POST)
    template = PANEL if request.htmx else "judging/judge.html"
    return render(request, template, context, status=400)


def _show_next(
    request: HttpRequest, assignment: Assignment, entry: PoolEntry | None, note: str = ""
) -> HttpResponse:
    """After a judgment or an undo: the next document, swapped in place for htmx."""
    url = (
        _entry_url(assignment, entry.docno, entry.position)
        if entry
        else reverse("judging:judge_next", args=[assignment.pk])
    )
    if not request.htmx:
        if note:
            messages.info(request, note)
        return redirect(url)
    response = render(request, PANEL, _panel_context(assignment, entry, note=note))
    response["HX-Push-Url"] = url
    return response


def _panel_context(
    assignment: Assignment,
    entry: PoolEntry | None,
    *,
    error: str = "",
    note: str = "",
    posted: Any = None,
) -> dict[str, Any]:
    topic = assignment.topic
    campaign = topic.campaign
    schema = campaign.schema
    judged, total = assignment.progress()
    set_aside = list(assignment.set_aside().values_list("docno", flat=True))
    context: dict[str, Any] = {
        "set_aside": set_aside,
        "reasons": DocumentNote.REASONS,
        "assignment": assignment,
        "topic": topic,
        "campaign": campaign,
        "judged": judged,
        "total": total,
        "percent": round(100 * judged / total) if total else 100,
        "entry": entry,
        "error": error,
        "note": note,
        "key_map": schema.key_map(),
    }
    if entry is None:
        return context
    context["judge_url"] = _entry_url(assignment, entry.docno, entry.position)
    document = Document.objects.filter(campaign=campaign, docno=entry.docno).first()
    terms = query_terms(topic.title)
    current = Judgment.objects.filter(
        assessor=assignment.assessor, topic=topic, docno=entry.docno
    ).first()
    chosen = _posted_values(schema, posted)
    my_note = DocumentNote.objects.filter(
        assessor=assignment.assessor, topic=topic, docno=entry.docno
    ).first()
    context |= {
        "my_note": my_note,
        "note_text": posted.get("note", "") if posted is not None else getattr(my_note, "text", ""),
        "document": document,
        "title_html": mark_safe(highlight_html(document.title, terms)) if document else "",
        "text_html": mark_safe(highlight_html(document.text, terms)) if document else "",
        "current": current,
        "questions": [
            {
                "question": question,
                "is_aspect": question.id != "relevance",
                "when": question.when,
                "chosen": chosen.get(question.id),
                "previous": _previous_grade(question, current),
            }
            for question in (schema.relevance, *schema.aspects)
        ],
        "aspects_open": chosen.get("relevance") not in (None, 0),
    }
    if _post_edit(assignment):  # the only place an assessor is shown a machine's label
        context["post_edit"] = True
        context["machine_labels"] = post_edit_labels(topic, entry.docno)
    return context


def _posted_values(schema: Any, posted: Any) -> dict[str, int | None]:
    """What to preselect: only the values just posted (after an error).

    A judged document reopens with nothing chosen, exactly like a first
    judgment: were its stored labels preselected, the first key pressed
    would complete the form and save the old aspects with the new relevance.
    """
    if posted is None:
        return {}
    values: dict[str, int | None] = {}
    for question_id in ("relevance", *schema.aspect_ids):
        try:
            values[question_id] = int(posted.get(question_id))
        except (TypeError, ValueError):
            values[question_id] = None
    return values


def _previous_grade(question: Any, judgment: Judgment | None) -> int | None:
    """The value this question had in the stored judgment, to mark it as the earlier choice."""
    if judgment is None:
        return None
    value = judgment.labels().get(question.id)
    return value if value is not None and question.grade(value) is not None else None
