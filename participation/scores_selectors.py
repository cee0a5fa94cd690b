"""What a team sees of the releases its campaign was given (`scoring.models.Release`):
its own runs' scores and the leaderboard, exactly as released, whatever happens
to the labels afterwards. A withdrawn release is not shown; no other team's run
is read or named but on the leaderboard, which ranks every run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.http import Http404

from pooling.models import Team
from scoring import release_selectors
from scoring.core.analysis.leaderboard import Leaderboard
from scoring.core.tasks.citations import MEASURES as CITATION_MEASURES
from scoring.core.tasks.nuggets import MEASURES as NUGGET_MEASURES
from scoring.models import AnswerScoresRelease, Release
from scoring.selectors import PoolScores, ScoringError


class ScoresNotReleased(ScoringError):
    """The organiser has released nothing to the team's campaign (or withdrew it)."""


class NoRunToScore(ScoringError):
    """The team had sent no run by the release."""


def team_releases(team: Team) -> list[Release]:
    """The releases the team was given, newest first."""
    return list(release_selectors.team_releases(team))


def team_release(team: Team, release_id: int | None = None) -> Release:
    """The release `release_id` if the team was given it (Http404 otherwise), else the
    newest; ScoresNotReleased when there is none."""
    releases = release_selectors.team_releases(team)
    if release_id is not None:
        release = releases.filter(pk=release_id).first()
        if release is None:
            raise Http404("no such release for this team")
        return release
    release = releases.first()
    if release is None:
        raise ScoresNotReleased("the organiser has not released the scores yet")
    return release


def team_scores(
    *,
    team: Team,
    release: Release,
    measures: list[str] | None = None,
    per_topic: bool = False,
) -> PoolScores:
    """The team's runs' scores as `release` holds them; NoRunToScore when the release
    has none of them, ScoringError for a measure it did not score."""
    tags = list(release.runs.filter(team=team).values_list("tag", flat=True))
    if not tags:
        raise NoRunToScore(f"team {team.name} had no run in this release")
    return release_selectors.released_scores(
        release, tags=tags, measures=measures, per_topic=per_topic
    )


def score_records(report: PoolScores) -> list[dict[str, Any]]:
    """[{run_id, query_id, measure, value}] with null for NaN (JSON has no NaN)."""
    return [
        {
            **row,
            "value": None
            if isinstance(row["value"], float) and math.isnan(row["value"])
            else row["value"],
        }
        for row in report.scores[["run_id", "query_id", "measure", "value"]].to_dict("records")
    ]


@dataclass(frozen=True)
class PublicLeaderboard:
    """Every run of the release ranked as released, each with its team then (blank
    for the organiser's own runs): what participants see."""

    board: Leaderboard
    teams: dict[str, str]
    release: Release


def public_leaderboard(*, release: Release) -> PublicLeaderboard:
    """The release's leaderboard as stored (means and intervals only rest on the
    released judgments, which no participant sees)."""
    return PublicLeaderboard(
        release_selectors.release_leaderboard(release),
        release_selectors.release_teams(release),
        release,
    )


def release_record(release: Release) -> dict[str, Any]:
    """A release as a team is told of it: no pool, no organiser's name."""
    return {
        "id": release.pk,
        "version": release.version,
        "campaign": release.pool.campaign.slug,
        "released_at": release.released_at,
        "reason": release.reason,
        "measure": release.measure,
        "measures": release.measures,
        "leaderboard_options": release.leaderboard_options,
        "labels": release.label_policy.get("labels"),
        "judged_topics": release.judged_topics,
    }


def team_answer_scores(team: Team, release: AnswerScoresRelease) -> dict[str, Any]:
    """The team's own runs' rows of a release of answer scores, nothing of the others'
    (each row with its `values` in the order of `measures`)."""
    own = set(team.answer_runs.values_list("tag", flat=True))
    nuggets, citations = release.nuggets, release.citations
    unjudged = nuggets.get("unjudged", {})

    def rows(records: list[dict[str, Any]], measures: tuple[str, ...]) -> list[dict[str, Any]]:
        return [
            {**row, "unjudged": unjudged.get(row["run"], 0), "values": [row[m] for m in measures]}
            for row in records
            if row["run"] in own
        ]

    return {
        "measures": NUGGET_MEASURES,
        "runs": rows(nuggets["runs"], NUGGET_MEASURES),
        "per_topic": rows(nuggets["per_topic"], NUGGET_MEASURES),
        "support_measures": CITATION_MEASURES,
        "support_runs": rows(citations["runs"], CITATION_MEASURES),
    }
