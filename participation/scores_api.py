"""The releases a team was given, as JSON: the list, its own runs' scores and the
leaderboard of one (`?release=ID`; the newest by default), exactly as released."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from participation.scores_selectors import (
    NoRunToScore,
    ScoresNotReleased,
    public_leaderboard,
    release_record,
    score_records,
    team_release,
    team_releases,
    team_scores,
)
from participation.scores_views import RELEASE_ID
from participation.selectors import team_for_member_or_404
from scoring import selectors
from scoring.core.analysis.render import to_json
from scoring.models import Release
from workbench.core.flags import truthy


class TeamReleaseSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="`?release=` of the scores and the leaderboard")
    version = serializers.IntegerField()
    campaign = serializers.CharField()
    released_at = serializers.DateTimeField()
    reason = serializers.CharField()
    measure = serializers.CharField(help_text="the leaderboard's")
    measures = serializers.ListField(child=serializers.CharField())
    leaderboard_options = serializers.DictField()
    labels = serializers.CharField(help_text="whose labels: human, ...")
    judged_topics = serializers.ListField(child=serializers.CharField())


_RELEASE = OpenApiParameter(
    "release", int, description="a release id of GET /api/teams/<id>/releases/ (default: newest)"
)


def _refused(error: selectors.ScoringError) -> Response:
    """403 before any release, 409 for a state of the campaign, 400 for a bad request."""
    if isinstance(error, ScoresNotReleased):
        return Response({"detail": f"{str(error).capitalize()}."}, status=403)
    if isinstance(error, NoRunToScore):
        return Response({"detail": f"{str(error).capitalize()}."}, status=409)
    return Response({"detail": str(error)}, status=400)


def _release(request: Request, team: object) -> Release:
    text = request.query_params.get("release", "").strip()
    if text and not RELEASE_ID.fullmatch(text):
        raise selectors.ScoringError(f"release: a release id, not {text[:40]!r}")
    return team_release(team, int(text) if text else None)  # type: ignore[arg-type]


class TeamReleasesView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=TeamReleaseSerializer(many=True))
    def get(self, request: Request, team_id: int) -> Response:
        """The releases the team's campaign was given (withdrawn ones are not), newest
        first: each frozen when it was made."""
        team = team_for_member_or_404(request.user, team_id)
        return Response([release_record(release) for release in team_releases(team)])


class TeamScoresView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[
            _RELEASE,
            OpenApiParameter(
                "measure", str, many=True, description="trec_eval -m syntax, e.g. P.10"
            ),
            OpenApiParameter("per_topic", bool),
        ],
        responses={
            200: OpenApiResponse(
                description="{team, campaign, release: {id, version, ...}, released_at, "
                "judged_topics, scores: [{run_id, query_id, measure, value}]}: the team's "
                "runs only, as released"
            ),
            400: OpenApiResponse(description="A measure the release did not score."),
            403: OpenApiResponse(description="Nothing released to the team yet."),
            404: OpenApiResponse(description="A release the team was not given."),
            409: OpenApiResponse(description="The team had no run in the release."),
        },
    )
    def get(self, request: Request, team_id: int) -> Response:
        """The team's runs' scores in a release (-c -M 1000 on its frozen judgments)."""
        team = team_for_member_or_404(request.user, team_id)
        per_topic = truthy(request.query_params.get("per_topic"))
        measures = request.query_params.getlist("measure") or None
        try:
            release = _release(request, team)
            report = team_scores(team=team, release=release, measures=measures, per_topic=per_topic)
        except selectors.ScoringError as error:
            return _refused(error)
        return Response(
            {
                "team": team.name,
                "campaign": team.campaign.slug,
                "release": release_record(release),
                "released_at": release.released_at,
                "judged_topics": report.judged_topics,
                "scores": score_records(report),
            }
        )


class TeamLeaderboardView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[_RELEASE],
        responses={
            200: OpenApiResponse(
                description="The JSON of manage.py leaderboard over every run of the release, "
                "with teams: {run tag: team name, '' for the organisers' runs} and release"
            ),
            403: OpenApiResponse(description="Nothing released to the team yet."),
            404: OpenApiResponse(description="A release the team was not given."),
        },
    )
    def get(self, request: Request, team_id: int) -> Response:
        """Every run ranked as released (the public leaderboard)."""
        team = team_for_member_or_404(request.user, team_id)
        try:
            release = _release(request, team)
        except selectors.ScoringError as error:
            return _refused(error)
        public = public_leaderboard(release=release)
        return Response(
            to_json(public.board) | {"teams": public.teams, "release": release_record(release)}
        )
