"""Organiser pages of a task campaign (CodiEsp, SciFact): its gold files and
submissions, the scores of each subtask and each submission's documents."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from pooling.models import Campaign
from scoring import background, services, task_selectors
from scoring.core.tasks import subtasks
from scoring.core.tasks.subtasks import Subtask
from scoring.forms import TaskGoldForm, TaskReplaceForm, TaskSortForm, TaskSubmissionForm
from scoring.models import TaskSubmission
from workbench import uploads
from workbench.core.problems import InputError
from workbench.core.spreadsheets import tsv_text
from workbench.http import attachment
from workbench.roles import organiser_required


def _get_task_campaign_for_organiser(slug: str) -> Campaign:
    campaign = get_object_or_404(Campaign, slug=slug)
    if not campaign.is_task:
        raise Http404(f"{campaign.name} is a ranked retrieval campaign, not a task campaign")
    return campaign


def _get_submission(campaign: Campaign, submission_id: int) -> TaskSubmission:
    return get_object_or_404(
        TaskSubmission.objects.select_related("campaign"), pk=submission_id, campaign=campaign
    )


def _subtask_or_404(campaign: Campaign, code: str) -> Subtask:
    try:
        return subtasks.subtask(campaign.task_kind, code)
    except KeyError:
        raise Http404(f"{campaign.name} has no subtask {code!r}") from None


# --------------------------------------------------------------------------
# The campaign's gold files and submissions


@organiser_required
def task_campaign(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _get_task_campaign_for_organiser(slug)
    return render(request, "scoring/task_campaign.html", _page_context(campaign))


def _page_context(campaign: Campaign, **forms: Any) -> dict[str, Any]:
    campaign_subtasks = task_selectors.campaign_subtasks(campaign)
    golds = {gold.subtask: gold for gold in campaign.task_golds.select_related("uploaded_by")}
    return {
        "campaign": campaign,
        "subtasks": campaign_subtasks,
        "golds": [(s, golds.get(s.code)) for s in campaign_subtasks],
        "n_golds": len(golds),
        "submissions": campaign.task_submissions.select_related("uploaded_by"),
        "gold_form": forms.get("gold_form") or TaskGoldForm(subtasks=campaign_subtasks),
        "submission_form": forms.get("submission_form")
        or TaskSubmissionForm(subtasks=campaign_subtasks),
        "upload_errors": forms.get("upload_errors", {}),
    }


Store = Callable[[HttpRequest, Campaign, dict[str, Any]], str]


def _handle_upload(
    request: HttpRequest, slug: str, which: str, form_class: type[forms.Form], store: Store
) -> HttpResponse:
    """Check the form, store the upload, and answer with the errors (400, nothing
    stored; 413 for a file over the limit) or a message on the refreshed page."""
    campaign = _get_task_campaign_for_organiser(slug)
    form = form_class(
        request.POST, request.FILES, subtasks=task_selectors.campaign_subtasks(campaign)
    )
    received = uploads.upload_receive(request, form, lambda data: store(request, campaign, data))
    if received.status < 400:
        messages.success(request, received.stored)
        response = redirect("scoring:task_campaign", slug=campaign.slug)
        if request.htmx:  # refresh the whole page: its tables show what was stored
            response = HttpResponse(status=204, headers={"HX-Redirect": response.url})
        return response
    errors = {which: received.error}
    context = _page_context(campaign, **{f"{which}_form": form, "upload_errors": errors})
    template = "scoring/task_campaign.html"
    if request.htmx:
        template += f"#{which}-upload"
    return render(request, template, context, status=received.status)


def _store_gold(request: HttpRequest, campaign: Campaign, data: dict[str, Any]) -> str:
    file = data["file"]
    gold = services.task_gold_upload(
        campaign=campaign,
        subtask=data["subtask"],
        gold=services.TaskUpload(file.name, file),
        codes=[services.TaskUpload(f.name, f) for f in data.get("codes", [])],
        uploaded_by=request.user,
    )
    return f"Gold of {gold.get_subtask_display()} stored from {file.name}."


def _store_submission(request: HttpRequest, campaign: Campaign, data: dict[str, Any]) -> str:
    file = data["file"]
    submission = services.task_submission_upload(
        campaign=campaign,
        subtask=data["subtask"],
        upload=services.TaskUpload(file.name, file),
        name=data["name"],
        uploaded_by=request.user,
    )
    return f"Submission {submission.name} ({submission.get_subtask_display()}) stored."


@organiser_required
@require_POST
def task_gold_upload(request: HttpRequest, slug: str) -> HttpResponse:
    return _handle_upload(request, slug, "gold", TaskGoldForm, _store_gold)


@organiser_required
@require_POST
def task_submission_upload(request: HttpRequest, slug: str) -> HttpResponse:
    return _handle_upload(request, slug, "submission", TaskSubmissionForm, _store_submission)


@organiser_required
@require_POST
def task_submission_replace(request: HttpRequest, slug: str, submission_id: int) -> HttpResponse:
    """Replace a submission's file in one step; a refused file changes nothing and the
    submission's page says why (400; 413 past the size limit)."""
    campaign = _get_task_campaign_for_organiser(slug)
    submission = _get_submission(campaign, submission_id)
    form = TaskReplaceForm(request.POST, request.FILES)

    def store(data: dict[str, Any]) -> Any:
        file = data["file"]
        return services.task_submission_replace(
            submission=submission,
            upload=services.TaskUpload(file.name, file),
            uploaded_by=request.user,
        )

    received = uploads.upload_receive(request, form, store)
    if received.status >= 400:
        return _submission_page(
            request, campaign, submission, form, received.error, status=received.status
        )
    replaced = received.stored
    messages.success(request, f"Submission {replaced.name} replaced by {replaced.original_name}.")
    return redirect("scoring:task_submission", slug=campaign.slug, submission_id=replaced.pk)


