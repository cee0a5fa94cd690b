"""A machine assessor's calibration report on a pool, for machine clients."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from pooling.selectors import pool_or_404
from scoring import calibration_selectors, jobs, selectors
from workbench.job_api import job_accepted, job_waiting_answer
from workbench.roles import IsOrganiser

_PARAMETERS = [
    OpenApiParameter(
        "machine", str, description="the machine's name (default: the only one with labels)"
    ),
    OpenApiParameter(
        "measure",
        str,
        many=True,
        description=f"default: {' '.join(calibration_selectors.DEFAULT_MEASURES)}",
    ),
]


class CalibrationView(APIView):
    """The machine's labels against the humans' and the runs ranked on human, machine
    and human-then-machine qrels: the JSON of manage.py machine_report --format json.
    Made in the request for a pool scored there; else by a job (POST starts it)."""

    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(
        parameters=_PARAMETERS,
        responses={
            200: OpenApiResponse(description="The report of the current labels."),
            202: OpenApiResponse(description="A job is making it: {detail, job, url, page}."),
            400: OpenApiResponse(description="A machine or measure it cannot be made for."),
            404: OpenApiResponse(description="A large pool's report not made yet: POST."),
            409: OpenApiResponse(description="Nothing judged by a human yet."),
        },
    )
    def get(self, request: Request, pool_id: int) -> Response:
        pool, chosen = self._chosen(request, pool_id)
        if isinstance(chosen, Response):
            return chosen
        machine, measures = chosen
        try:
            report, job = calibration_selectors.calibration_report(pool, machine, measures)
        except selectors.NothingJudged as state:
            return Response({"detail": str(state)}, status=409)
        except selectors.ScoringError as error:
            return Response({"detail": str(error)}, status=400)
        if report is None:
            return job_waiting_answer(request, job, "report")
        return Response(report)

    @extend_schema(
        parameters=_PARAMETERS,
        request=None,
        responses={
            202: OpenApiResponse(description="{detail, job, url, page}: poll the job, then GET."),
            400: OpenApiResponse(description="A machine or measure it cannot be made for."),
        },
    )
    def post(self, request: Request, pool_id: int) -> Response:
        """Start the report of the current labels in a job (or give the one at it)."""
        pool, chosen = self._chosen(request, pool_id)
        if isinstance(chosen, Response):
            return chosen
        machine, measures = chosen
        job = jobs.calibration_start(
            pool=pool, machine=machine, measures=measures, user=request.user
        )
        return job_accepted(request, job, "The report is being made: poll the job.")

    @staticmethod
    def _chosen(request: Request, pool_id: int) -> tuple[Any, Any]:
        pool = pool_or_404(pool_id)
        try:
            machine = calibration_selectors.calibration_machine(
                pool, request.query_params.get("machine") or None
            )
            measures = calibration_selectors.calibration_measures(
                request.query_params.getlist("measure") or None
            )
        except selectors.ScoringError as error:
            return pool, Response({"detail": str(error)}, status=400)
        return pool, (machine, measures)
