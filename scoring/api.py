"""Machine clients: fetch a pool's qrels and the runs' scores."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from pooling.selectors import pool_or_404
from scoring import (
    background,
    export_selectors,
    jobs,
    leaderboard_selectors,
    reusability_selectors,
    selectors,
)
from scoring.core.analysis.corrections import CORRECTIONS
from scoring.core.analysis.render import to_json
from scoring.core.exports import DEFAULT_BUNDLE, FORMATS, ExportError
from scoring.forms import LeaderboardForm
from workbench.core.flags import truthy
from workbench.http import attachment
from workbench.job_api import (
    job_accepted,
    job_result_answer,
    job_result_responses,
    job_waiting_answer,
)
from workbench.models import Job
from workbench.roles import IsOrganiser

# What the answers hold, for the schema (the bodies are built by the selectors).

LABEL_PARAMETERS = [
    OpenApiParameter(
        "labels",
        str,
        enum=list(selectors.LABEL_SOURCES),
        description="whose labels (default human; human-then-machine: a human label where "
        "one exists, else the machine's)",
    ),
    OpenApiParameter(
        "machine",
        str,
        description="with a machine source: the machine's name (needed when several have "
        "labels on the pool)",
    ),
]


def _label_choice(request: Request, pool: Any) -> selectors.LabelChoice | Response:
    """The request's label choice, or its 400 answer."""
    try:
        return selectors.label_choice_of(pool, request.query_params)
    except selectors.LabelChoiceError as error:
        return Response({"detail": str(error)}, status=400)


class QrelsFormatSerializer(serializers.Serializer):
    name = serializers.CharField()
    file = serializers.CharField()
    description = serializers.CharField()
    available = serializers.BooleanField()
    unavailable = serializers.CharField(
        help_text="Why the pool cannot produce it; empty if it can."
    )
    in_default_bundle = serializers.BooleanField()


class ScoreSerializer(serializers.Serializer):
    run_id = serializers.CharField()
    query_id = serializers.CharField(help_text='"all" for the mean over topics')
    measure = serializers.CharField()
    value = serializers.FloatField()


class LeaderboardRunSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    run = serializers.CharField()
    mean = serializers.FloatField(allow_null=True)
    n_topics = serializers.IntegerField()
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    bootstrap_low = serializers.FloatField(allow_null=True)
    bootstrap_high = serializers.FloatField(allow_null=True)


class LeaderboardPairSerializer(serializers.Serializer):
    a = serializers.CharField(help_text="ranked above b")
    b = serializers.CharField()
    test = serializers.CharField()
    statistic = serializers.FloatField(allow_null=True)
    p_value = serializers.FloatField(allow_null=True)
    p_adjusted = serializers.FloatField(allow_null=True)
    mean_difference = serializers.FloatField(allow_null=True)
    cohens_d = serializers.FloatField(allow_null=True)
    significant = serializers.BooleanField()
    identical = serializers.BooleanField(
        help_text="a and b have the same value on every topic: nothing to test "
        "(statistic and p null)"
    )


class LeaderboardOptionsSerializer(serializers.Serializer):
    tests = serializers.ListField(child=serializers.CharField())
    correction = serializers.CharField()
    alpha = serializers.FloatField()
    confidence = serializers.FloatField()
    seed = serializers.IntegerField()
    resamples = serializers.IntegerField()


class LeaderboardExclusionSerializer(serializers.Serializer):
    topic = serializers.CharField()
    runs = serializers.ListField(child=serializers.CharField())
    reason = serializers.CharField()


class LeaderboardSerializer(serializers.Serializer):
    measure = serializers.CharField()
    topics = serializers.ListField(child=serializers.CharField())
    options = LeaderboardOptionsSerializer()
    runs = LeaderboardRunSerializer(many=True)
    pairs = LeaderboardPairSerializer(many=True)
    excluded = LeaderboardExclusionSerializer(many=True)
    detail = serializers.CharField(
        required=False, help_text="Why the board is empty: no runs yet (no run, no pair)."
    )


