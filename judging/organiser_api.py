"""Organisers' judging over the API: assignments, overlap, judgments imported from a
file, agreement, the adjudication queue and the final-label policy.

The same forms, selectors and services as the organiser pages; work past the
budget is a 409 until it is confirmed, as the pages refuse it until ticked.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.filters import OrderingFilter
from rest_framework.generics import ListAPIView
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging import selectors, services
from judging.core.agreement import confusion_matrix, records, worst_first
from judging.core.overlap import OverlapPlan, OverlapPlanError
from judging.forms import OverlapForm, PolicyForm, machines_option
from judging.models import Assignment, PoolPolicy
from judging.organiser_serializers import (
    AdjudicationInputSerializer,
    AdjudicationSerializer,
    AgreementSerializer,
    AssignInputSerializer,
    DisagreementSerializer,
    JudgmentImportResultSerializer,
    JudgmentImportSerializer,
    OverlapAssignSerializer,
    OverlapInputSerializer,
    OverlapPlanSerializer,
    PolicySerializer,
    PoolAssignmentSerializer,
)
from pooling.errors import OverBudget, PoolBuildError
from pooling.models import Campaign, Pool
from pooling.selectors import campaign_budget, pool_or_404
from workbench import uploads
from workbench.api import DetailSerializer, Filter, Pagination, QueryFilter, form_errors
from workbench.core.label_schema import LabelError
from workbench.roles import IsOrganiser

ORGANISERS = [IsAuthenticated, IsOrganiser]


def _budget(pool: Pool) -> dict[str, Any]:
    state = campaign_budget(pool.campaign)
    return {
        "budget": state.budget,
        "judgments": state.judgments,
        "adjudications": state.adjudications,
        "spent": state.spent,
        "remaining": state.remaining,
    }


# --------------------------------------------------------------------------
# Assignments


def _account_problems(pool: Pool, names: list[str]) -> list[str]:
    """Each username the campaign's work cannot go to, and why."""
    known = list(User.objects.filter(username__in=names))
    why = selectors.assessor_refusals(pool.campaign, known)
    return [f"{name}: {why.get(name, 'no such account')}" for name in names]


class PoolAssignmentsView(ListAPIView):
    """GET: a pool's assignments with their progress; POST makes assessors the primary
    assessors of topics (as the assignments page does)."""

    permission_classes = ORGANISERS
    serializer_class = PoolAssignmentSerializer
    pagination_class = Pagination
    filter_backends = [QueryFilter, OrderingFilter]
    filters = {
        "topic": Filter("topic__topic_id", "topic id"),
        "assessor": Filter("assessor__username", "username"),
        "kind": Filter("kind", "primary or overlap"),
    }
    ordering_fields = ["created_at", "kind"]

    def get_queryset(self) -> Any:
        pool = pool_or_404(self.kwargs["pool_id"])
        return pool.assignments.select_related("topic", "assessor").order_by(
            "topic__position", "kind", "assessor__username"
        )

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        counted = {
            a.pk: a
            for a in Assignment.objects.filter(
                pk__in=[a.pk for a in page or []]
            ).list_with_progress()
        }
        for assignment in page or []:
            assignment.judged, assignment.total = (
                counted[assignment.pk].judged,
                counted[assignment.pk].total,
            )
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    @extend_schema(
        request=AssignInputSerializer,
        responses={
            201: PoolAssignmentSerializer(many=True),
            400: OpenApiResponse(
                description="Unknown topics or accounts, or a topic that already has "
                "another primary assessor; nothing is created."
            ),
        },
    )
    def post(self, request: Request, pool_id: int) -> Response:
        pool = pool_or_404(pool_id)
        payload = AssignInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        wanted_topics = payload.validated_data["topics"]
        wanted_users = payload.validated_data["assessors"]
        topics = pool.campaign.topics.filter(topic_id__in=wanted_topics).order_by("position")
        assessors = selectors.eligible_assessors(pool.campaign).filter(username__in=wanted_users)
        unknown_topics = sorted(set(wanted_topics) - {t.topic_id for t in topics})
        refused = sorted(set(wanted_users) - {a.username for a in assessors})
        problems = {
            "topics": [f"no such topic: {', '.join(unknown_topics)}"] if unknown_topics else [],
            "assessors": _account_problems(pool, refused),
        }
        if any(problems.values()):
            raise serializers.ValidationError({k: v for k, v in problems.items() if v})
        try:
            created = services.assignments_create(pool=pool, topics=topics, assessors=assessors)
        except services.AssignmentError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        counted = Assignment.objects.filter(pk__in=[a.pk for a in created]).select_related(
            "topic", "assessor"
        )
        data = PoolAssignmentSerializer(counted.list_with_progress(), many=True).data
        return Response(data, status=status.HTTP_201_CREATED)


