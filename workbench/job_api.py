"""Jobs over the API: poll one until its state is done or failed; organisers
cancel a waiting or running one and retry a failed one.

Long work asked for over the API (a pool build, a re-plan, a large upload)
answers 202 with `job_accepted`: the job's id, the address to poll and its page.
A view whose work a job does only when it is large (a pool's scores) answers with
`job_result_answer` and documents it with `job_result_responses`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from workbench.api import DetailSerializer
from workbench.jobs import JobStateError, job_cancel, job_retry
from workbench.models import Job
from workbench.roles import IsOrganiser
from workbench.views import job_for_user


class JobSerializer(serializers.ModelSerializer):
    campaign = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    percent = serializers.IntegerField(read_only=True, allow_null=True)
    attempts = serializers.IntegerField(
        read_only=True, help_text="Runs started (a worker that stops loses the job to another)."
    )
    max_attempts = serializers.IntegerField(
        read_only=True, help_text="Runs started before the job fails (WORKBENCH_JOB_ATTEMPTS)."
    )
    heartbeat_at = serializers.DateTimeField(
        read_only=True,
        allow_null=True,
        help_text="When the worker running it last renewed its lease.",
    )
    cancelling = serializers.BooleanField(
        read_only=True, help_text="Running, with a cancel asked for: it stops at its next step."
    )

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
            "attempts",
            "max_attempts",
            "heartbeat_at",
            "cancelling",
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


def job_result_responses(
    serializer: Any, refused: dict[int, Any], *, description: str = ""
) -> tuple[dict, dict]:
    """The schema's GET and POST responses of a view whose work a job does when it is
    large (a pool's or a task's scores): 200 with `serializer`, 202 with the job, 404
    before there is one, and the view's own `refused` answers."""
    get = {
        200: OpenApiResponse(serializer, description=description) if description else serializer,
        202: job_accepted_response("A large pool's job is scoring it: poll the job."),
        404: OpenApiResponse(
            description="A large pool not scored on the current labels: POST to score it."
        ),
        **refused,
    }
    post = {
        200: OpenApiResponse(serializer, description="A pool small enough to score now: as GET."),
        202: job_accepted_response("A large pool: poll the job, then GET."),
        **refused,
    }
    return get, post


def job_result_answer[T](
    request: Request,
    context: dict[str, Any],
    what: str,
    result: T | None,
    answer: Callable[[T], Response],
    *,
    state: str = "labels",
) -> Response:
    """The answer of a view whose work a job does when it is large (the view's
    selector put the job in `context`: `job` or `scored_by`, and `superseded`): a
    POST's 202 with the job; a GET's 202/404 while there is no result; else
    `answer(result)` (made in the request, or the job's). `state`: what the job
    worked on ("labels", a pool's; "gold and submissions", a task's)."""
    job = context.get("scored_by") or context.get("job")
    if request.method == "POST" and job is not None:
        return job_accepted(request, job, f"The job scores the {what}: poll it, then GET.")
    if result is None:
        return job_waiting_answer(request, job, what, context.get("superseded"), state=state)
    return answer(result)


def job_waiting_answer(
    request: Request,
    job: Job | None,
    what: str,
    superseded: Job | None = None,
    *,
    state: str = "labels",
) -> Response:
    """The answer to a GET while the job on the current labels (`state`) has no
    result: 404 when there is none (or it failed: POST to try again), 202 while it
    runs."""
    if job is None or job.state == Job.FAILED:
        detail = f"no {what} of the current {state}: POST to make one"
        if superseded is not None:
            detail += f" (job {superseded.pk} made one of earlier {state}, now out of date)"
        if job is not None:
            detail = f"the last attempt failed: {job.error}; POST to try again"
        return Response({"detail": detail}, status=404)
    return job_accepted(request, job, f"The {what} is being made: poll the job.")


class JobView(APIView):
    """A job's state, progress, log and result (poll it until `state` is done or failed)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=JobSerializer)
    def get(self, request: Request, job_id: int) -> Response:
        return Response(JobSerializer(job_for_user(request, job_id)).data)


def _refused(error: JobStateError) -> Response:
    return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)


class JobCancelView(APIView):
    """Cancel a job (organisers): a waiting one fails at once, never run; a running
    one stops at its next step and stores nothing (`cancelling` until then)."""

    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(
        request=None,
        responses={
            200: JobSerializer,
            409: OpenApiResponse(DetailSerializer, description="The job is done or failed."),
        },
    )
    def post(self, request: Request, job_id: int) -> Response:
        try:
            job = job_cancel(job=job_for_user(request, job_id), by=request.user)
        except JobStateError as error:
            return _refused(error)
        return Response(JobSerializer(job).data)


class JobRetryView(APIView):
    """Queue a failed job again (organisers): the same job, its attempts counted
    afresh; poll it as after any 202."""

    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(
        request=None,
        responses={
            202: job_accepted_response("Queued again: poll `url` until it is done or failed."),
            409: OpenApiResponse(DetailSerializer, description="The job has not failed."),
        },
    )
    def post(self, request: Request, job_id: int) -> Response:
        try:
            job = job_retry(job=job_for_user(request, job_id), by=request.user)
        except JobStateError as error:
            return _refused(error)
        return job_accepted(request, job, "Queued again.")
