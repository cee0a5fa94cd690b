"""Writes for participation: teams, their runs and precedence, the organiser's
submission settings (releases of results are `scoring.services.release_create`).

A team's run is checked exactly as an organiser's upload is (`run_services.runs_check`,
problems as `file:line: reason`) and stored by the same `run_services.runs_store`;
the deadline and the most runs per team are checked first. Nothing is stored
when anything is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from pooling import answer_services, run_services
from pooling.errors import SubmissionRefused, TeamError
from pooling.models import AnswerRun, Campaign, Run, Team
from pooling.run_services import RunUpload
from workbench.core.id_limits import control_problem
from workbench.core.problems import InputError
from workbench.roles import is_organiser

# --------------------------------------------------------------------------
# The organiser's settings


def campaign_submissions_update(
    *,
    campaign: Campaign,
    submission_deadline: datetime | None,
    max_runs_per_team: int | None,
    pooled_runs_per_team: int | None,
) -> Campaign:
    """Set the deadline, the most runs a team may submit and how many runs per team a
    pool takes (None: none, no limit, every run). A lower limit leaves stored runs be."""
    limits = (
        ("most runs per team", max_runs_per_team),
        ("runs pooled per team", pooled_runs_per_team),
    )
    for label, value in limits:
        if value is not None and value < 1:
            raise TeamError(f"{label} must be 1 or more, not {value}")
    campaign.submission_deadline = submission_deadline
    campaign.max_runs_per_team = max_runs_per_team
    campaign.pooled_runs_per_team = pooled_runs_per_team
    campaign.save(
        update_fields=["submission_deadline", "max_runs_per_team", "pooled_runs_per_team"]
    )
    return campaign


# --------------------------------------------------------------------------
# Teams


def _check_members(campaign: Campaign, members: Sequence[Any], team: Team | None) -> None:
    """A participant is neither an organiser nor an assessor, and in one team per campaign."""
    problems = []
    for user in members:
        if is_organiser(user):
            problems.append(f"{user.username} is an organiser")
        elif user.assignments.exists() or user.judgments.exists():
            problems.append(f"{user.username} is an assessor (has assignments or judgments)")
        other = user.teams.filter(campaign=campaign).exclude(pk=getattr(team, "pk", None)).first()
        if other is not None:
            problems.append(f"{user.username} is already in team {other.name}")
    if problems:
        raise TeamError("; ".join(problems) + ": a participant is only that")


def team_create(*, campaign: Campaign, name: str, members: Iterable[Any] = ()) -> Team:
    name, members = name.strip(), list(members)
    if not name:
        raise TeamError("give the team a name")
    problem = control_problem("team name", name)
    if problem:
        raise TeamError(problem)
    if campaign.is_task:
        raise TeamError(f"{campaign.name} is a task campaign: teams submit runs to ranked ones")
    if campaign.teams.filter(name=name).exists():
        raise TeamError(f"{campaign.name} already has a team named {name!r}")
    _check_members(campaign, members, None)
    with transaction.atomic():
        team = Team.objects.create(campaign=campaign, name=name)
        team.members.set(members)
    return team


def team_members_set(*, team: Team, members: Iterable[Any]) -> Team:
    members = list(members)
    _check_members(team.campaign, members, team)
    team.members.set(members)
    return team


def team_late_runs_accept(*, team: Team, count: int = 1) -> Team:
    """Accept `count` more runs from the team after the deadline (each stored marked late)."""
    if count < 1:
        raise TeamError(f"accept 1 or more late runs, not {count}")
    with transaction.atomic():
        team = Team.objects.select_for_update().get(pk=team.pk)
        team.late_runs_accepted += count
        team.save(update_fields=["late_runs_accepted"])
    return team


# --------------------------------------------------------------------------
# A team's runs


def submissions_open(campaign: Campaign, now: datetime | None = None) -> bool:
    """Whether runs come in on time: no deadline, or not yet past it."""
    deadline = campaign.submission_deadline
    return deadline is None or (now or timezone.now()) <= deadline


def deadline_text(campaign: Campaign) -> str:
    deadline = campaign.submission_deadline
    return f"{deadline:%Y-%m-%d %H:%M} UTC" if deadline else "none"


def team_run_submit(*, team: Team, upload: RunUpload, uploaded_by: Any = None) -> Run:
    """Check and store one run file of the team, last in its precedence.

    Refused with SubmissionRefused after the deadline (unless the organiser
    accepted a late run from the team: then it is stored marked late) or once
    the team has the most runs the campaign takes; with InputError for any
    problem of the file, found as for an organiser's upload. Nothing is stored
    when refused.
    """
    try:
        with transaction.atomic():
            team = Team.objects.select_for_update().select_related("campaign").get(pk=team.pk)
            campaign = team.campaign
            late = not submissions_open(campaign)
            if late and not team.late_runs_accepted:
                raise SubmissionRefused(
                    f"the submission deadline ({deadline_text(campaign)}) has passed: "
                    f"{upload.name} is not accepted. Ask the organiser to accept a late run."
                )
            held, limit = team.runs.count(), campaign.max_runs_per_team
            if limit is not None and held >= limit:
                raise SubmissionRefused(
                    f"team {team.name} already has {held} run(s), the most {campaign.name} "
                    f"takes from one team: {upload.name} is not accepted."
                )
            [parsed] = run_services.runs_check(campaign=campaign, uploads=[upload])
            if not parsed.ok:
                raise InputError.from_log(parsed.problems)
            last = team.runs.aggregate(p=Max("precedence"))["p"] or 0
            [run] = run_services.runs_store(
                campaign=campaign,
                accepted=[(upload, parsed)],
                uploaded_by=uploaded_by,
                team=team,
                precedence=last + 1,
                late=late,
            )
            if late:
                team.late_runs_accepted -= 1
                team.save(update_fields=["late_runs_accepted"])
    except IntegrityError:
        # Two uploads of one team at once where rows are not locked (SQLite): the
        # second finds the precedence taken and stores nothing.
        raise SubmissionRefused(
            f"another run of team {team.name} was being stored at the same time: "
            f"{upload.name} is not accepted; send it again."
        ) from None
    return run


def team_answers_submit(
    *, team: Team, name: str, data: bytes, uploaded_by: Any = None
) -> list[AnswerRun]:
    """Check and store a file of the team's generated answers (one or more runs), as
    `team_run_submit` does for ranked runs: refused after the deadline unless the
    organiser accepted late runs (each run of the file uses one), or past the most
    runs a team may send; InputError for any problem of the file. Nothing is stored
    when refused."""
    with transaction.atomic():
        team = Team.objects.select_for_update().select_related("campaign").get(pk=team.pk)
        campaign = team.campaign
        late = not submissions_open(campaign)
        if late and not team.late_runs_accepted:
            raise SubmissionRefused(
                f"the submission deadline ({deadline_text(campaign)}) has passed: "
                f"{name} is not accepted. Ask the organiser to accept a late run."
            )
        runs = answer_services.answer_runs_import(
            campaign=campaign, data=data, name=name, uploaded_by=uploaded_by, team=team
        )
        held, limit = team.answer_runs.count(), campaign.max_runs_per_team
        if limit is not None and held > limit:
            raise SubmissionRefused(
                f"team {team.name} would have {held} run(s), more than the {limit} "
                f"{campaign.name} takes from one team: {name} is not accepted."
            )
        if late:
            if len(runs) > team.late_runs_accepted:
                raise SubmissionRefused(
                    f"{name} holds {len(runs)} runs; the organiser accepted "
                    f"{team.late_runs_accepted} late run(s) from team {team.name}."
                )
            team.late_runs_accepted -= len(runs)
            team.save(update_fields=["late_runs_accepted"])
    return runs


def team_run_precedence_set(*, team: Team, order: Sequence[str]) -> list[Run]:
    """Give the team's runs the precedence of their tags' place in `order` (1 = first).

    `order` names every run of the team once; it changes only while submissions
    are open, since pools are built from it after the deadline.
    """
    if not submissions_open(team.campaign):
        raise TeamError(
            f"the submission deadline ({deadline_text(team.campaign)}) has passed: "
            "the precedence of the runs no longer changes"
        )
    with transaction.atomic():
        runs = {run.tag: run for run in team.runs.select_for_update()}
        repeated = sorted({tag for tag in order if list(order).count(tag) > 1})
        unknown = [tag for tag in order if tag not in runs]
        left_out = sorted(set(runs) - set(order))
        problems = [
            *([f"named twice: {', '.join(repeated)}"] if repeated else []),
            *([f"not runs of team {team.name}: {', '.join(unknown)}"] if unknown else []),
            *([f"left out: {', '.join(left_out)}"] if left_out else []),
        ]
        if problems:
            raise TeamError("give every run of the team once; " + "; ".join(problems))
        # Through numbers no run holds, so that no two runs share one on the way.
        top = max((run.precedence or 0 for run in runs.values()), default=0)
        for step in (top, 0):
            for place, tag in enumerate(order, start=1):
                runs[tag].precedence = step + place
            Run.objects.bulk_update(list(runs.values()), ["precedence"])
    return [runs[tag] for tag in order]


def team_run_withdraw(*, team: Team, run: Run) -> None:
    """Withdraw one of the team's runs while submissions are open: the run and its
    files go, and the runs after it move up in the precedence. Refused with
    TeamError after the deadline (pools are built from what was sent by then) or
    for another team's run, and with RunInUse for a run a pool was built from."""
    if run.team_id != team.pk:
        raise TeamError(f"run {run.tag} is not a run of team {team.name}")
    if not submissions_open(team.campaign):
        raise TeamError(
            f"the submission deadline ({deadline_text(team.campaign)}) has passed: "
            f"run {run.tag} stays; ask the organiser"
        )
    with transaction.atomic():
        others = list(
            team.runs.select_for_update().exclude(pk=run.pk).order_by("precedence", "tag")
        )
        run_services.run_delete(run=run)
        team_run_precedence_set(team=team, order=[other.tag for other in others])
