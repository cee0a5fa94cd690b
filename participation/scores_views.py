"""A team's page of its own runs' scores, shown once the organiser releases them."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from participation.scores_selectors import (
    NoRunToScore,
    ScoresNotReleased,
    public_leaderboard,
    team_scores,
)
from participation.selectors import team_for_member_or_404
from scoring import selectors
from scoring.core.analysis.render import run_keys


def _value(value: object) -> str:
    """As trec_eval prints it (4 decimals), as on the organiser's scores page."""
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _not_shown(error: selectors.ScoringError) -> tuple[str, int]:
    """What a team's results page says instead of results, and its status: 403
    before the release, 200 for a state of the campaign, 400 for a bad request."""
    if isinstance(error, ScoresNotReleased):
        return "The organiser has not released the results yet.", 403
    if isinstance(error, selectors.NothingJudged):
        return "Nothing is judged yet.", 200
    if isinstance(error, NoRunToScore | selectors.NoRuns):
        return f"{str(error).capitalize()}.", 200
    return f"{str(error).capitalize()}.", 400


@login_required
def team_scores_page(request: HttpRequest, team_id: int) -> HttpResponse:
    """The team's runs' mean scores; before the release, only that there are none yet."""
    team = team_for_member_or_404(request.user, team_id)
    context: dict[str, Any] = {"team": team, "campaign": team.campaign}
    try:
        report = team_scores(team=team)
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
    """Every run of the campaign ranked on the released judgments, the team's own marked."""
    team = team_for_member_or_404(request.user, team_id)
    measure = (request.GET.get("measure") or "map").strip()
    context: dict[str, Any] = {"team": team, "campaign": team.campaign, "measure": measure}
    try:
        public = public_leaderboard(team=team, measure=measure)
    except selectors.ScoringError as error:
        context["notice"], status = _not_shown(error)
        return render(request, "participation/team_leaderboard.html", context, status=status)
    board = public.board
    beaten = board.beaten("t")
    keys = run_keys(len(board.runs))
    key_of = {row.run: key for row, key in zip(board.runs, keys, strict=True)}
    context |= {
        "board": board,
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
