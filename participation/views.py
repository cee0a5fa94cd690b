"""Participation pages: the organiser's teams and settings, and each team's own page.

A team member sees their team's page only (any other team is a 404): its
runs, their checks, the upload form while submissions are open, and the
precedence of its runs; never another team, a pool, a judgment or an
assignment. The releases it was given are on `teams:team_scores` and
`teams:team_leaderboard`.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from participation import selectors as team_selectors
from participation import services as team_services
from participation.forms import (
    LateRunsForm,
    PrecedenceForm,
    SubmissionSettingsForm,
    TeamForm,
    TeamMembersForm,
    TeamRunUploadForm,
)
from participation.scores_selectors import team_releases
from pooling.errors import RunInUse, SubmissionRefused, TeamError
from pooling.models import Campaign, Run, Team
from pooling.run_services import RunUpload
from scoring import release_selectors
from workbench import uploads
from workbench.core.problems import InputError
from workbench.roles import organiser_required

# --------------------------------------------------------------------------
# Organisers


def _campaign(slug: str) -> Campaign:
    return get_object_or_404(Campaign, slug=slug)


def _team(campaign: Campaign, team_id: int) -> Team:
    return get_object_or_404(Team, pk=team_id, campaign=campaign)


def _teams_page(
    request: HttpRequest, campaign: Campaign, status: int = 200, **forms: Any
) -> HttpResponse:
    teams = list(team_selectors.campaign_teams(campaign))
    for team in teams:
        team.members_form = TeamMembersForm(
            initial={"members": " ".join(m.username for m in team.members.all())}
        )
    context = {
        "campaign": campaign,
        "teams": teams,
        "settings_form": forms.get("settings_form") or SubmissionSettingsForm(instance=campaign),
        "team_form": forms.get("team_form") or TeamForm(),
        "pools": list(campaign.pools.order_by("-created_at")),
        "releases": release_selectors.campaign_releases(campaign),
        "late_runs": team_selectors.late_runs(campaign),
        "error": forms.get("error", ""),
    }
    return render(request, "participation/campaign_teams.html", context, status=status)


def _back(campaign: Campaign) -> HttpResponse:
    return redirect("participation:campaign_teams", slug=campaign.slug)


@organiser_required
def campaign_teams(request: HttpRequest, slug: str) -> HttpResponse:
    """The campaign's teams, its submission settings, late runs and its releases."""
    return _teams_page(request, _campaign(slug))


