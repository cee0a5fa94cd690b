"""Jobs over the API: poll one until its state is done or failed."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from workbench.models import Job
from workbench.views import job_for_user


class JobSerializer(serializers.ModelSerializer):
    campaign = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    percent = serializers.IntegerField(read_only=True, allow_null=True)

    class Meta:
        model = Job
        fields = [
            "id",
            "title",
            "state",
            "done",
            "total",
            "percent",
            "log",
            "result",
            "error",
            "campaign",
            "created_at",
            "started_at",
            "finished_at",
        ]


class JobView(APIView):
    """A job's state, progress, log and result (poll it until `state` is done or failed)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=JobSerializer)
    def get(self, request: Request, job_id: int) -> Response:
        return Response(JobSerializer(job_for_user(request, job_id)).data)
