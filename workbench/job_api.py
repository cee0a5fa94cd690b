"""Jobs over the API: poll one until its state is done or failed.

Long work asked for over the API (a pool build, a re-plan, a large upload)
answers 202 with `job_accepted`: the job's id, the address to poll and its page.
"""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from workbench.models import Job
from workbench.views import job_for_user


class JobSerializer(serializers.ModelSerializer):
    campaign = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    percent = serializers.IntegerField(read_only=True, allow_null=True)

    class Meta:
        model = Job
        fields = [
            "id",
            "title",
            "state",
            "done",
            "total",
            "unit",
            "percent",
            "log",
            "result",
            "error",
            "campaign",
            "created_at",
            "started_at",
            "finished_at",
        ]


class JobAcceptedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    job = serializers.IntegerField()
    url = serializers.URLField(help_text="The job's state: poll it.")
    page = serializers.URLField(help_text="The job's page.")


def job_accepted_response(description: str) -> OpenApiResponse:
    """The schema of a 202 that hands the work to a job."""
    return OpenApiResponse(JobAcceptedSerializer, description=description)


def job_accepted(request: Request, job: Job, detail: str) -> Response:
    """202: the work is the job's; poll `url` (also the Location header) for its outcome."""
    url = reverse("api-job", args=[job.pk])
    return Response(
        {
            "detail": detail,
            "job": job.pk,
            "url": request.build_absolute_uri(url),
            "page": request.build_absolute_uri(reverse("job_detail", args=[job.pk])),
        },
        status=status.HTTP_202_ACCEPTED,
        headers={"Location": url},
    )


class JobView(APIView):
    """A job's state, progress, log and result (poll it until `state` is done or failed)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=JobSerializer)
    def get(self, request: Request, job_id: int) -> Response:
        return Response(JobSerializer(job_for_user(request, job_id)).data)
