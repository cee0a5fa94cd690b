"""Reads of participation shared by the team pages, the team API and the organiser.

What a team is shown is only its own: its runs, their checks, the campaign's
rules for submitting; never another team's runs, a pool, a judgment or an
assignment (the scores, once released, come from `scoring`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, QuerySet
from django.shortcuts import get_object_or_404

from pooling.core.spec import PoolSpec
from pooling.models import Campaign, Pool, Run, Team


def teams_of(user: Any) -> QuerySet[Team]:
    """The user's teams, with their campaigns."""
    if not user.is_authenticated:
        return Team.objects.none()
    return user.teams.select_related("campaign").order_by("campaign__name", "name")


def team_for_member_or_404(user: Any, team_id: int) -> Team:
    """The team, for one of its members; anyone else (organisers too) gets a 404."""
    return get_object_or_404(teams_of(user), pk=team_id)


def team_runs(team: Team) -> list[Run]:
    """The team's runs by precedence, each with `missing_topics`: the campaign's
    topics it has no ranking for (what its check found worth saying)."""
    topic_ids = list(team.campaign.topics.values_list("topic_id", flat=True))
    runs = list(team.runs.select_related("uploaded_by").order_by("precedence", "tag"))
    for run in runs:
        run.missing_topics = [t for t in topic_ids if t not in run.documents_per_topic]
    return runs


def run_report(run: Run) -> dict[str, Any]:
    """What a team is told of one of its runs (`team_runs` gives `missing_topics`)."""
    return {
        "id": run.pk,
        "tag": run.tag,
        "precedence": run.precedence,
        "late": run.late,
        "original_name": run.original_name,
        "sha256": run.sha256,
        "uploaded_by": run.uploaded_by.username if run.uploaded_by else None,
        "uploaded_at": run.uploaded_at,
        "line_count": run.line_count,
        "topic_count": run.topic_count,
        "depth": run.depth,
        "documents_per_topic": run.documents_per_topic,
        "missing_topics": getattr(run, "missing_topics", []),
    }


@dataclass(frozen=True)
class LateRun:
    """A run accepted after the deadline, and the pools it can still be added to."""

    run: Run
    pools: list[Pool]


def campaign_teams(campaign: Campaign) -> QuerySet[Team]:
    return campaign.teams.prefetch_related("members").annotate(n_runs=Count("runs"))


def late_runs(campaign: Campaign) -> list[LateRun]:
    """The campaign's late runs, each with the open pools that take late runs and
    do not have it yet (a late-run addition, on the pool's page)."""
    pools = [
        pool
        for pool in campaign.pools.filter(retired_at__isnull=True).prefetch_related("runs")
        if PoolSpec.from_dict(pool.spec).accepts_late_runs
    ]
    runs = campaign.runs.filter(late=True).select_related("team").order_by("team__name", "tag")
    return [LateRun(run, [pool for pool in pools if run not in pool.runs.all()]) for run in runs]