class QrelsFormatsView(APIView):
    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(
        # Not pools_qrels_retrieve, which QrelsView's operation is called too.
        operation_id="pools_qrels_formats",
        responses={200: QrelsFormatSerializer(many=True)},
    )
    def get(self, request: Request, pool_id: int) -> Response:
        """The qrels formats, and which of them this pool can produce."""
        choices = export_selectors.qrels_format_choices(pool=pool_or_404(pool_id))
        return Response([asdict(choice) | {"available": choice.available} for choice in choices])


class QrelsView(APIView):
    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(
        parameters=[
            OpenApiParameter("aspect", str, description="twoaspects: the second aspect"),
            *LABEL_PARAMETERS,
        ],
        responses={
            (200, "text/plain"): str,
            400: OpenApiResponse(description="A label source or machine the pool has not."),
            409: OpenApiResponse(description="A format the pool cannot produce, and why."),
        },
        description=f"One qrels file of the pool. Formats: {', '.join(FORMATS)}, inclusion.",
    )
    def get(self, request: Request, pool_id: int, fmt: str) -> Response:
        pool = pool_or_404(pool_id)
        if fmt not in export_selectors.QRELS_FILES:
            raise Http404(f"no qrels format {fmt!r}")
        choice = _label_choice(request, pool)
        if isinstance(choice, Response):
            return choice
        try:
            file = export_selectors.qrels_file(
                pool=pool,
                fmt=fmt,
                two_aspect=request.query_params.get("aspect"),
                labels=choice.source,
                machine=choice.machine or None,
            )
        except ExportError as error:
            return Response({"detail": str(error)}, status=409)
        return attachment(file.data, file.name, "text/plain; charset=utf-8")


class BundleView(APIView):
    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "formats",
                str,
                many=True,
                description=f"default: those of {', '.join(DEFAULT_BUNDLE)} the pool can produce",
            ),
            *LABEL_PARAMETERS,
        ],
        responses={
            (200, "application/zip"): bytes,
            400: OpenApiResponse(description="A label source or machine the pool has not."),
            409: OpenApiResponse(description="A format the pool cannot produce, and why."),
        },
        description="A zip of the chosen qrels formats with provenance.tsv and manifest.json.",
    )
    def get(self, request: Request, pool_id: int) -> Response:
        pool = pool_or_404(pool_id)
        formats = request.query_params.getlist("formats") or None  # what the pool can produce
        choice = _label_choice(request, pool)
        if isinstance(choice, Response):
            return choice
        try:
            data = export_selectors.qrels_bundle(
                pool=pool, formats=formats, labels=choice.source, machine=choice.machine or None
            )
        except ExportError as error:
            return Response({"detail": str(error)}, status=409)
        return attachment(data, f"pool{pool.pk}-qrels.zip", "application/zip")


class ScoresView(APIView):
    """Every run of the campaign scored against the pool's final labels (-c -M 1000).
    A pool too large to score in a request (WORKBENCH_SYNC_SCORING_CELLS) is scored
    by a job, as on the page: POST starts it (202), GET answers once it is done."""

    permission_classes = [IsAuthenticated, IsOrganiser]
    _parameters = [
        OpenApiParameter("measure", str, many=True, description="trec_eval -m syntax, e.g. P.10"),
        OpenApiParameter("per_topic", bool),
        *LABEL_PARAMETERS,
    ]
    _get, _post = job_result_responses(
        ScoreSerializer(many=True),
        {
            400: OpenApiResponse(description="A label source or machine the pool has not."),
            409: OpenApiResponse(
                description="A measure trec_eval does not know, or nothing to score."
            ),
        },
    )

    @extend_schema(parameters=_parameters, responses=_get)
    def get(self, request: Request, pool_id: int) -> Response:
        return self._answer(request, pool_id)

    @extend_schema(parameters=_parameters, request=None, responses=_post)
    def post(self, request: Request, pool_id: int) -> Response:
        """Score a large pool on the current labels in a job (or give the job already
        at it or done with it)."""
        return self._answer(request, pool_id)

    @staticmethod
    def _answer(request: Request, pool_id: int) -> Response:
        pool = pool_or_404(pool_id)
        per_topic = truthy(request.query_params.get("per_topic"))
        measures = request.query_params.getlist("measure") or list(selectors.DEFAULT_MEASURES)
        context: dict[str, Any] = {}  # the job's, for a large pool
        choice = _label_choice(request, pool)
        if isinstance(choice, Response):
            return choice
        try:
            report = background.pool_scores(
                request,
                pool=pool,
                measures=measures,
                context=context,
                per_topic=per_topic,
                choice=choice,
            )
        except selectors.ScoringError as error:
            return Response({"detail": str(error)}, status=409)
        return job_result_answer(
            request,
            context,
            "scores",
            report,
            lambda scored: Response(scored.scores.to_dict(orient="records")),
        )


