"""Machine clients of pools: what a strategy would cost, build, inspect, re-plan,
add late runs, retire and reopen.

The same forms, selectors and services as the pool pages. The build and a
re-plan read every run file, so they answer 202 with the job to poll, as the
pages send the organiser to the job's page; work past the budget is a 409
until it is confirmed.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, F, Q, QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.filters import OrderingFilter
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from pooling import jobs, pool_services, selectors
from pooling.api import ORGANISERS
from pooling.core.revisions import SUMMARY_COLUMNS
from pooling.core.spec import PoolSpec, spec_label
from pooling.errors import OverBudget, PoolBuildError
from pooling.forms import DEFAULT_POOL_PRESET, PoolSpecForm, ReplanForm
from pooling.models import Campaign, Pool
from pooling.pool_serializers import (
    AdditionResultSerializer,
    AddRunsSerializer,
    PoolBudgetSerializer,
    PoolBuildSerializer,
    PoolDetailSerializer,
    PoolEntrySerializer,
    PoolSerializer,
    PoolSpecInputSerializer,
    ReplanApplySerializer,
    ReplanPreviewSerializer,
    ReplanSerializer,
    RevisionSummarySerializer,
    WhatIfSerializer,
)
from pooling.selectors import pool_or_404
from workbench.api import DetailSerializer, Filter, Pagination, QueryFilter, form_errors
from workbench.job_api import job_accepted, job_accepted_response

# --------------------------------------------------------------------------
# Reading (the serializers are in pooling.pool_serializers)


def _budget(state: Any) -> dict[str, Any]:
    return {
        "budget": state.budget,
        "judgments": state.judgments,
        "adjudications": state.adjudications,
        "spent": state.spent,
        "remaining": state.remaining,
    }


def _pools() -> QuerySet[Pool]:
    return (
        Pool.objects.select_related("campaign", "created_by", "retired_by")
        .prefetch_related("runs")
        .annotate(
            n_entries=Count("entries", filter=Q(entries__retired=False)),
            n_sampled=Count("entries", filter=Q(entries__sampled=True, entries__retired=False)),
        )
    )


def _pool(pool_id: int) -> Pool:
    return get_object_or_404(_pools(), pk=pool_id)


# --------------------------------------------------------------------------
# Building


def _spec_form(values: dict[str, Any]) -> PoolSpecForm:
    """The pool form over the API's fields; without depth and strata, a preset's
    (as the page starts from one)."""
    values = {k: v for k, v in values.items() if k != "preset"} | {
        "preset": values.get("preset") or DEFAULT_POOL_PRESET
    }
    if values.get("runs_per_team"):
        values["runs"] = "per-team"
    if "depth" in values or "strata" in values:
        return PoolSpecForm(values)
    start = PoolSpecForm.for_request({"preset": values["preset"], "seed": values.get("seed", "0")})
    return PoolSpecForm(start.data | values)


def _whatif_body(result: selectors.PoolWhatIf, spec: PoolSpec) -> dict[str, Any]:
    import pandas as pd

    def row(values: dict[str, Any]) -> dict[str, Any]:
        depth = values["depth"]
        return {
            "scheme": str(values["scheme"]),
            "depth": None if pd.isna(depth) else int(depth),
            **{key: int(values[key]) for key in ("candidates", "pool_size", "judged", "needed")},
        }

    fit, scale = result.fit_depth, result.fit_scale
    return {
        "label": spec_label(spec),
        "spec": spec.to_dict(),
        "rows": [row(r) for r in result.rows],
        "chosen": row(result.chosen),
        "budget": _budget(result.budget_state),
        "left": result.budget,
        "over_by": result.over_by,
        "left_after": result.left_after,
        "deepest_rank": result.deepest_rank,
        "fit_depth": None
        if fit is None
        else {"depth": fit.depth, "pool_size": fit.pool_size, "needed": fit.needed},
        "fit_scale": None
        if scale is None
        else {
            "factor": scale.factor,
            "label": spec_label(scale.spec),
            "spec": scale.spec.to_dict(),
            "pool_size": scale.pool_size,
            "needed": scale.needed,
        },
    }


class PoolWhatIfView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(
        parameters=[PoolSpecInputSerializer],
        responses={
            200: WhatIfSerializer,
            400: OpenApiResponse(description="A strategy the form refuses."),
            409: OpenApiResponse(DetailSerializer, description="No runs to pool yet."),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        """What the pool of a strategy would cost against the budget, beside depth-k
        pools of every depth (the pool page's what-if panel); nothing is stored."""
        campaign = get_object_or_404(Campaign, slug=slug)
        params = PoolSpecInputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        form = _spec_form(dict(params.validated_data))
        if not form.is_valid():
            raise form_errors(form)
        try:
            result = selectors.pool_whatif(campaign, form.spec, runs_per_team=form.pooled_per_team)
        except PoolBuildError as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        return Response(_whatif_body(result, form.spec))


class CampaignPoolsView(ListAPIView):
    """GET lists a campaign's pools, newest first; POST builds one in the background."""

    permission_classes = ORGANISERS
    serializer_class = PoolSerializer
    pagination_class = Pagination
    filter_backends = [QueryFilter, OrderingFilter]
    filters = {"run": Filter("runs__tag", "pools built from (or extended with) this run tag")}
    ordering_fields = ["created_at", "name"]
    ordering = ["-created_at"]

    def get_queryset(self) -> Any:
        campaign = get_object_or_404(Campaign, slug=self.kwargs["slug"])
        return _pools().filter(campaign=campaign)

    @extend_schema(
        request=PoolBuildSerializer,
        responses={
            202: job_accepted_response(
                "The pool is built by a background job; its result names the pool."
            ),
            400: OpenApiResponse(description="A strategy the form refuses."),
            409: OpenApiResponse(
                DetailSerializer,
                description="No runs yet, or over the budget without confirm_over_budget.",
            ),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        payload = PoolBuildSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        form = _spec_form(dict(payload.validated_data))
        if not form.is_valid():
            raise form_errors(form)
        try:
            whatif = selectors.pool_whatif(campaign, form.spec, runs_per_team=form.pooled_per_team)
        except PoolBuildError as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        name = form.cleaned_data["name"] or spec_label(form.spec)
        confirmed = form.cleaned_data["confirm_over_budget"]
        if whatif.over_by and not confirmed:
            refusal = OverBudget(whatif.budget_state, whatif.needed, f"building pool {name}")
            return Response({"detail": str(refusal)}, status=status.HTTP_409_CONFLICT)
        job = jobs.pool_build_start(
            campaign=campaign,
            spec=form.spec,
            name=form.cleaned_data["name"],
            confirm_over_budget=confirmed,
            runs_per_team=form.pooled_per_team,
            created_by=request.user,
        )
        return job_accepted(request, job, f"Accepted: pool {name} is built by a background job.")


# --------------------------------------------------------------------------
# One pool


class PoolView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(responses=PoolDetailSerializer)
    def get(self, request: Request, pool_id: int) -> Response:
        """A pool: its spec, runs, per-topic strata and progress, revisions, additions,
        and the late runs that can join it."""
        return Response(PoolDetailSerializer(_pool(pool_id)).data)


class PoolEntriesView(ListAPIView):
    """The pool's entries (what the TSV export holds): by topic, then presentation order."""

    permission_classes = ORGANISERS
    serializer_class = PoolEntrySerializer
    pagination_class = Pagination
    filter_backends = [QueryFilter, OrderingFilter]
    filters = {
        "topic": Filter("topic__topic_id", "topic id"),
        "sampled": Filter("sampled", "drawn for judging", "boolean"),
        "retired": Filter("retired", "taken out of the plan by a revision", "boolean"),
    }
    ordering_fields = ["best_rank", "docno", "order", "stratum"]

    def get_queryset(self) -> Any:
        pool = pool_or_404(self.kwargs["pool_id"])
        return pool.entries.select_related("topic").order_by(
            "topic__position", F("order").asc(nulls_last=True), "best_rank", "docno"
        )


class PoolRunsView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(
        request=AddRunsSerializer,
        responses={
            201: AdditionResultSerializer,
            400: OpenApiResponse(
                description="Unknown runs, runs already in it, or a pool that takes no late runs."
            ),
            409: OpenApiResponse(
                DetailSerializer, description="Over the budget without confirm_over_budget."
            ),
        },
    )
    def post(self, request: Request, pool_id: int) -> Response:
        """Add late runs to a depth-k pool: only their new documents join, nothing
        else changes."""
        pool = pool_or_404(pool_id)
        payload = AddRunsSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        tags = list(dict.fromkeys(payload.validated_data["runs"]))
        runs = {run.tag: run for run in pool.campaign.runs.filter(tag__in=tags)}
        unknown = [tag for tag in tags if tag not in runs]
        if unknown:
            raise serializers.ValidationError(
                {"runs": [f"no run tagged {tag!r} in {pool.campaign.slug}" for tag in unknown]}
            )
        try:
            addition = pool_services.pool_add_runs(
                pool=pool,
                runs=[runs[tag] for tag in tags],
                created_by=request.user,
                confirm_over_budget=payload.validated_data["confirm_over_budget"],
            )
        except OverBudget as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        except PoolBuildError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        entries = addition.entries.count()
        return Response(
            {
                "detail": f"Added {entries} entries from {len(tags)} run(s).",
                "addition": addition.pk,
                "runs": tags,
                "entries": entries,
            },
            status=status.HTTP_201_CREATED,
        )


def _replan_form(pool: Pool, values: dict[str, Any]) -> ReplanForm:
    base = PoolSpec.from_dict(pool.spec)
    if "depth" not in values and "strata" not in values:
        values |= {"depth": str(base.depth or ""), "strata": " ".join(map(str, base.strata))}
    return ReplanForm(
        values,
        base=base,
        topics=list(pool.campaign.topics.values_list("topic_id", flat=True)),
        unfinished=selectors.unfinished_topics(pool),
    )


class PoolReplanView(APIView):
    permission_classes = ORGANISERS

    def _checked(
        self, pool: Pool, serializer: serializers.Serializer
    ) -> tuple[ReplanForm, Any, dict[str, Any]] | Response:
        if PoolSpec.from_dict(pool.spec).source:
            detail = "A pool of imported judgments is not built from runs: it has no plan."
            return Response({"detail": detail}, status=status.HTTP_409_CONFLICT)
        serializer.is_valid(raise_exception=True)
        form = _replan_form(pool, dict(serializer.validated_data))
        if not form.is_valid():
            raise form_errors(form)
        try:
            preview = selectors.pool_revision_preview(
                pool, spec=form.spec, topics=form.cleaned_data["chosen"]
            )
        except PoolBuildError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return form, preview, serializer.validated_data

    @extend_schema(
        parameters=[ReplanSerializer],
        responses={
            200: ReplanPreviewSerializer,
            400: OpenApiResponse(description="A plan or topics the form refuses."),
            409: OpenApiResponse(DetailSerializer, description="A pool of imported judgments."),
        },
    )
    def get(self, request: Request, pool_id: int) -> Response:
        """What re-planning topics would change, per topic, and its cost; nothing stored."""
        pool = pool_or_404(pool_id)
        checked = self._checked(pool, ReplanSerializer(data=request.query_params))
        if isinstance(checked, Response):
            return checked
        form, preview, _ = checked
        return Response(self._preview(pool, form, preview))

    @extend_schema(
        request=ReplanApplySerializer,
        responses={
            202: job_accepted_response(
                "A background job applies the re-plan; its result names the revision."
            ),
            400: OpenApiResponse(description="A plan or topics the form refuses."),
            409: OpenApiResponse(
                DetailSerializer,
                description="A pool of imported judgments, or over the budget without "
                "confirm_over_budget.",
            ),
        },
    )
    def post(self, request: Request, pool_id: int) -> Response:
        """Re-plan topics of a pool being judged: queues change in place, assignments
        carry over, nothing judged is lost."""
        pool = pool_or_404(pool_id)
        checked = self._checked(pool, ReplanApplySerializer(data=request.data))
        if isinstance(checked, Response):
            return checked
        form, preview, values = checked
        confirmed = values["confirm_over_budget"]
        state = selectors.campaign_budget(pool.campaign)
        if state.over_by(preview.cost) and not confirmed:
            refusal = OverBudget(
                state,
                preview.cost,
                f"re-planning {len(form.cleaned_data['chosen'])} topic(s) of pool {pool.pk}",
            )
            return Response({"detail": str(refusal)}, status=status.HTTP_409_CONFLICT)
        job = jobs.pool_revise_start(
            pool=pool,
            spec=form.spec,
            topics=form.cleaned_data["chosen"],
            reason=form.cleaned_data["reason"],
            confirm_over_budget=confirmed,
            created_by=request.user,
        )
        return job_accepted(request, job, "Accepted: the re-plan is applied by a background job.")

    @staticmethod
    def _preview(pool: Pool, form: ReplanForm, preview: Any) -> dict[str, Any]:
        state = selectors.campaign_budget(pool.campaign)
        summary = preview.summary[list(SUMMARY_COLUMNS)].to_dict(orient="records")
        advice = selectors.pool_revision_advice(
            pool, spec=form.spec, topics=form.cleaned_data["chosen"], revision=preview
        )
        keeping = None
        if advice.keeping is not None and advice.keeping_revision is not None:
            kept = advice.keeping_revision
            keeping = {
                "label": spec_label(advice.keeping),
                "spec": advice.keeping.to_dict(),
                "cost": kept.cost,
                "work_change": kept.work_change,
                "judged_out_of_sample": kept.judged_out_of_sample,
            }
        return {
            "label": spec_label(form.spec),
            "spec": form.spec.to_dict(),
            "topics": form.cleaned_data["chosen"],
            "cost": preview.cost,
            "work_change": int(preview.work_change),
            "joining": preview.joining,
            "judged_out_of_sample": preview.judged_out_of_sample,
            "redraws": [
                {"stratum": str(r.stratum), "was": [str(s) for s in r.was]} for r in advice.redraws
            ],
            "sample_keeping": keeping,
            "budget": _budget(state),
            "over_by": state.over_by(preview.cost),
            "summary": RevisionSummarySerializer(summary, many=True).data,
        }


class PoolBudgetView(APIView):
    """An adaptive pool's re-plan: its budget raised or lowered."""

    permission_classes = ORGANISERS

    @extend_schema(
        request=PoolBudgetSerializer,
        responses={
            200: PoolSerializer,
            400: OpenApiResponse(description="Not an adaptive pool, or a budget below 1."),
            409: OpenApiResponse(
                DetailSerializer, description="Over the budget without confirm_over_budget."
            ),
        },
    )
    def post(self, request: Request, pool_id: int) -> Response:
        """Raise or lower an adaptive pool's budget: topics draw up to their new share."""
        pool = pool_or_404(pool_id)
        payload = PoolBudgetSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            pool_services.pool_budget_set(
                pool=pool,
                budget=payload.validated_data["budget"],
                created_by=request.user,
                confirm_over_budget=payload.validated_data["confirm_over_budget"],
            )
        except OverBudget as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        except PoolBuildError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(PoolSerializer(_pool(pool_id)).data)


class PoolRetireView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(request=None, responses=PoolSerializer)
    def post(self, request: Request, pool_id: int) -> Response:
        """Close the pool: its assignments leave the assessors' lists; its judgments stay."""
        pool_services.pool_retire(pool=pool_or_404(pool_id), retired_by=request.user)
        return Response(PoolSerializer(_pool(pool_id)).data)


class PoolReopenView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(request=None, responses=PoolSerializer)
    def post(self, request: Request, pool_id: int) -> Response:
        """Undo a retirement: the assignments come back as they were."""
        pool_services.pool_reopen(pool=pool_or_404(pool_id))
        return Response(PoolSerializer(_pool(pool_id)).data)
