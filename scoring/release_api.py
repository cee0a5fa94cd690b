"""Releases over the API, for organisers: release a pool's results (a job for a large
pool), list and read its releases, compare two, withdraw one, download its bundle
and files. The teams' side is `participation.scores_api`."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from pooling.selectors import pool_or_404
from scoring import release_selectors, selectors, services
from scoring.api import LeaderboardSerializer
from scoring.core.analysis.corrections import CORRECTIONS
from scoring.forms import CompareForm, ReleaseForm, WithdrawForm
from scoring.models import Release
from scoring.release_views import bundle_response
from workbench.api import DetailSerializer, form_errors
from workbench.http import attachment
from workbench.job_api import job_accepted, job_accepted_response
from workbench.roles import IsOrganiser

ORGANISERS = [IsAuthenticated, IsOrganiser]


class ReleaseRequestSerializer(serializers.Serializer):
    measure = serializers.CharField(required=False, help_text="the leaderboard's (default map)")
    measures = serializers.CharField(
        required=False,
        help_text="every measure scored, space-separated (default "
        f"{' '.join(selectors.DEFAULT_MEASURES)})",
    )
    test = serializers.ChoiceField(choices=[*ReleaseForm.TEST_LABELS], required=False)
    correction = serializers.ChoiceField(choices=list(CORRECTIONS), required=False)
    alpha = serializers.FloatField(required=False, help_text="significance level (0.05)")
    labels = serializers.ChoiceField(choices=list(selectors.LABEL_SOURCES), required=False)
    machine = serializers.CharField(
        required=False, allow_blank=True, help_text="with a machine source: the machine's name"
    )
    reason = serializers.CharField(required=False, help_text="why it is released")


class WithdrawRequestSerializer(serializers.Serializer):
    reason = serializers.CharField(help_text="why it is withdrawn (required)")


class ReleaseFileSerializer(serializers.Serializer):
    sha256 = serializers.CharField()
    bytes = serializers.IntegerField()
    url = serializers.URLField()


class WithdrawalSerializer(serializers.Serializer):
    reason = serializers.CharField()
    by = serializers.CharField(allow_null=True)
    at = serializers.DateTimeField()


class ReleaseSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    campaign = serializers.CharField(help_text="the campaign's slug")
    pool = serializers.IntegerField()
    version = serializers.IntegerField(help_text="1, 2, ... within the pool")
    measure = serializers.CharField(help_text="the leaderboard's measure")
    measures = serializers.ListField(child=serializers.CharField())
    leaderboard_options = serializers.DictField()
    label_policy = serializers.DictField(
        help_text="{labels: human, steps: [adjudicated, ...], disagreement_mode}"
    )
    reason = serializers.CharField()
    released_by = serializers.CharField(allow_null=True)
    released_at = serializers.DateTimeField()
    state_as_of = serializers.DateTimeField(help_text="the last judgment it reflects")
    withdrawn = WithdrawalSerializer(allow_null=True)
    url = serializers.URLField()
    bundle = serializers.URLField(help_text="the zip (manage.py release_bundle's)")


class ReleaseRunSerializer(serializers.Serializer):
    tag = serializers.CharField()
    team = serializers.CharField(help_text="'' for the organisers' runs")
    file = serializers.CharField(help_text="its name in the bundle")
    sha256 = serializers.CharField()
    means = serializers.DictField(child=serializers.FloatField(allow_null=True))
    missing_topics = serializers.ListField(child=serializers.CharField())


class ReleaseSerializer(ReleaseSummarySerializer):
    judged_topics = serializers.ListField(child=serializers.CharField())
    left_out_topics = serializers.ListField(child=serializers.CharField())
    pool_spec = serializers.DictField()
    pool_revisions = serializers.ListField(child=serializers.DictField())
    workbench = serializers.DictField(help_text="{version, commit} of the code that scored it")
    files = serializers.DictField(child=ReleaseFileSerializer())
    runs = ReleaseRunSerializer(many=True)
    leaderboard = LeaderboardSerializer()


class LabelChangeSerializer(serializers.Serializer):
    topic = serializers.CharField()
    docno = serializers.CharField()
    old = serializers.IntegerField(allow_null=True)
    new = serializers.IntegerField(allow_null=True)
    change = serializers.ChoiceField(choices=["added", "changed", "removed"])


class ScoreChangeSerializer(serializers.Serializer):
    run = serializers.CharField()
    measure = serializers.CharField()
    old = serializers.FloatField(allow_null=True)
    new = serializers.FloatField(allow_null=True)
    old_rank = serializers.IntegerField(allow_null=True)
    new_rank = serializers.IntegerField(allow_null=True)


class FlipSerializer(serializers.Serializer):
    a = serializers.CharField(help_text="ranked above b in the newer release")
    b = serializers.CharField()
    test = serializers.CharField()
    old_significant = serializers.BooleanField()
    new_significant = serializers.BooleanField()
    old_p_adjusted = serializers.FloatField(allow_null=True)
    new_p_adjusted = serializers.FloatField(allow_null=True)


class ComparisonSerializer(serializers.Serializer):
    pool = serializers.IntegerField()
    old = serializers.IntegerField(help_text="the version compared from")
    new = serializers.IntegerField(help_text="the version compared to")
    labels = LabelChangeSerializer(many=True)
    label_counts = serializers.DictField(child=serializers.IntegerField())
    measures = serializers.ListField(child=serializers.CharField())
    scores = ScoreChangeSerializer(many=True, help_text="runs whose mean or rank moved")
    flips = FlipSerializer(
        many=True,
        allow_null=True,
        help_text="pairs whose significance flipped; null when the two leaderboards rank "
        "by different measures or options",
    )


def _number(value: float | None) -> float | None:
    return None if value is None or value != value else value


def release_summary(request: Request, release: Release) -> dict[str, Any]:
    pool = release.pool
    args = [pool.pk, release.version]
    withdrawal = getattr(release, "withdrawal", None)
    return {
        "id": release.pk,
        "campaign": pool.campaign.slug,
        "pool": pool.pk,
        "version": release.version,
        "measure": release.measure,
        "measures": release.measures,
        "leaderboard_options": release.leaderboard_options,
        "label_policy": release.label_policy,
        "reason": release.reason,
        "released_by": release.released_by.username if release.released_by else None,
        "released_at": release.released_at,
        "state_as_of": release.state_as_of,
        "withdrawn": None
        if withdrawal is None
        else {
            "reason": withdrawal.reason,
            "by": withdrawal.withdrawn_by.username if withdrawal.withdrawn_by else None,
            "at": withdrawal.withdrawn_at,
        },
        "url": request.build_absolute_uri(reverse("api-pool-release", args=args)),
        "bundle": request.build_absolute_uri(reverse("api-pool-release-bundle", args=args)),
    }


def release_body(request: Request, release: Release) -> dict[str, Any]:
    args = [release.pool_id, release.version]
    return release_summary(request, release) | {
        "judged_topics": release.judged_topics,
        "left_out_topics": release.left_out_topics,
        "pool_spec": release.pool_spec,
        "pool_revisions": release.pool_revisions,
        "workbench": release.workbench,
        "files": {
            name: file
            | {
                "url": request.build_absolute_uri(
                    reverse("api-pool-release-file", args=[*args, name])
                )
            }
            for name, file in release.files.items()
        },
        "runs": [
            {
                "tag": item.tag,
                "team": item.team_name,
                "file": item.file_name,
                "sha256": item.sha256,
                "means": {name: _number(value) for name, value in item.means.items()},
                "missing_topics": item.missing_topics,
            }
            for item in release.runs.all()
        ],
        "leaderboard": release.leaderboard,
    }


def _release(pool_id: int, version: int) -> Release:
    release = release_selectors.release_or_none(pool_or_404(pool_id), version)
    if release is None:
        raise Http404(f"pool {pool_id} has no release {version}")
    return release


class PoolReleasesView(APIView):
    """GET lists a pool's releases, withdrawn ones too; POST releases its results as
    they are now (201), or starts a job for a large pool (202)."""

    permission_classes = ORGANISERS

    @extend_schema(responses=ReleaseSummarySerializer(many=True))
    def get(self, request: Request, pool_id: int) -> Response:
        releases = release_selectors.pool_releases(pool_or_404(pool_id))
        return Response([release_summary(request, release) for release in releases])

    @extend_schema(
        request=ReleaseRequestSerializer,
        responses={
            201: ReleaseSerializer,
            202: job_accepted_response("A large pool: a job makes the release; poll it."),
            400: OpenApiResponse(
                description="A bad option or measure: {field: [reasons]} or {detail}."
            ),
            409: OpenApiResponse(DetailSerializer, description="Nothing judged, or no run."),
        },
        description="Score every run of the campaign on the pool's labels now and store it "
        "all, once, as the pool's next version.",
    )
    def post(self, request: Request, pool_id: int) -> Response:
        pool = pool_or_404(pool_id)
        form = ReleaseForm(request.data or {"measure": "map"})
        if not form.is_valid():
            raise form_errors(form)
        data = form.cleaned_data
        try:
            made = services.release_start(
                pool=pool,
                measure=data["measure"],
                measures=data["measures"],
                options=form.leaderboard_options(),
                labels=data["labels"],
                machine=data["machine"] or None,
                reason=data["reason"],
                released_by=request.user,
            )
        except (selectors.NothingJudged, release_selectors.NoRunToRelease) as state:
            return Response({"detail": str(state)}, status=status.HTTP_409_CONFLICT)
        except selectors.ScoringError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        if not isinstance(made, Release):
            return job_accepted(request, made, "A job makes the release: poll it.")
        return Response(release_body(request, made), status=status.HTTP_201_CREATED)


class PoolReleaseView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(responses=ReleaseSerializer)
    def get(self, request: Request, pool_id: int, version: int) -> Response:
        """A release as it was made: its files with their hashes, every run's means,
        the leaderboard, who released it, when and why (and any withdrawal)."""
        return Response(release_body(request, _release(pool_id, version)))


class PoolReleaseWithdrawView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(
        request=WithdrawRequestSerializer,
        responses={
            200: ReleaseSummarySerializer,
            400: OpenApiResponse(
                description="No reason ({reason: [...]}), or withdrawn already ({detail})."
            ),
        },
        description="Hide the release from the teams, saying why; it stays in the record.",
    )
    def post(self, request: Request, pool_id: int, version: int) -> Response:
        release = _release(pool_id, version)
        form = WithdrawForm(request.data)
        if not form.is_valid():
            raise form_errors(form)
        try:
            release = services.release_withdraw(
                release=release, reason=form.cleaned_data["reason"], withdrawn_by=request.user
            )
        except release_selectors.ReleaseError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(release_summary(request, release))


class PoolReleaseCompareView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(
        parameters=[
            OpenApiParameter("from", int, required=True, description="a version"),
            OpenApiParameter("to", int, required=True, description="another version"),
        ],
        responses={
            200: ComparisonSerializer,
            400: OpenApiResponse(description="from and to missing or not versions."),
            409: OpenApiResponse(DetailSerializer, description="A file not as released."),
        },
    )
    def get(self, request: Request, pool_id: int) -> Response:
        """What changed between two releases of the pool: labels added, changed or
        removed (topic, docno, old, new), runs whose mean or rank moved, and pairs
        whose significance flipped."""
        form = CompareForm(request.query_params)
        if not form.is_valid():
            raise form_errors(form)
        old = _release(pool_id, form.cleaned_data["from"])
        new = _release(pool_id, form.cleaned_data["to"])
        try:
            comparison = release_selectors.release_comparison(old, new)
        except release_selectors.ReleaseError as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        return Response(comparison_body(comparison))


def comparison_body(comparison: release_selectors.ReleaseComparison) -> dict[str, Any]:
    labels = comparison.labels
    return {
        "pool": comparison.new.pool_id,
        "old": comparison.old.version,
        "new": comparison.new.version,
        "labels": [
            {"topic": q, "docno": d, "old": o, "new": n, "change": c}
            for q, d, o, n, c in zip(
                labels["query_id"],
                labels["doc_id"],
                labels["old"],
                labels["new"],
                labels["change"],
                strict=True,
            )
        ],
        "label_counts": comparison.label_counts,
        "measures": comparison.measures,
        "scores": [
            {
                "run": c.run,
                "measure": c.measure,
                "old": _number(c.old),
                "new": _number(c.new),
                "old_rank": c.old_rank,
                "new_rank": c.new_rank,
            }
            for c in comparison.scores
        ],
        "flips": None
        if comparison.flips is None
        else [
            {
                "a": f.a,
                "b": f.b,
                "test": f.test,
                "old_significant": f.old_significant,
                "new_significant": f.new_significant,
                "old_p_adjusted": f.old_p_adjusted,
                "new_p_adjusted": f.new_p_adjusted,
            }
            for f in comparison.flips
        ],
    }


class PoolReleaseBundleView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(
        responses={(200, "application/zip"): bytes, 409: DetailSerializer},
        description="The release's zip: qrels, runs/<tag> as submitted, scores.tsv, the "
        "leaderboard (TSV, JSON, LaTeX), manifest.json and reproduce.sh.",
    )
    def get(self, request: Request, pool_id: int, version: int) -> Any:
        try:
            return bundle_response(_release(pool_id, version))
        except release_selectors.ReleaseError as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)


class PoolReleaseFileView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(
        responses={(200, "text/plain"): str, 409: DetailSerializer},
        description="One stored file of the release (manifest.json lists them).",
    )
    def get(self, request: Request, pool_id: int, version: int, name: str) -> Any:
        release = _release(pool_id, version)
        if name not in release.files:
            raise Http404(f"release {version} has no file {name!r}")
        try:
            data = release_selectors.release_file(release, name)
        except release_selectors.ReleaseError as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        return attachment(data, name, "text/plain; charset=utf-8")