class PoolAssignmentView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(responses={204: OpenApiResponse(description="Deleted; judgments stay.")})
    def delete(self, request: Request, pool_id: int, assignment_id: int) -> Response:
        """Take the topic from the assessor: the assignment (and its overlap items)
        go; the judgments made stay and count."""
        assignment = get_object_or_404(Assignment, pk=assignment_id, pool_id=pool_id)
        services.assignment_delete(assignment=assignment)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --------------------------------------------------------------------------
# Overlap


def _overlap_form(pool: Pool, values: dict[str, Any]) -> OverlapForm:
    """The overlap page's form, with the API's usernames as the form's account ids."""
    accounts = list(selectors.eligible_assessors(pool.campaign))
    by_name = {account.username: account for account in accounts}
    names = values.pop("assessors", [])
    refused = sorted(set(names) - set(by_name))
    if refused:
        raise serializers.ValidationError({"assessors": _account_problems(pool, refused)})
    data = {**values, "assessors": [by_name[name].pk for name in names]}
    form = OverlapForm(
        data,
        topics=list(pool.campaign.topics.values_list("topic_id", flat=True)),
        assessors=accounts,
        pool_assessors=list(selectors.pool_assessors(pool)),
    )
    if not form.is_valid():
        raise form_errors(form)
    return form


def _plan_body(pool: Pool, plan: OverlapPlan) -> dict[str, Any]:
    state = campaign_budget(pool.campaign)
    return {
        "spec": plan.spec.to_dict(),
        "items": len(plan.items),
        "cost": plan.cost.to_dict(),
        "budget": _budget(pool),
        "over_by": state.over_by(plan.cost.total),
    }


class PoolOverlapView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(
        parameters=[OverlapInputSerializer],
        responses={
            200: OverlapPlanSerializer,
            400: OpenApiResponse(description="A plan the form or the planner refuses."),
        },
    )
    def get(self, request: Request, pool_id: int) -> Response:
        """The overlap K, a fraction and topics ask for, and its cost; nothing stored."""
        pool = pool_or_404(pool_id)
        params = OverlapInputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        form = _overlap_form(pool, dict(params.validated_data))
        try:
            plan = services.overlap_plan(
                pool=pool, spec=form.spec, assessors=form.chosen_assessors()
            )
        except (OverlapPlanError, services.AssignmentError) as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(_plan_body(pool, plan))

    @extend_schema(
        request=OverlapAssignSerializer,
        responses={
            201: OverlapPlanSerializer,
            400: OpenApiResponse(description="A plan the form or the planner refuses."),
            409: OpenApiResponse(
                DetailSerializer, description="Over the budget without confirm_over_budget."
            ),
        },
    )
    def post(self, request: Request, pool_id: int) -> Response:
        """Plan the overlap and assign it: an overlap assignment per assessor and topic."""
        pool = pool_or_404(pool_id)
        payload = OverlapAssignSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        form = _overlap_form(pool, dict(payload.validated_data))
        try:
            plan = services.overlap_assign(
                pool=pool,
                spec=form.spec,
                assessors=form.chosen_assessors(),
                confirm_over_budget=form.cleaned_data["confirm_over_budget"],
                user=request.user,
            )
        except OverBudget as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        except (OverlapPlanError, services.AssignmentError) as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(_plan_body(pool, plan), status=status.HTTP_201_CREATED)


# --------------------------------------------------------------------------
# Judgments from a file


