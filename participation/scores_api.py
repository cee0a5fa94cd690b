"""A team's own scores as JSON, once the organiser has released them."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from participation.scores_selectors import (
    NoRunToScore,
    ScoresNotReleased,
    public_leaderboard,
    score_records,
    team_scores,
)
from participation.selectors import team_for_member_or_404
from scoring import selectors
from scoring.core.analysis.render import to_json


def _refused(error: selectors.ScoringError) -> Response:
    """403 before the release, 409 for a state of the campaign, 400 for a bad request."""
    if isinstance(error, ScoresNotReleased):
        return Response({"detail": f"{str(error).capitalize()}."}, status=403)
    if isinstance(error, selectors.NothingJudged | NoRunToScore | selectors.NoRuns):
        return Response({"detail": f"{str(error).capitalize()}."}, status=409)
    return Response({"detail": str(error)}, status=400)


class TeamScoresView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "measure", str, many=True, description="trec_eval -m syntax, e.g. P.10"
            ),
            OpenApiParameter("per_topic", bool),
        ],
        responses={
            200: OpenApiResponse(
                description="{team, campaign, released_at, judged_topics, scores: "
                "[{run_id, query_id, measure, value}]}: the team's runs only"
            ),
            400: OpenApiResponse(description="A bad measure."),
            403: OpenApiResponse(description="The scores are not released yet."),
            409: OpenApiResponse(description="Nothing judged yet, or no run to score."),
        },
    )
    def get(self, request: Request, team_id: int) -> Response:
        """The team's runs scored against the released judgments (-c -M 1000)."""
        team = team_for_member_or_404(request.user, team_id)
        per_topic = request.query_params.get("per_topic", "").lower() in {"1", "true", "yes"}
        measures = request.query_params.getlist("measure") or None
        try:
            report = team_scores(team=team, measures=measures, per_topic=per_topic)
        except selectors.ScoringError as error:
            return _refused(error)
        return Response(
            {
                "team": team.name,
                "campaign": team.campaign.slug,
                "released_at": team.campaign.scores_released_at,
                "judged_topics": report.judged_topics,
                "scores": score_records(report),
            }
        )


class TeamLeaderboardView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("measure", str, description="default map")],
        responses={
            200: OpenApiResponse(
                description="The JSON of manage.py leaderboard (paired t-test, Holm) over "
                "every run of the campaign, with teams: {run tag: team name, '' for the "
                "organisers' runs}"
            ),
            400: OpenApiResponse(description="A bad measure."),
            403: OpenApiResponse(description="The scores are not released yet."),
            409: OpenApiResponse(description="Nothing judged yet."),
        },
    )
    def get(self, request: Request, team_id: int) -> Response:
        """Every run ranked on the released judgments (the public leaderboard)."""
        team = team_for_member_or_404(request.user, team_id)
        try:
            public = public_leaderboard(
                team=team, measure=request.query_params.get("measure", "map")
            )
        except selectors.ScoringError as error:
            return _refused(error)
        return Response(to_json(public.board) | {"teams": public.teams})
