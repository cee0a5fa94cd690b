"""Machine clients: list campaigns, list and upload runs."""

from __future__ import annotations

from django.conf import settings
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from pooling import services
from pooling.models import Campaign, Run
from pooling.problems import InputError
from workbench import uploads
from workbench.job_api import job_accepted, job_accepted_response
from workbench.roles import IsOrganiser


class CampaignSerializer(serializers.ModelSerializer):
    class Meta:
        model = Campaign
        fields = [
            "slug",
            "name",
            "task_kind",
            "description",
            "judgment_budget",
            "label_schema",
            "created_at",
        ]


class RunSerializer(serializers.ModelSerializer):
    uploaded_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Run
        fields = [
            "tag",
            "original_name",
            "sha256",
            "line_count",
            "topic_count",
            "depth",
            "documents_per_topic",
            "uploaded_by",
            "uploaded_at",
        ]


class ProblemSerializer(serializers.Serializer):
    file = serializers.CharField()
    line = serializers.IntegerField(help_text="1-based; 0 for the whole file.")
    reason = serializers.CharField()


class RejectedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = ProblemSerializer(many=True, help_text="The first 50 problems of each file.")
    total = serializers.IntegerField(help_text="All problems, listed or not.")


class PartlyStoredSerializer(serializers.Serializer):
    detail = serializers.CharField()
    stored = RunSerializer(many=True, help_text="The runs stored.")
    errors = ProblemSerializer(many=True, help_text="The rejected files' first 50 problems each.")
    total = serializers.IntegerField(help_text="All problems of the rejected files.")


def rejected_response(error: InputError, detail: str) -> Response:
    """The line-level errors of a rejected upload, as JSON."""
    return Response({"detail": detail, **error.as_dict()}, status=status.HTTP_400_BAD_REQUEST)


class CampaignListView(ListAPIView):
    permission_classes = [IsAuthenticated, IsOrganiser]
    serializer_class = CampaignSerializer
    queryset = Campaign.objects.all()


class CampaignRunsView(APIView):
    """GET lists a campaign's runs; POST uploads one or more run files (field `file`)."""

    permission_classes = [IsAuthenticated, IsOrganiser]
    parser_classes = [MultiPartParser]

    @extend_schema(responses=RunSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        return Response(RunSerializer(campaign.runs.all(), many=True).data)

    @extend_schema(
        request={
            "multipart/form-data": inline_serializer(
                "RunUpload",
                {
                    "file": serializers.ListField(child=serializers.FileField()),
                    "keep_valid": serializers.BooleanField(required=False),
                },
            )
        },
        responses={
            201: PolymorphicProxySerializer(
                component_name="RunsStored",
                serializers=[RunSerializer(many=True), PartlyStoredSerializer],
                resource_type_field_name=None,
                # drf-spectacular's way to keep the sub-serializer's many=True.
                many=False,
            ),
            202: job_accepted_response(
                "An upload larger than WORKBENCH_UPLOAD_JOB_BYTES: a background "
                "job checks and stores it; its state at `url` says done (with the runs) "
                "or failed (with every problem, nothing stored)."
            ),
            400: OpenApiResponse(RejectedSerializer, description="Rejected; nothing stored."),
            413: OpenApiResponse(description="A file over WORKBENCH_MAX_UPLOAD_BYTES."),
        },
        description=(
            "Every line of every file is checked first. A batch with a rejected file stores "
            "nothing (400), unless `keep_valid`: then the valid files are stored and the "
            "answer is 201 with `stored` runs and the rejected files' `errors`."
        ),
    )
    def post(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        too_large = uploads.refused(request._request)
        if too_large:
            return Response(
                {"detail": uploads.limit_message(too_large)},
                status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
            )
        files = request.FILES.getlist("file")
        if not files:
            return Response(
                {"detail": "Attach at least one run file in the multipart field 'file'."},
                status=status.HTTP_400_BAD_REQUEST,
            )
        limit = settings.WORKBENCH_MAX_UPLOAD_BYTES
        too_big = [f.name for f in files if f.size and f.size > limit]
        if too_big:
            return Response(
                {"detail": f"Over the upload limit of {limit:,} bytes: {', '.join(too_big)}."},
                status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
            )
        keep_valid = str(request.data.get("keep_valid", "")).lower() in {"1", "true", "yes", "on"}
        if sum(f.size or 0 for f in files) > settings.WORKBENCH_UPLOAD_JOB_BYTES:
            return _import_in_background(request, campaign, files, keep_valid)
        runs_uploaded = [services.RunUpload(f.name, f.read()) for f in files]
        try:
            runs = services.runs_import(
                campaign=campaign,
                uploads=runs_uploaded,
                uploaded_by=request.user,
                keep_valid=keep_valid,
            )
        except services.RunsPartlyImported as error:
            if not error.stored:
                return rejected_response(error, "Rejected: nothing was stored.")
            tags = ", ".join(run.tag for run in error.stored)
            return Response(
                {
                    "detail": f"Stored: {tags}. Some files were rejected and not stored.",
                    "stored": RunSerializer(error.stored, many=True).data,
                    **error.as_dict(),
                },
                status=status.HTTP_201_CREATED,
            )
        except InputError as error:
            return rejected_response(error, "Rejected: nothing was stored.")
        return Response(RunSerializer(runs, many=True).data, status=status.HTTP_201_CREATED)


def _import_in_background(
    request: Request, campaign: Campaign, files: list, keep_valid: bool
) -> Response:
    """202: the files (already on disk) go to a job; poll its address for the outcome."""
    job = services.runs_import_start(
        campaign=campaign, files=files, uploaded_by=request.user, keep_valid=keep_valid
    )
    return job_accepted(
        request, job, "Accepted: the runs are checked and stored by a background job."
    )
