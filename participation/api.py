"""The participants' API: their teams, their runs (list, upload, precedence).

The same checks as the team page and as an organiser's upload: a rejected
file answers 400 with its `file:line: reason` problems, and a run after the
deadline or past the most runs per team answers 400 with the reason; nothing
is stored then. A team is visible to its members only (anyone else: 404).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from participation import selectors as team_selectors
from participation import services as team_services
from participation.forms import TeamRunUploadForm
from pooling.errors import RunInUse, SubmissionRefused, TeamError
from pooling.models import Campaign, Run, Team
from pooling.run_services import RunUpload
from pooling.serializers import ProblemSerializer
from scoring import release_selectors
from workbench import uploads
from workbench.api import OptionalPagination
from workbench.core.id_limits import control_problem
from workbench.roles import IsOrganiser


class TeamSerializer(serializers.ModelSerializer):
    campaign = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    campaign_name = serializers.CharField(source="campaign.name", read_only=True)
    submission_deadline = serializers.DateTimeField(source="campaign.submission_deadline")
    max_runs_per_team = serializers.IntegerField(source="campaign.max_runs_per_team")
    pooled_runs_per_team = serializers.IntegerField(source="campaign.pooled_runs_per_team")
    submissions_open = serializers.SerializerMethodField()
    scores_released = serializers.SerializerMethodField(
        help_text="Whether the team was given a release (GET /api/teams/<id>/releases/)."
    )

    class Meta:
        model = Team
        fields = [
            "id",
            "name",
            "campaign",
            "campaign_name",
            "submission_deadline",
            "max_runs_per_team",
            "pooled_runs_per_team",
            "late_runs_accepted",
            "submissions_open",
            "scores_released",
        ]
        read_only_fields = fields

    def get_submissions_open(self, team: Team) -> bool:
        return team_services.submissions_open(team.campaign)

    def get_scores_released(self, team: Team) -> bool:
        return release_selectors.team_releases(team).exists()


class TeamRunSerializer(serializers.Serializer):
    """A run of the team and what its check found (`team_selectors.run_report`)."""

    id = serializers.IntegerField(help_text="The run's id: DELETE .../runs/<id>/ withdraws it.")
    tag = serializers.CharField()
    precedence = serializers.IntegerField(help_text="1 is judged first.")
    late = serializers.BooleanField(help_text="Sent after the deadline, accepted late.")
    original_name = serializers.CharField()
    sha256 = serializers.CharField()
    uploaded_by = serializers.CharField(allow_null=True)
    uploaded_at = serializers.DateTimeField()
    line_count = serializers.IntegerField()
    topic_count = serializers.IntegerField()
    depth = serializers.IntegerField()
    documents_per_topic = serializers.DictField(child=serializers.IntegerField())
    missing_topics = serializers.ListField(
        child=serializers.CharField(), help_text="The campaign's topics the run has no ranking for."
    )


class TeamRunRejectedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = ProblemSerializer(many=True, required=False, help_text="The first 50 problems.")
    total = serializers.IntegerField(required=False, help_text="All problems, listed or not.")


class PrecedenceSerializer(serializers.Serializer):
    order = serializers.ListField(
        child=serializers.CharField(),
        help_text="Every run tag of the team once, the run to judge first first.",
    )


def _team(request: Request, team_id: int) -> Team:
    return team_selectors.team_for_member_or_404(request.user, team_id)


def _runs(team: Team) -> list[dict[str, Any]]:
    reports = [team_selectors.run_report(run) for run in team_selectors.team_runs(team)]
    return TeamRunSerializer(reports, many=True).data


def _bad(detail: str) -> Response:
    return Response({"detail": detail}, status=status.HTTP_400_BAD_REQUEST)


class TeamListView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=TeamSerializer(many=True))
    def get(self, request: Request) -> Response:
        """The requesting user's teams, with their campaigns' rules for submitting."""
        return Response(TeamSerializer(team_selectors.teams_of(request.user), many=True).data)


class TeamRunsView(ListAPIView):
    """GET lists the team's runs by precedence (paged when asked: `?limit=&offset=`);
    POST submits one run file (field `file`)."""

    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser]
    serializer_class = TeamRunSerializer
    pagination_class = OptionalPagination

    def get_queryset(self) -> Any:
        team = _team(self.request, self.kwargs["team_id"])
        return [team_selectors.run_report(run) for run in team_selectors.team_runs(team)]

    @extend_schema(
        request={
            "multipart/form-data": inline_serializer(
                "TeamRunUpload", {"file": serializers.FileField()}
            )
        },
        responses={
            201: TeamRunSerializer,
            400: OpenApiResponse(
                TeamRunRejectedSerializer,
                description="Refused (after the deadline, over the most runs per team) or "
                "rejected (`errors`: each problem of the file); nothing stored.",
            ),
            413: OpenApiResponse(description="A file over WORKBENCH_MAX_UPLOAD_BYTES."),
        },
        description="Every line is checked as an organiser's upload is; the run comes last "
        "in the team's precedence. After the deadline only a run the organiser accepted "
        "late is stored (marked late).",
    )
    def post(self, request: Request, team_id: int) -> Response:
        team = _team(request, team_id)
        if len(request.FILES.getlist("file")) != 1 and not uploads.too_large(request):
            return _bad("Attach one run file in the multipart field 'file'.")

        def store(data: dict[str, Any]) -> Run:
            file = data["file"]
            return team_services.team_run_submit(
                team=team, upload=RunUpload(file.name, file.read()), uploaded_by=request.user
            )

        form = TeamRunUploadForm(request.data, request.FILES)
        try:
            received = uploads.upload_receive(request, form, store)
        except SubmissionRefused as error:
            return _bad(f"Refused: {error}")

        def body(run: Run) -> dict[str, Any]:
            [report] = [r for r in _runs(team) if r["tag"] == run.tag]
            return report

        return uploads.upload_answer(request, received, body)


class TeamRunView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={
            204: OpenApiResponse(description="Withdrawn; the team's later runs moved up."),
            400: OpenApiResponse(description="After the deadline; nothing changed."),
            404: OpenApiResponse(description="Not a run of this team (or not your team)."),
            409: OpenApiResponse(description="A pool was built from it; nothing changed."),
        },
    )
    def delete(self, request: Request, team_id: int, run_id: int) -> Response:
        """Withdraw one of the team's runs while submissions are open."""
        team = _team(request, team_id)
        run = get_object_or_404(Run, pk=run_id, team=team)
        try:
            team_services.team_run_withdraw(team=team, run=run)
        except TeamError as error:
            return _bad(f"Refused: {error}")
        except RunInUse as error:
            return Response({"detail": f"Refused: {error}"}, status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TeamPrecedenceView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]

    @extend_schema(
        request=PrecedenceSerializer,
        responses={
            200: TeamRunSerializer(many=True),
            400: OpenApiResponse(
                description="Not every run once, or after the deadline; nothing changed."
            ),
        },
    )
    def put(self, request: Request, team_id: int) -> Response:
        """Order the team's runs for judging (1 = first) while submissions are open."""
        team = _team(request, team_id)
        payload = PrecedenceSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            team_services.team_run_precedence_set(team=team, order=payload.validated_data["order"])
        except TeamError as error:
            return _bad(str(error))
        return Response(_runs(team))