class CampaignJudgmentsImportView(APIView):
    permission_classes = ORGANISERS
    parser_classes = [MultiPartParser]

    @extend_schema(
        request={"multipart/form-data": JudgmentImportSerializer},
        responses={
            201: JudgmentImportResultSerializer,
            400: OpenApiResponse(
                description="Rejected with every problem as file, line and reason (or a "
                "detail); nothing stored."
            ),
            413: OpenApiResponse(DetailSerializer, description="A file over the upload limit."),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        """Import judgments made elsewhere (as `manage.py import_judgments`): every line
        is checked first against the campaign's topics and label schema."""
        campaign = get_object_or_404(Campaign, slug=slug)

        def store(data: dict[str, Any]) -> services.JudgmentImportResult:
            upload = data["file"]
            make_pool = None
            if data.get("make_pool"):
                source = f"judgments file {upload.name}, imported over the API"
                make_pool = services.PoolOfImport(data["make_pool"], source=source)
            return services.judgments_import_file(
                campaign=campaign,
                data=upload.read(),
                name=upload.name,
                create_assessors=data["create_assessors"],
                make_pool=make_pool,
            )

        payload = JudgmentImportSerializer(data=request.data)
        try:
            received = uploads.upload_receive(request, payload, store)
        except (services.JudgmentError, PoolBuildError) as error:
            detail = f"Rejected, nothing stored: {error}"
            return Response({"detail": detail}, status=status.HTTP_400_BAD_REQUEST)

        def body(result: services.JudgmentImportResult) -> dict[str, Any]:
            return {
                "detail": f"{payload.validated_data['file'].name}: judgments {result}.",
                "created": result.created,
                "updated": result.updated,
                "unchanged": result.unchanged,
                "new_assessors": list(result.new_assessors),
                "pool": result.pool.pk if result.pool else None,
            }

        return uploads.upload_answer(request, received, body)


# --------------------------------------------------------------------------
# Agreement

STATISTICS = ["cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic", "observed_agreement"]


class PoolAgreementView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(
        parameters=[
            OpenApiParameter("aspect", str, description="default: the first (relevance)"),
            OpenApiParameter("statistic", str, enum=STATISTICS, description="for the pairs"),
            OpenApiParameter("a", str, description="with b: their confusion matrix"),
            OpenApiParameter("b", str),
            OpenApiParameter("topic", str, description="the confusion matrix of one topic"),
            OpenApiParameter(
                "machines",
                str,
                description="0 leaves machine assessors out; default: included when the "
                "pool has machine labels",
            ),
        ],
        responses={200: AgreementSerializer, 400: OpenApiResponse(description="Bad options.")},
    )
    def get(self, request: Request, pool_id: int) -> Response:
        """Agreement per topic and per assessor pair, worst first (the agreement page)."""
        pool = pool_or_404(pool_id)
        params = request.query_params
        report = selectors.agreement_report(pool, machines=machines_option(params.get("machines")))
        names = [a.name for a in report.aspects]
        aspect = params.get("aspect") or names[0]
        statistic = params.get("statistic") or STATISTICS[0]
        problems = {}
        if aspect not in names:
            problems["aspect"] = [f"one of {', '.join(names)}"]
        if statistic not in STATISTICS:
            problems["statistic"] = [f"one of {', '.join(STATISTICS)}"]
        if problems:
            raise serializers.ValidationError(problems)
        pairs, groups = report.pairs, report.groups
        raters = sorted(set(report.labels["assessor"])) if len(report.labels) else []
        body: dict[str, Any] = {
            "machines": bool(report.machines),
            "raters": [
                {
                    "assessor": who,
                    "name": report.display_name(who),
                    "is_machine": report.is_machine(who),
                }
                for who in raters
            ],
            "aspects": names,
            "aspect": aspect,
            "statistic": statistic,
            "labels": len(report.labels),
            "campaign_groups": records(groups[groups.scope == "campaign"]),
            "topic_groups": records(
                _worst(groups, aspect, "krippendorff_alpha_nominal", scope="topic")
            ),
            "campaign_pairs": _marked(report, _worst(pairs, aspect, statistic, scope="campaign")),
            "topic_pairs": _marked(report, _worst(pairs, aspect, statistic, scope="topic")),
            "assessors": records(report.assessors),
            "human_machine": selectors.human_machine_matrices(pool, report),
        }
        a, b = params.get("a"), params.get("b")
        if a and b:
            matrix = confusion_matrix(
                report.labels,
                aspect=report.aspect(aspect),
                assessor_a=a,
                assessor_b=b,
                query_id=params.get("topic") or None,
            )
            body["confusion"] = {
                "a": a,
                "b": b,
                "topic": params.get("topic") or None,
                "values": [_plain(v) for v in matrix.columns],
                "rows": [
                    [_plain(index), [_plain(v) for v in row]]
                    for index, row in zip(matrix.index, matrix.to_numpy(), strict=True)
                ],
            }
        return Response(AgreementSerializer(body).data)


def _marked(report: Any, frame: Any) -> list[dict[str, Any]]:
    rows = records(frame)
    for row in rows:
        row["is_machine_a"] = report.is_machine(row["assessor_a"])
        row["is_machine_b"] = report.is_machine(row["assessor_b"])
    return rows


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _worst(frame: Any, aspect: str, statistic: str, *, scope: str) -> Any:
    chosen = worst_first(frame, aspect=aspect, statistic=statistic)
    return chosen[chosen.scope == scope]


# --------------------------------------------------------------------------
# Adjudication and policy


class PoolAdjudicationView(ListAPIView):
    """GET: the items whose assessors disagree under the pool's policy, worst first
    (those adjudicated leave it); POST records an item's final label."""

    permission_classes = ORGANISERS
    serializer_class = DisagreementSerializer
    pagination_class = Pagination

    @extend_schema(parameters=[OpenApiParameter("topic", str, description="topic id")])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> Any:
        pool = pool_or_404(self.kwargs["pool_id"])
        queue = selectors.disagreements(pool)
        items = records(queue) if len(queue) else []
        topic = self.request.query_params.get("topic")
        return [item for item in items if not topic or item["query_id"] == topic]

    @extend_schema(
        request=AdjudicationInputSerializer,
        responses={
            200: AdjudicationSerializer,
            400: OpenApiResponse(
                description="A label outside the schema, no such topic, or a document the "
                "pool does not hold for the topic."
            ),
        },
    )
    def post(self, request: Request, pool_id: int) -> Response:
        pool = pool_or_404(pool_id)
        payload = AdjudicationInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        topic = pool.campaign.topics.filter(topic_id=data["topic"]).first()
        if topic is None:
            raise serializers.ValidationError({"topic": [f"no topic {data['topic']!r}"]})
        try:
            adjudication = services.adjudication_record(
                pool=pool,
                topic=topic,
                docno=data["docno"],
                relevance=data["relevance"],
                aspects=data["aspects"],
                reason=data["reason"],
                decided_by=request.user,
            )
        except (LabelError, services.AdjudicationError) as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(AdjudicationSerializer(adjudication).data)


class PoolPolicyView(APIView):
    permission_classes = ORGANISERS

    @staticmethod
    def _body(policy: PoolPolicy) -> dict[str, Any]:
        return {
            "steps": policy.label_policy["steps"],
            "disagreement_mode": policy.disagreement_mode,
            "queue_order": policy.queue_order,
            "post_edit": policy.post_edit,
            "overlap_spec": policy.overlap_spec,
        }

    @extend_schema(responses=PolicySerializer)
    def get(self, request: Request, pool_id: int) -> Response:
        """How the pool's judgments become final labels, and its overlap."""
        return Response(self._body(selectors.policy_of(pool_or_404(pool_id))))

    @extend_schema(
        request=PolicySerializer,
        responses={200: PolicySerializer, 400: OpenApiResponse(description="Not a policy.")},
    )
    def put(self, request: Request, pool_id: int) -> Response:
        """Set the final-label policy (as the adjudication page's form)."""
        pool = pool_or_404(pool_id)
        payload = PolicySerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        form = PolicyForm({"policy": ", ".join(data["steps"]), "mode": data["disagreement_mode"]})
        try:
            if not form.is_valid():
                raise ValueError(form.errors.as_text())
            policy = services.policy_update(
                pool=pool,
                steps=form.cleaned_data["policy"],
                disagreement_mode=form.cleaned_data["mode"],
            )
        except ValueError as error:
            return Response(
                {"detail": f"Policy not changed: {error}"}, status=status.HTTP_400_BAD_REQUEST
            )
        if "queue_order" in data or "post_edit" in data:
            policy = services.policy_machine_use_update(
                pool=pool,
                queue_order=data.get("queue_order", policy.queue_order),
                post_edit=data.get("post_edit", policy.post_edit),
            )
        return Response(self._body(policy))