class LeaderboardView(APIView):
    """The runs ranked by a measure with confidence intervals and every pair tested.
    A pool too large to score in a request (WORKBENCH_SYNC_SCORING_CELLS) is scored
    by a job, as on the page: POST starts it (202), GET answers once it is done;
    the tests are worked out from its table on each GET, with the GET's options."""

    permission_classes = [IsAuthenticated, IsOrganiser]
    _parameters = [
        OpenApiParameter("measure", str, description="a trec_eval measure (default map)"),
        OpenApiParameter("test", str, enum=[*LeaderboardForm.TEST_LABELS], description="default t"),
        OpenApiParameter("correction", str, enum=list(CORRECTIONS), description="holm"),
        OpenApiParameter("alpha", float, description="significance level (0.05)"),
        *LABEL_PARAMETERS,
    ]
    _get, _post = job_result_responses(
        LeaderboardSerializer,
        {
            400: OpenApiResponse(description="A bad option or measure."),
            409: OpenApiResponse(description="Nothing judged yet."),
        },
        description="The JSON of manage.py leaderboard --format json; for a campaign "
        "with no run yet, an empty board with `detail` 'no runs yet'.",
    )

    @extend_schema(parameters=_parameters, responses=_get)
    def get(self, request: Request, pool_id: int) -> Response:
        return self._answer(request, pool_id)

    @extend_schema(parameters=_parameters, request=None, responses=_post)
    def post(self, request: Request, pool_id: int) -> Response:
        """Score a large pool's leaderboard on the current labels in a job (or give
        the job already at it or done with it)."""
        return self._answer(request, pool_id)

    @staticmethod
    def _answer(request: Request, pool_id: int) -> Response:
        pool = pool_or_404(pool_id)
        form = LeaderboardForm(request.query_params or {"measure": "map"})
        if not form.is_valid():
            return Response({"detail": form.error_text()}, status=400)
        context: dict[str, Any] = {}  # the job's, for a large pool
        options = form.leaderboard_options()
        choice = _label_choice(request, pool)
        if isinstance(choice, Response):
            return choice
        try:
            table = background.leaderboard_table(
                request,
                pool=pool,
                measure=form.cleaned_data["measure"],
                context=context,
                choice=choice,
            )
            return job_result_answer(
                request,
                context,
                "leaderboard",
                table,
                lambda scored: Response(
                    to_json(leaderboard_selectors.leaderboard_of(scored, options))
                ),
            )
        except selectors.NoRuns as state:
            empty = leaderboard_selectors.empty_leaderboard(form.cleaned_data["measure"], options)
            return Response({**to_json(empty), "detail": str(state)})
        except selectors.NothingJudged as state:
            return Response({"detail": str(state)}, status=409)
        except selectors.ScoringError as error:
            return Response({"detail": str(error)}, status=400)


