from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import Token

from workbench import jobs, services
from workbench.models import Job
from workbench.roles import (
    assessor_accounts,
    is_organiser,
    is_participant,
    may_manage_token,
    organiser_required,
)

TOKEN_PAGE = "workbench/tokens.html"


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Organisers land on their campaigns, participants on their teams, assessors on
    their assignments."""
    if is_organiser(request.user):
        return redirect("pooling:campaign_list")
    if is_participant(request.user):
        return redirect("teams:team_home")
    return redirect("judging:assessor_home")


# --------------------------------------------------------------------------
# API tokens


@dataclass(frozen=True)
class TokenRow:
    user: Any
    token: Token | None
    # The whole key, only in the answer to the request that created it.
    new_key: str = ""


def _get_token_owner_for_user(request: HttpRequest, user_id: int) -> Any:
    owner = get_object_or_404(get_user_model(), pk=user_id)
    if not may_manage_token(request.user, owner):
        raise Http404("No account of yours, nor an assessor's, has this id.")
    return owner


def _token_rows(users: list[Any], new: Token | None = None) -> list[TokenRow]:
    tokens = {t.user_id: t for t in Token.objects.filter(user__in=users)}
    return [
        TokenRow(u, tokens.get(u.pk), new.key if new and new.user_id == u.pk else "") for u in users
    ]


def _token_page(request: HttpRequest, new: Token | None = None) -> HttpResponse:
    user = request.user
    own = _token_rows([user], new)[0]
    assessors = None
    if is_organiser(user):
        accounts = list(assessor_accounts().filter(is_active=True).order_by("username"))
        assessors = _token_rows(accounts, new)
    return render(request, TOKEN_PAGE, {"own": own, "assessors": assessors})


@login_required
def api_tokens(request: HttpRequest) -> HttpResponse:
    """Your API token and, for organisers, the assessors' tokens."""
    return _token_page(request)


@never_cache  # the answer holds the key: no browser or proxy may keep it
@login_required
@require_POST
def api_token_create(request: HttpRequest, user_id: int) -> HttpResponse:
    """Create (or regenerate) a token and show its key, this once."""
    owner = _get_token_owner_for_user(request, user_id)
    token = services.token_create(user=owner)
    if request.htmx:
        row = TokenRow(owner, token, token.key)
        return render(request, f"{TOKEN_PAGE}#token-row", {"row": row})
    return _token_page(request, new=token)


@login_required
@require_POST
def api_token_revoke(request: HttpRequest, user_id: int) -> HttpResponse:
    owner = _get_token_owner_for_user(request, user_id)
    services.token_revoke(user=owner)
    if request.htmx:
        return render(request, f"{TOKEN_PAGE}#token-row", {"row": TokenRow(owner, None)})
    messages.success(request, f"Token revoked: {owner.username}'s API calls with it now get 401.")
    return redirect("api_tokens")


# --------------------------------------------------------------------------
# Jobs


def job_for_user(request: HttpRequest, job_id: int) -> Job:
    """A job its creator or an organiser may see; anyone else gets a 404."""
    job = get_object_or_404(Job.objects.select_related("campaign"), pk=job_id)
    if not (is_organiser(request.user) or job.created_by_id == request.user.pk):
        raise Http404("no such job")
    return job


@login_required
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    """A job's state, progress, log and result; the panel refreshes itself while it runs."""
    job = job_for_user(request, job_id)
    template = "workbench/job.html#job-panel" if request.htmx else "workbench/job.html"
    return render(request, template, {"job": job, "result_link": job_result_link(job)})


@organiser_required
@require_POST
def cancel_job(request: HttpRequest, job_id: int) -> HttpResponse:
    """Cancel a waiting or running job (organisers): back to its page."""
    job = job_for_user(request, job_id)
    try:
        job = jobs.job_cancel(job=job, by=request.user)
    except jobs.JobStateError as error:
        messages.error(request, f"Not cancelled: {error}.")
    else:
        if job.cancelling:
            messages.success(
                request, "Cancelling: the job stops at its next step, storing nothing."
            )
        else:
            messages.success(request, "Cancelled before it started.")
    return redirect("job_detail", job.pk)


@organiser_required
@require_POST
def retry_job(request: HttpRequest, job_id: int) -> HttpResponse:
    """Queue a failed job again (organisers): back to its page, which follows it."""
    job = job_for_user(request, job_id)
    try:
        jobs.job_retry(job=job, by=request.user)
    except jobs.JobStateError as error:
        messages.error(request, f"Not retried: {error}.")
    else:
        messages.success(request, "Queued again.")
    return redirect("job_detail", job.pk)


@login_required
def job_file(request: HttpRequest, job_id: int) -> HttpResponse:
    """The file a finished job wrote (an export), for whoever may see the job."""
    job = job_for_user(request, job_id)
    result = job.result or {}
    if job.state != Job.DONE or "file" not in result:
        raise Http404("this job has no file")
    if not default_storage.exists(result["file"]):
        raise Http404("the file of this job is gone; run the export again")
    return FileResponse(
        default_storage.open(result["file"], "rb"), as_attachment=True, filename=result["name"]
    )


def job_result_link(job: Job) -> tuple[str, str] | None:
    """(text, url) of what a finished job made, where there is a page for it."""
    result = job.result or {}
    if job.state == Job.DONE and "scores" in result:
        query = urlencode({"measures": " ".join(job.params.get("measures", []))})
        return "Open the scores", f"{reverse('scoring:pool_scores', args=[result['pool']])}?{query}"
    if job.state == Job.DONE and "report" in result:
        query = urlencode({"measure": job.params.get("measure", "map")})
        url = reverse("scoring:pool_reusability", args=[result["pool"]])
        return "Open the reusability report", f"{url}?{query}"
    if job.state == Job.DONE and "file" in result:
        return f"Download {result['name']}", reverse("job_file", args=[job.pk])
    if job.state == Job.DONE and "runs" in result:
        url = reverse("pooling:campaign_detail", args=[result["campaign"]])
        return f"Open the campaign ({len(result['runs'])} run(s) stored)", url
    if job.state == Job.DONE and "created" in result:
        url = reverse("pooling:campaign_detail", args=[result["campaign"]])
        added = f"{result['created']:,} documents added, {result['updated']:,} updated"
        return f"Open the campaign ({added})", url
    if job.state == Job.DONE and "release" in result:
        url = reverse("scoring:release_detail", args=[result["pool"], result["version"]])
        return f"Open release {result['version']} of pool {result['pool']}", url
    if job.state == Job.DONE and "pool" in result:
        url = reverse("pooling:pool_detail", args=[result["campaign"], result["pool"]])
        if "revision" in result:
            return f"Open pool {result['pool']} (revision {result['revision']})", url
        return f"Open pool {result['pool']}", url
    return None
