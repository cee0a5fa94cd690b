"""Organiser pages: campaigns, their topics, documents and runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from pooling import run_services, selectors, services
from pooling.errors import RunInUse
from pooling.forms import (
    AnswerUploadForm,
    CampaignEditForm,
    CampaignForm,
    DocumentUploadForm,
    RunReplaceForm,
    RunUploadForm,
    TopicUploadForm,
)
from pooling.models import Campaign, Run
from workbench import uploads
from workbench.core.problems import InputError
from workbench.models import Job
from workbench.roles import organiser_required


def _get_campaign_for_organiser(slug: str) -> Campaign:
    return get_object_or_404(Campaign, slug=slug)


@organiser_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    campaigns = Campaign.objects.annotate(
        n_topics=Count("topics", distinct=True), n_runs=Count("runs", distinct=True)
    )
    return render(request, "pooling/campaign_list.html", {"campaigns": campaigns})


@organiser_required
def campaign_create(request: HttpRequest) -> HttpResponse:
    form = CampaignForm(request.POST if request.method == "POST" else None)
    if form.is_bound and form.is_valid():
        try:
            campaign = services.campaign_create(created_by=request.user, **form.campaign_data())
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, f"Campaign {campaign.name} created.")
            return redirect("pooling:campaign_detail", slug=campaign.slug)
    return _campaign_form(request, form)


@organiser_required
def campaign_edit(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _get_campaign_for_organiser(slug)
    form = CampaignEditForm(
        request.POST if request.method == "POST" else None,
        initial=CampaignEditForm.initial_for(campaign),
    )
    if form.is_bound and form.is_valid():
        try:
            campaign = services.campaign_update(campaign=campaign, **form.campaign_data())
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, f"Campaign {campaign.name} saved.")
            return redirect("pooling:campaign_detail", slug=campaign.slug)
    return _campaign_form(request, form, campaign)


def _campaign_form(
    request: HttpRequest, form: CampaignForm, campaign: Campaign | None = None
) -> HttpResponse:
    """The form, new or with its errors (then 400)."""
    context = {
        "form": form,
        "campaign": campaign,
        "schema_lock": selectors.campaign_schema_lock(campaign) if campaign else "",
        "task_kind_lock": selectors.campaign_task_kind_lock(campaign) if campaign else "",
    }
    status = 400 if form.is_bound else 200
    return render(request, "pooling/campaign_form.html", context, status=status)


@organiser_required
def campaign_detail(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _get_campaign_for_organiser(slug)
    if campaign.is_task:  # no runs or pools: its gold and submissions (the scoring app)
        return redirect("scoring:task_campaign", slug=campaign.slug)
    return render(request, "pooling/campaign_detail.html", _detail_context(campaign))


def _detail_context(campaign: Campaign, **forms: object) -> dict[str, object]:
    topic_ids = list(campaign.topics.values_list("topic_id", flat=True))
    runs = list(campaign.runs.select_related("team").annotate(n_pools=Count("pools")))
    for run in runs:
        run.missing_topics = [t for t in topic_ids if t not in run.documents_per_topic]
    return {
        "campaign": campaign,
        "budget": selectors.campaign_budget(campaign),
        "topics": campaign.topics.all(),
        "n_documents": campaign.documents.count(),
        "runs": runs,
        "pools": campaign.pools.annotate(
            n_entries=Count("entries"), n_sampled=Count("entries", filter=Q(entries__sampled=True))
        ),
        "topic_form": forms.get("topic_form") or TopicUploadForm(),
        "answer_form": forms.get("answer_form") or AnswerUploadForm(),
        "document_form": forms.get("document_form") or DocumentUploadForm(),
        "run_form": forms.get("run_form") or RunUploadForm(),
        "upload_errors": forms.get("upload_errors", {}),
        "upload_stored": forms.get("upload_stored", {}),
    }


@dataclass(frozen=True)
class Stored:
    """What an upload stored; `rejected` lists the files refused while others were stored."""

    message: str
    rejected: InputError | None = None


def _upload_response(
    request: HttpRequest,
    campaign: Campaign,
    which: str,
    form: object,
    error: InputError | None,
    status: int = 400,
) -> HttpResponse:
    """Re-render the page (or, for htmx, only the upload card) with the errors."""
    context = _detail_context(campaign, **{f"{which}_form": form, "upload_errors": {which: error}})
    template = "pooling/campaign_detail.html"
    if request.htmx:
        template += f"#{which}-upload"
    return render(request, template, context, status=status)


def _partly_stored_response(
    request: HttpRequest, campaign: Campaign, which: str, stored: Stored
) -> HttpResponse:
    """Some files stored, others rejected: a success, with both said in the upload card.

    The whole page is rendered so that its counts and tables show what was
    stored; htmx swaps its <main> in place of the current one.
    """
    context = _detail_context(
        campaign, upload_errors={which: stored.rejected}, upload_stored={which: stored.message}
    )
    response = render(request, "pooling/campaign_detail.html", context)
    if request.htmx:
        response["HX-Retarget"] = "main"
        response["HX-Reselect"] = "main"
        response["HX-Reswap"] = "outerHTML"
    return response


def _uploaded(request: HttpRequest, campaign: Campaign, message: str) -> HttpResponse:
    messages.success(request, message)
    response = redirect("pooling:campaign_detail", slug=campaign.slug)
    if request.htmx:
        # Refresh the whole page so that counts and tables show the new data.
        response = HttpResponse(status=204, headers={"HX-Redirect": response.url})
    return response


def _handle_upload(
    request: HttpRequest,
    slug: str,
    which: str,
    form_class: type[forms.Form],
    store: Callable[[HttpRequest, Campaign, dict[str, Any]], Stored | Job],
) -> HttpResponse:
    """Check the form, store the upload, and answer with the errors or a message."""
    campaign = _get_campaign_for_organiser(slug)
    form = form_class(request.POST, request.FILES)
    received = uploads.upload_receive(request, form, lambda data: store(request, campaign, data))
    if received.status >= 400:
        return _upload_response(request, campaign, which, form, received.error, received.status)
    if isinstance(received.stored, Job):
        return _to_job(request, received.stored)
    if received.stored.rejected is not None:
        return _partly_stored_response(request, campaign, which, received.stored)
    return _uploaded(request, campaign, received.stored.message)


def _to_job(request: HttpRequest, job: Job) -> HttpResponse:
    """The job's page, where its progress and outcome show."""
    response = redirect("job_detail", job_id=job.pk)
    if request.htmx:
        response = HttpResponse(status=204, headers={"HX-Redirect": response.url})
    return response