# --------------------------------------------------------------------------
# The organiser's side: teams and submission settings (releases: scoring.release_api)


class UsernameField(serializers.SlugRelatedField):
    """An account by its username; a name holding a control character is refused
    with the reason before it is looked up."""

    def to_internal_value(self, data: Any) -> Any:
        problem = control_problem("username", str(data))
        if problem:
            raise serializers.ValidationError(problem)
        return super().to_internal_value(data)


class OrganiserTeamSerializer(serializers.ModelSerializer):
    members = UsernameField(
        slug_field="username", many=True, queryset=get_user_model().objects.all()
    )
    runs = serializers.SlugRelatedField(slug_field="tag", many=True, read_only=True)

    class Meta:
        model = Team
        fields = ["id", "name", "members", "runs", "late_runs_accepted"]
        read_only_fields = ["id", "runs"]


class SubmissionSettingsSerializer(serializers.Serializer):
    submission_deadline = serializers.DateTimeField(allow_null=True)
    max_runs_per_team = serializers.IntegerField(allow_null=True, min_value=1)
    pooled_runs_per_team = serializers.IntegerField(allow_null=True, min_value=1)


class CampaignTeamsView(APIView):
    """The campaign's teams (GET), or register one (POST: name and member usernames)."""

    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(responses={200: OrganiserTeamSerializer(many=True)})
    def get(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        teams = campaign.teams.prefetch_related("members", "runs").order_by("name")
        return Response(OrganiserTeamSerializer(teams, many=True).data)

    @extend_schema(
        request=OrganiserTeamSerializer,
        responses={
            201: OrganiserTeamSerializer,
            400: OpenApiResponse(description="A name taken, or a member who is not a participant."),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        payload = OrganiserTeamSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            team = team_services.team_create(
                campaign=campaign,
                name=payload.validated_data["name"],
                members=payload.validated_data["members"],
            )
        except TeamError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(OrganiserTeamSerializer(team).data, status=status.HTTP_201_CREATED)


class CampaignSubmissionsView(APIView):
    """The deadline and the limits on runs per team, as the teams page sets them."""

    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(
        request=SubmissionSettingsSerializer,
        responses={200: SubmissionSettingsSerializer, 400: OpenApiResponse(description="Refused.")},
    )
    def put(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        payload = SubmissionSettingsSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            campaign = team_services.campaign_submissions_update(
                campaign=campaign, **payload.validated_data
            )
        except TeamError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(SubmissionSettingsSerializer(campaign).data)