@organiser_required
@require_POST
def task_submission_delete(request: HttpRequest, slug: str, submission_id: int) -> HttpResponse:
    campaign = _get_task_campaign_for_organiser(slug)
    submission = _get_submission(campaign, submission_id)
    services.task_submission_delete(submission=submission)
    messages.success(request, f"Submission {submission.name} deleted.")
    return redirect("scoring:task_campaign", slug=campaign.slug)


# --------------------------------------------------------------------------
# Scores


@organiser_required
@require_http_methods(["GET", "POST"])
def task_scores(request: HttpRequest, slug: str, subtask: str) -> HttpResponse:
    """Every submission of a subtask with its measures, sorted by the column asked.
    Submissions of many bytes are scored by a job: a POST starts it, and the page
    shows it until it is done (`background.task_scores`)."""
    campaign = _get_task_campaign_for_organiser(slug)
    task_subtask = _subtask_or_404(campaign, subtask)
    order = TaskSortForm(request.GET, subtask=task_subtask).order()
    context: dict[str, Any] = {
        "campaign": campaign,
        "subtask": task_subtask,
        "subtasks": task_selectors.campaign_subtasks(campaign),
        "headers": _headers(subtasks.NAME, task_subtask.measures, order),
    }
    table = background.task_scores(
        request, campaign=campaign, subtask=task_subtask, sort=order, context=context
    )
    if request.method == "POST":  # the job is started (or was): show it
        return redirect(request.get_full_path())
    if table is None:  # scored in the background: the page offers it, then polls
        context["gold"] = campaign.task_golds.filter(subtask=task_subtask.code).first()
        return render(request, "scoring/task_scores.html", context)
    rows = [
        (row.submission, [_cell(row.scores.measures[m]) for m in task_subtask.measures])
        for row in table.rows
    ]
    context |= {"gold": table.gold, "rows": rows}
    if request.GET.get("download") == "tsv":
        return _scores_tsv(campaign, task_subtask, rows)
    return render(request, "scoring/task_scores.html", context)


def _scores_tsv(
    campaign: Campaign, subtask: Subtask, rows: list[tuple[TaskSubmission, list[str]]]
) -> HttpResponse:
    """The page's table as a file: submission, then each measure as shown (4
    decimals, empty where the official scorer has no value), in the page's order."""
    data = tsv_text(
        ["submission", *subtask.measures], ([s.name, *values] for s, values in rows)
    ).encode()
    name = f"{campaign.slug}-{subtask.code}-scores.tsv"
    return attachment(data, name, "text/tab-separated-values")


@organiser_required
@require_http_methods(["GET", "POST"])
def task_submission(request: HttpRequest, slug: str, submission_id: int) -> HttpResponse:
    """One submission's measures and each clinical case's or claim's values (from the
    job that scores its subtask, when that is too large for a request)."""
    campaign = _get_task_campaign_for_organiser(slug)
    return _submission_page(request, campaign, _get_submission(campaign, submission_id))


def _submission_page(
    request: HttpRequest,
    campaign: Campaign,
    submission: TaskSubmission,
    replace_form: TaskReplaceForm | None = None,
    replace_error: InputError | None = None,
    *,
    status: int = 200,
) -> HttpResponse:
    task_subtask = _subtask_or_404(campaign, submission.subtask)
    order = TaskSortForm(request.GET, subtask=task_subtask, documents=True).order()
    measures = task_subtask.document_measures
    context: dict[str, Any] = {
        "campaign": campaign,
        "subtask": task_subtask,
        "subtasks": task_selectors.campaign_subtasks(campaign),
        "submission": submission,
        "headers": _headers(subtasks.NAME, measures, order),
        "replace_form": replace_form or TaskReplaceForm(),
        "replace_error": replace_error,
    }
    # A POST here asks to score the subtask, unless it was a refused replacement.
    scoring = request.method == "POST" and replace_form is None
    drill = background.task_submission_documents(
        request,
        submission=submission,
        subtask=task_subtask,
        sort=order,
        context=context,
        start=scoring,
    )
    if scoring:
        return redirect(request.get_full_path())
    if drill is not None:
        context |= {
            "summary": [(m, _cell(drill.scores.measures[m])) for m in task_subtask.measures],
            "rows": [
                (document, [_cell(values[m]) for m in measures]) for document, values in drill.rows
            ],
        }
    return render(request, "scoring/task_submission.html", context, status=status)


def _headers(name: str, measures: Sequence[str], order: str) -> list[dict[str, str]]:
    """Each column's heading: the sort its link asks for (a measure best first, then
    the other way; the name in order, then reversed) and, for the sorted one, its
    direction as aria-sort says it."""
    headers = []
    for column in (name, *measures):
        first = column if column == name else f"-{column}"
        other = first.removeprefix("-") if first.startswith("-") else f"-{first}"
        current = order.removeprefix("-") == column
        headers.append(
            {
                "column": column,
                "sort": other if order == first else first,
                "aria": ("descending" if order.startswith("-") else "ascending") if current else "",
            }
        )
    return headers


def _cell(value: float | None) -> str:
    """4 decimals, as the scores of ranked runs; empty where the official scorer has
    no value (NaN), which the templates show as a dash."""
    if value is None or math.isnan(value):
        return ""
    return f"{value:.4f}"