def _store_topics(request: HttpRequest, campaign: Campaign, data: dict[str, Any]) -> Stored:
    upload = data["file"]
    result = services.topics_import(
        campaign=campaign, data=upload.read(), name=upload.name, format=data["format"] or None
    )
    return Stored(f"Topics from {upload.name}: {result}.")


def _store_answers(request: HttpRequest, campaign: Campaign, data: dict[str, Any]) -> Stored:
    upload = data["file"]
    result = services.topic_answers_import(campaign=campaign, data=upload.read(), name=upload.name)
    return Stored(f"Accepted answers from {upload.name}: {result}.")


def _store_documents(
    request: HttpRequest, campaign: Campaign, data: dict[str, Any]
) -> Stored | Job:
    upload = data["file"]
    result = services.documents_upload(
        campaign=campaign, file=upload, format=data["format"] or None, uploaded_by=request.user
    )
    if isinstance(result, Job):
        return result
    return Stored(f"Documents from {upload.name}: {result}.")


def _store_runs(request: HttpRequest, campaign: Campaign, data: dict[str, Any]) -> Stored | Job:
    try:
        runs = run_services.runs_upload(
            campaign=campaign,
            files=data["files"],
            uploaded_by=request.user,
            keep_valid=data["keep_valid"],
        )
    except run_services.RunsPartlyImported as error:
        if not error.stored:
            raise
        return Stored(_stored_runs_message(error.stored), rejected=error)
    if isinstance(runs, Job):
        return runs
    return Stored(_stored_runs_message(runs))


def _stored_runs_message(runs: list[Any]) -> str:
    return f"Stored {len(runs)} run(s): {', '.join(run.tag for run in runs)}."


@organiser_required
@require_POST
def topics_upload(request: HttpRequest, slug: str) -> HttpResponse:
    return _handle_upload(request, slug, "topic", TopicUploadForm, _store_topics)


@organiser_required
@require_POST
def answers_upload(request: HttpRequest, slug: str) -> HttpResponse:
    return _handle_upload(request, slug, "answer", AnswerUploadForm, _store_answers)


@organiser_required
@require_POST
def documents_upload(request: HttpRequest, slug: str) -> HttpResponse:
    return _handle_upload(request, slug, "document", DocumentUploadForm, _store_documents)


@organiser_required
@require_POST
def runs_upload(request: HttpRequest, slug: str) -> HttpResponse:
    return _handle_upload(request, slug, "run", RunUploadForm, _store_runs)


def _get_run(campaign: Campaign, run_id: int) -> Run:
    return get_object_or_404(Run, pk=run_id, campaign=campaign)


@organiser_required
@require_POST
def run_delete(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    campaign = _get_campaign_for_organiser(slug)
    run = _get_run(campaign, run_id)
    try:
        run_services.run_delete(run=run)
    except RunInUse as error:
        messages.error(request, f"Not deleted: {error}.")
    else:
        messages.success(request, f"Run {run.tag} deleted.")
    return redirect("pooling:campaign_detail", slug=campaign.slug)


@organiser_required
@require_POST
def run_replace(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    """Replace an unpooled run by a corrected file; its errors show on the campaign page."""
    campaign = _get_campaign_for_organiser(slug)
    run = _get_run(campaign, run_id)
    form = RunReplaceForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, f"Run {run.tag} not replaced: {form.errors['file'][0]}")
        return redirect("pooling:campaign_detail", slug=campaign.slug)
    upload = form.cleaned_data["file"]
    try:
        new = run_services.run_replace(
            run=run,
            upload=run_services.RunUpload(upload.name, upload.read()),
            uploaded_by=request.user,
        )
    except RunInUse as error:
        messages.error(request, f"Not replaced: {error}.")
    except InputError as error:
        context = _detail_context(campaign, upload_errors={"run": error})
        return render(request, "pooling/campaign_detail.html", context, status=400)
    else:
        messages.success(request, f"Run {run.tag} replaced by {new.tag} from {upload.name}.")
    return redirect("pooling:campaign_detail", slug=campaign.slug)
