"""Machine clients: fetch a pool's qrels and the runs' scores."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from scoring import services
from scoring.exports import FORMATS, ExportError
from scoring.views import DEFAULT_BUNDLE, _pool, file_response, qrels_file
from workbench.roles import IsOrganiser


class QrelsView(APIView):
    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(
        parameters=[OpenApiParameter("aspect", str, description="twoaspects: the second aspect")],
        responses={(200, "text/plain"): str, 409: OpenApiResponse(description="Cannot export.")},
        description=f"One qrels file of the pool. Formats: {', '.join(FORMATS)}, inclusion.",
    )
    def get(self, request: Request, pool_id: int, fmt: str) -> Response:
        pool = _pool(pool_id)
        try:
            file = qrels_file(pool, fmt, request.query_params.get("aspect"))
        except ExportError as error:
            return Response({"detail": str(error)}, status=409)
        return file_response(file.data, file.name, "text/plain; charset=utf-8")


class BundleView(APIView):
    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(
        parameters=[OpenApiParameter("formats", str, many=True)],
        responses={
            (200, "application/zip"): bytes,
            409: OpenApiResponse(description="Cannot export."),
        },
        description="A zip of the chosen qrels formats with provenance.tsv and manifest.json.",
    )
    def get(self, request: Request, pool_id: int) -> Response:
        pool = _pool(pool_id)
        formats = request.query_params.getlist("formats") or list(DEFAULT_BUNDLE)
        try:
            data = services.qrels_bundle(pool=pool, formats=formats)
        except ExportError as error:
            return Response({"detail": str(error)}, status=409)
        return file_response(data, f"pool{pool.pk}-qrels.zip", "application/zip")


class ScoresView(APIView):
    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "measure", str, many=True, description="trec_eval -m syntax, e.g. P.10"
            ),
            OpenApiParameter("per_topic", bool),
        ],
        responses={200: OpenApiResponse(description="[{run_id, query_id, measure, value}]")},
    )
    def get(self, request: Request, pool_id: int) -> Response:
        """Every run of the campaign scored against the pool's final labels (-c -M 1000)."""
        pool = _pool(pool_id)
        per_topic = request.query_params.get("per_topic", "").lower() in {"1", "true", "yes"}
        measures = request.query_params.getlist("measure") or None
        try:
            scores = services.pool_scores(pool=pool, measures=measures, per_topic=per_topic)
        except services.ScoringError as error:
            return Response({"detail": str(error)}, status=409)
        return Response(scores.to_dict(orient="records"))