@organiser_required
@require_POST
def submission_settings(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _campaign(slug)
    form = SubmissionSettingsForm(request.POST, instance=Campaign.objects.get(pk=campaign.pk))
    if not form.is_valid():
        return _teams_page(request, campaign, 400, settings_form=form)
    try:
        team_services.campaign_submissions_update(campaign=campaign, **form.cleaned_data)
    except TeamError as error:
        return _teams_page(request, campaign, 400, settings_form=form, error=str(error))
    messages.success(request, "Submission settings saved.")
    return _back(campaign)


@organiser_required
@require_POST
def team_create(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _campaign(slug)
    form = TeamForm(request.POST)
    if not form.is_valid():
        return _teams_page(request, campaign, 400, team_form=form)
    try:
        team = team_services.team_create(campaign=campaign, **form.cleaned_data)
    except TeamError as error:
        form.add_error(None, str(error))
        return _teams_page(request, campaign, 400, team_form=form)
    messages.success(request, f"Team {team.name} registered.")
    return _back(campaign)


@organiser_required
@require_POST
def team_members(request: HttpRequest, slug: str, team_id: int) -> HttpResponse:
    campaign = _campaign(slug)
    team = _team(campaign, team_id)
    form = TeamMembersForm(request.POST)
    try:
        if not form.is_valid():
            raise TeamError(_form_errors(form))
        team_services.team_members_set(team=team, members=form.cleaned_data["members"])
    except TeamError as error:
        return _teams_page(request, campaign, 400, error=f"Team {team.name}: {error}")
    messages.success(request, f"Members of {team.name} saved.")
    return _back(campaign)


@organiser_required
@require_POST
def team_accept_late(request: HttpRequest, slug: str, team_id: int) -> HttpResponse:
    campaign = _campaign(slug)
    team = _team(campaign, team_id)
    form = LateRunsForm(request.POST)
    if not form.is_valid():
        return _teams_page(request, campaign, 400, error=f"Team {team.name}: {_form_errors(form)}")
    team = team_services.team_late_runs_accept(team=team, count=form.cleaned_data["count"])
    messages.success(
        request, f"{team.name} may now send {team.late_runs_accepted} run(s) after the deadline."
    )
    return _back(campaign)


def _form_errors(form: forms.Form) -> str:
    return "; ".join(message for messages in form.errors.values() for message in messages)


# --------------------------------------------------------------------------
# Participants


@login_required
def team_home(request: HttpRequest) -> HttpResponse:
    """The user's teams; with one, its page."""
    teams = list(team_selectors.teams_of(request.user))
    if len(teams) == 1:
        return redirect("teams:team_detail", team_id=teams[0].pk)
    return render(request, "participation/team_home.html", {"teams": teams})


def _team_page(
    request: HttpRequest,
    team: Team,
    *,
    upload_form: TeamRunUploadForm | None = None,
    upload_error: InputError | None = None,
    refused: str = "",
    precedence_form: PrecedenceForm | None = None,
    status: int = 200,
) -> HttpResponse:
    campaign = team.campaign
    runs = team_selectors.team_runs(team)
    context = {
        "team": team,
        "campaign": campaign,
        "runs": runs,
        "topic_ids": list(campaign.topics.values_list("topic_id", flat=True)),
        "open": team_services.submissions_open(campaign),
        "deadline": team_services.deadline_text(campaign),
        "runs_left": None
        if campaign.max_runs_per_team is None
        else max(campaign.max_runs_per_team - len(runs), 0),
        "upload_form": upload_form or TeamRunUploadForm(),
        "upload_error": upload_error,
        "refused": refused,
        "precedence_form": precedence_form or PrecedenceForm(runs=runs),
        "releases": team_releases(team),
        "answer_runs": team.answer_runs.annotate(n_answers=Count("answers")).order_by("tag"),
    }
    return render(request, "participation/team_detail.html", context, status=status)


@login_required
def team_detail(request: HttpRequest, team_id: int) -> HttpResponse:
    team = team_selectors.team_for_member_or_404(request.user, team_id)
    return _team_page(request, team)


@login_required
@require_POST
def team_run_upload(request: HttpRequest, team_id: int) -> HttpResponse:
    """Check and store one run of the team, or show why not (nothing stored)."""
    team = team_selectors.team_for_member_or_404(request.user, team_id)
    form = TeamRunUploadForm(request.POST, request.FILES)

    def store(data: dict[str, Any]) -> Run:
        file = data["file"]
        return team_services.team_run_submit(
            team=team, upload=RunUpload(file.name, file.read()), uploaded_by=request.user
        )

    try:
        received = uploads.upload_receive(request, form, store)
    except SubmissionRefused as error:
        return _team_page(request, team, upload_form=form, refused=str(error), status=400)
    if received.status >= 400:
        return _team_page(
            request, team, upload_form=form, upload_error=received.error, status=received.status
        )
    run = received.stored
    late = " after the deadline, accepted late" if run.late else ""
    messages.success(
        request,
        f"Run {run.tag} stored{late}: precedence {run.precedence}, {run.line_count:,} lines.",
    )
    return redirect("teams:team_detail", team_id=team.pk)


@login_required
@require_POST
def team_answers_upload(request: HttpRequest, team_id: int) -> HttpResponse:
    """Check and store a file of the team's generated answers, or show why not."""
    team = team_selectors.team_for_member_or_404(request.user, team_id)
    too_large = uploads.refused(request)
    form = TeamRunUploadForm(request.POST, request.FILES)
    if too_large:
        form.is_valid()
        form.add_error(None, uploads.limit_message(too_large))
        return _team_page(request, team, upload_form=form, status=413)
    if not form.is_valid():
        return _team_page(request, team, upload_form=form, status=400)
    file = form.cleaned_data["file"]
    try:
        runs = team_services.team_answers_submit(
            team=team, name=file.name, data=file.read(), uploaded_by=request.user
        )
    except SubmissionRefused as error:
        return _team_page(request, team, upload_form=form, refused=str(error), status=400)
    except InputError as error:
        return _team_page(request, team, upload_form=form, upload_error=error, status=400)
    messages.success(
        request, f"Stored {len(runs)} run(s) of answers: " + ", ".join(r.tag for r in runs)
    )
    return redirect("teams:team_detail", team_id=team.pk)


@login_required
@require_POST
def team_precedence(request: HttpRequest, team_id: int) -> HttpResponse:
    team = team_selectors.team_for_member_or_404(request.user, team_id)
    form = PrecedenceForm(request.POST, runs=team_selectors.team_runs(team))
    if not form.is_valid():
        return _team_page(request, team, precedence_form=form, status=400)
    try:
        team_services.team_run_precedence_set(team=team, order=form.cleaned_data["order"])
    except TeamError as error:
        form.add_error(None, str(error))
        return _team_page(request, team, precedence_form=form, status=400)
    messages.success(request, f"Precedence saved: {', '.join(form.cleaned_data['order'])}.")
    return redirect("teams:team_detail", team_id=team.pk)


@login_required
def team_run_withdraw(request: HttpRequest, team_id: int, run_id: int) -> HttpResponse:
    """GET asks to confirm; POST withdraws the run (before the deadline, not pooled)."""
    team = team_selectors.team_for_member_or_404(request.user, team_id)
    run = get_object_or_404(Run, pk=run_id, team=team)
    if request.method != "POST":
        context = {"team": team, "campaign": team.campaign, "run": run}
        return render(request, "participation/team_run_withdraw.html", context)
    try:
        team_services.team_run_withdraw(team=team, run=run)
    except (TeamError, RunInUse) as error:
        return _team_page(request, team, refused=str(error), status=400)
    messages.success(request, f"Run {run.tag} withdrawn.")
    return redirect("teams:team_detail", team_id=team.pk)
