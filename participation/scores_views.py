"""A team's pages of the releases it was given: its own runs' scores and the
leaderboard, as released (`?release=ID` for an earlier one; the newest by default)."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from participation.scores_selectors import (
    NoRunToScore,
    ScoresNotReleased,
    public_leaderboard,
    team_answer_scores,
    team_release,
    team_releases,
    team_scores,
)
from participation.selectors import team_for_member_or_404
from pooling.models import Team
from scoring import selectors
from scoring.core.analysis.render import run_keys
from scoring.models import Release


def _value(value: object) -> str:
    """As trec_eval prints it (4 decimals), as on the organiser's scores page."""
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _not_shown(error: selectors.ScoringError) -> tuple[str, int]:
    """What a team's results page says instead of results, and its status: 403
    before any release, 200 for a state of the campaign, 400 for a bad request."""
    if isinstance(error, ScoresNotReleased):
        return "The organiser has not released the results yet.", 403
    if isinstance(error, NoRunToScore):
        return f"{str(error).capitalize()}.", 200
    return f"{str(error).capitalize()}.", 400


# A release id as a query value: digits a bigint holds (10,000 digits were a 500).
RELEASE_ID = re.compile(r"[0-9]{1,18}")


def _release_id(request: HttpRequest) -> int | None:
    text = request.GET.get("release", "").strip()
    return int(text) if RELEASE_ID.fullmatch(text) else None


def _context(team: Team, release: Release | None = None) -> dict[str, Any]:
    return {
        "team": team,
        "campaign": team.campaign,
        "release": release,
        "releases": team_releases(team),
    }


@login_required
def team_scores_page(request: HttpRequest, team_id: int) -> HttpResponse:
    """The team's runs' mean scores in a release; before any, only that there are none."""
    team = team_for_member_or_404(request.user, team_id)
    context = _context(team)
    try:
        release = context["release"] = team_release(team, _release_id(request))
        report = team_scores(team=team, release=release)
    except selectors.ScoringError as error:
        context["notice"], status = _not_shown(error)
        return render(request, "participation/team_scores.html", context, status=status)
    table = report.scores.pivot(index="run_id", columns="measure", values="value")
    columns = [m for m in dict.fromkeys(report.scores["measure"]) if m != "runid"]
    context |= {
        "columns": columns,
        "rows": [
            (run, [_value(v) for v in table.loc[run, columns]], report.missing.get(run, []))
            for run in table.index
        ],
        "judged_topics": report.judged_topics,
    }
    return render(request, "participation/team_scores.html", context)


@login_required
def team_leaderboard_page(request: HttpRequest, team_id: int) -> HttpResponse:
    """Every run ranked as released, the team's own marked."""
    team = team_for_member_or_404(request.user, team_id)
    context = _context(team)
    try:
        release = context["release"] = team_release(team, _release_id(request))
    except selectors.ScoringError as error:
        context["notice"], status = _not_shown(error)
        return render(request, "participation/team_leaderboard.html", context, status=status)
    public = public_leaderboard(release=release)
    board = public.board
    test = board.options.tests[0] if board.options.tests else "t"
    beaten = board.beaten(test)
    keys = run_keys(len(board.runs))
    key_of = {row.run: key for row, key in zip(board.runs, keys, strict=True)}
    context |= {
        "board": board,
        "test": test,
        "rows": [
            {
                "rank": rank,
                "key": key_of[row.run],
                "row": row,
                "team": public.teams.get(row.run, ""),
                "ours": public.teams.get(row.run) == team.name,
                "beats": "".join(key_of[run] for run in beaten[row.run]),
            }
            for rank, row in enumerate(board.runs, start=1)
        ],
        "confidence": f"{100 * (1 - board.options.alpha):g}",
    }
    return render(request, "participation/team_leaderboard.html", context)


@login_required
def team_answer_scores_page(request: HttpRequest, team_id: int) -> HttpResponse:
    """The team's runs of answers as scored in the newest release (403 before one)."""
    team = team_for_member_or_404(request.user, team_id)
    release = team.campaign.answer_scores_releases.order_by("-version").first()
    context: dict[str, Any] = {"team": team, "campaign": team.campaign, "release": release}
    if release is None:
        context["notice"] = "The organiser has not released the scores yet."
        return render(request, "participation/team_answer_scores.html", context, status=403)
    context |= team_answer_scores(team, release)
    return render(request, "participation/team_answer_scores.html", context)
