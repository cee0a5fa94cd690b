"""Machine clients of a campaign's runs: list and upload, inspect, delete and replace one.

The same forms and services as the run pages (`pooling.run_services`); a large upload
answers 202 with the job to poll."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.utils.datastructures import MultiValueDict
from drf_spectacular.utils import (
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.filters import OrderingFilter
from rest_framework.generics import ListAPIView
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from pooling import run_services
from pooling.api import ORGANISERS, upload_request, upload_responses
from pooling.errors import RunInUse
from pooling.forms import (
    RunReplaceForm,
    RunUploadForm,
)
from pooling.models import Campaign, Run
from pooling.serializers import (
    PartlyStoredSerializer,
    RejectedSerializer,
    RunSerializer,
)
from workbench import uploads
from workbench.api import DetailSerializer, OptionalPagination
from workbench.core.flags import truthy
from workbench.job_api import job_accepted_response
from workbench.models import Job


class CampaignRunsView(ListAPIView):
    """GET lists a campaign's runs (paged when asked: `?limit=&offset=`); POST uploads
    one or more run files (field `file`)."""

    permission_classes = ORGANISERS
    parser_classes = [MultiPartParser]
    serializer_class = RunSerializer
    pagination_class = OptionalPagination
    filter_backends = [OrderingFilter]
    ordering_fields = ["tag", "uploaded_at"]

    def get_queryset(self) -> Any:
        campaign = get_object_or_404(Campaign, slug=self.kwargs["slug"])
        return campaign.runs.select_related("uploaded_by")

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
        files = request.FILES.getlist("file")
        form = RunUploadForm(_run_upload_data(request), MultiValueDict({"files": files}))
        if not files and not uploads.too_large(request):
            return Response(
                {"detail": "Attach at least one run file in the multipart field 'file'."},
                status=status.HTTP_400_BAD_REQUEST,
            )

        def store(data: dict[str, Any]) -> list[Run] | Job:
            try:
                return run_services.runs_upload(
                    campaign=campaign,
                    files=data["files"],
                    uploaded_by=request.user,
                    keep_valid=data["keep_valid"],
                )
            except run_services.RunsPartlyImported as error:
                if not error.stored:
                    raise
                return error

        received = uploads.upload_receive(request, form, store)
        return uploads.upload_answer(
            request,
            received,
            _runs_stored,
            accepted="Accepted: the runs are checked and stored by a background job.",
        )


def _run_upload_data(request: Request) -> dict[str, Any]:
    """The runs form's fields from the API's: `keep_valid` yes or no as `truthy` reads it."""
    return {"keep_valid": truthy(request.data.get("keep_valid"))}


def _runs_stored(stored: list[Run] | run_services.RunsPartlyImported) -> dict[str, Any]:
    """201: the runs, or (some files rejected, `keep_valid`) those stored and why the
    others were not."""
    if isinstance(stored, run_services.RunsPartlyImported):
        tags = ", ".join(run.tag for run in stored.stored)
        return {
            "detail": f"Stored: {tags}. Some files were rejected and not stored.",
            "stored": RunSerializer(stored.stored, many=True).data,
            **stored.as_dict(),
        }
    return RunSerializer(stored, many=True).data


def _get_run(slug: str, run_id: int) -> Run:
    return get_object_or_404(Run, pk=run_id, campaign__slug=slug)


class RunView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(responses=RunSerializer)
    def get(self, request: Request, slug: str, run_id: int) -> Response:
        return Response(RunSerializer(_get_run(slug, run_id)).data)

    @extend_schema(
        responses={
            204: OpenApiResponse(description="Deleted, with its files."),
            409: OpenApiResponse(DetailSerializer, description="A pool was built from it."),
        }
    )
    def delete(self, request: Request, slug: str, run_id: int) -> Response:
        """Delete a run no pool was built from (a pooled run stays as it was judged)."""
        run = _get_run(slug, run_id)
        try:
            run_services.run_delete(run=run)
        except RunInUse as error:
            return Response({"detail": f"Not deleted: {error}."}, status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)


class RunReplaceView(APIView):
    permission_classes = ORGANISERS
    parser_classes = [MultiPartParser]

    @extend_schema(
        request=upload_request("RunReplace"),
        responses={
            **upload_responses(RunSerializer),
            409: OpenApiResponse(DetailSerializer, description="A pool was built from it."),
        },
    )
    def post(self, request: Request, slug: str, run_id: int) -> Response:
        """Replace a run no pool uses by a corrected file, checked like any upload; the
        file may keep the tag or bring a new one. The new run has a new id."""
        run = _get_run(slug, run_id)

        def store(data: dict[str, Any]) -> Run:
            upload = data["file"]
            return run_services.run_replace(
                run=run,
                upload=run_services.RunUpload(upload.name, upload.read()),
                uploaded_by=request.user,
            )

        form = RunReplaceForm(request.data, request.FILES)
        try:
            received = uploads.upload_receive(request, form, store)
        except RunInUse as error:
            return Response({"detail": f"Not replaced: {error}."}, status=status.HTTP_409_CONFLICT)
        return uploads.upload_answer(
            request,
            received,
            lambda new: RunSerializer(new).data,
            rejected="Rejected: the run was not replaced.",
        )