class ReusabilityView(APIView):
    """The pool's reusability report (each run left out in turn), made by a job."""

    permission_classes = [IsAuthenticated, IsOrganiser]
    _measure = OpenApiParameter(
        "measure",
        str,
        description="a trec_eval measure (default map); for a sampled pool infAP (the "
        "default) or infNDCG",
    )

    @extend_schema(
        parameters=[_measure],
        responses={
            200: OpenApiResponse(
                description="The report of the current labels: the JSON of manage.py "
                "reusability --pool ID --format json."
            ),
            202: OpenApiResponse(description="A job is making it: {detail, job, url, page}."),
            400: OpenApiResponse(description="A measure or pool it cannot be made for."),
            404: OpenApiResponse(description="No report of the current labels: POST to make one."),
            409: OpenApiResponse(description="Nothing judged yet."),
        },
    )
    def get(self, request: Request, pool_id: int) -> Response:
        _, _, job = self._report_job(request, pool_id)
        if isinstance(job, Response):  # refused
            return job
        if job is None or job.state != Job.DONE:
            return job_waiting_answer(request, job, "report")
        return Response(job.result["report"])

    @extend_schema(
        parameters=[_measure],
        request=None,
        responses={
            202: OpenApiResponse(description="{detail, job, url, page}: poll the job, then GET."),
            400: OpenApiResponse(description="A measure or pool it cannot be made for."),
            409: OpenApiResponse(description="Nothing judged yet."),
        },
    )
    def post(self, request: Request, pool_id: int) -> Response:
        """Start the report of the current labels (or give the job already at it)."""
        pool, measure, job = self._report_job(request, pool_id)
        if isinstance(job, Response):  # refused
            return job
        job = jobs.reusability_start(pool=pool, measure=measure, user=request.user)
        return job_accepted(request, job, "The report is being made: poll the job.")

    @staticmethod
    def _report_job(request: Request, pool_id: int) -> tuple[Any, str, Job | Response | None]:
        """The pool, the measure, and the newest job on the current labels, or the
        refusal (400 for a measure or pool it cannot be made for, 409 unjudged)."""
        pool = pool_or_404(pool_id)
        measure = request.query_params.get(
            "measure"
        ) or reusability_selectors.reusability_default_measure(pool)
        try:
            reusability_selectors.reusability_measure(measure, pool=pool)
            reusability_selectors.reusability_refusal(pool)
        except selectors.NothingJudged as state:
            return pool, measure, Response({"detail": str(state)}, status=409)
        except selectors.ScoringError as error:
            return pool, measure, Response({"detail": str(error)}, status=400)
        return pool, measure, reusability_selectors.reusability_job(pool, measure)


class StrategyReplayView(APIView):
    """What each adaptive strategy would have found on the pool's runs (the pool
    page's replay), with an earlier pool's labels or uploaded qrels, made by a job."""

    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(
        parameters=[OpenApiParameter("job", int, description="a replay job (default: newest)")],
        responses={
            200: OpenApiResponse(description="The JSON of manage.py simulate_pooling."),
            202: OpenApiResponse(description="The job is at it: {detail, job, url, page}."),
            404: OpenApiResponse(description="No replay yet: POST to make one."),
        },
    )
    def get(self, request: Request, pool_id: int) -> Response:
        from scoring import replay_selectors as replay

        pool = pool_or_404(pool_id)
        wanted = request.query_params.get("job")
        job = replay.replay_job(pool, wanted) if wanted else replay.replay_latest(pool)
        if job is None or job.state != Job.DONE:
            return job_waiting_answer(request, job, "replay", state="pool")
        return Response(job.result["report"])

    @extend_schema(
        request=None,
        responses={
            202: OpenApiResponse(description="{detail, job, url, page}: poll the job, then GET."),
            400: OpenApiResponse(description="Bad budgets, pool or qrels (file:line: reason)."),
        },
    )
    def post(self, request: Request, pool_id: int) -> Response:
        """Start a replay: budgets ("500,1000"), seed, and source_pool (an earlier
        pool's id) or a multipart `qrels` file."""
        from scoring import replay_selectors as replay
        from scoring.replay_views import replay_request

        pool = pool_or_404(pool_id)
        try:
            params = replay_request(request, pool)
        except replay.ReplayError as error:
            return Response({"detail": str(error)}, status=400)
        job = replay.replay_start(pool=pool, params=params, user=request.user)
        return job_accepted(request, job, "The replay is being made: poll the job.")
