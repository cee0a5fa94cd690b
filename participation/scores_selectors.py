"""A team's own scores, once the organiser has released them (`participation.services`).

The same scoring as the organiser's (`selectors.pool_scores_report`, against
the released pool's final labels), of the team's runs only: a run's scores do
not depend on the other runs, and no other team's run is read or named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pooling.models import Team
from scoring.core.analysis.leaderboard import Leaderboard
from scoring.selectors import (
    LeaderboardOptions,
    PoolScores,
    ScoringError,
    pool_leaderboard,
    pool_scores_report,
)


class ScoresNotReleased(ScoringError):
    """The organiser has not released the scores: the team sees none."""


class NoRunToScore(ScoringError):
    """The team has sent no run."""


def team_scores(
    *, team: Team, measures: list[str] | None = None, per_topic: bool = False
) -> PoolScores:
    """The team's runs scored against the released pool; ScoresNotReleased before the
    release, NothingJudged while its pool has no final label, NoRunToScore without runs,
    ScoringError for a bad measure."""
    campaign = team.campaign
    if not campaign.scores_released or campaign.scores_pool is None:
        raise ScoresNotReleased("the organiser has not released the scores yet")
    runs = list(team.runs.all())
    if not runs:
        raise NoRunToScore(f"team {team.name} has no run to score")
    return pool_scores_report(
        pool=campaign.scores_pool, measures=measures, per_topic=per_topic, runs=runs
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
    """Every run of the campaign ranked on the released judgments, each with its team
    (blank for the organiser's own runs): what participants see once released."""

    board: Leaderboard
    teams: dict[str, str]


def public_leaderboard(*, team: Team, measure: str = "map") -> PublicLeaderboard:
    """The released pool's leaderboard (paired t-test, Holm), for a member of `team`;
    ScoresNotReleased before the release. Means and intervals only rest on the
    released judgments, which no participant sees."""
    campaign = team.campaign
    if not campaign.scores_released or campaign.scores_pool is None:
        raise ScoresNotReleased("the organiser has not released the scores yet")
    board, _ = pool_leaderboard(
        pool=campaign.scores_pool, measure=measure, options=LeaderboardOptions()
    )
    teams = {tag: name or "" for tag, name in campaign.runs.values_list("tag", "team__name")}
    return PublicLeaderboard(board, teams)
