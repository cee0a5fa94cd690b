"""API of machine assessors (organisers): list, create and update a campaign's
machines, start a run on a pool (202, a job), and read a pool's machine labels."""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging import machine_services
from judging.jobs import machine_judge_start
from judging.models import MachineAssessor, MachineJudgment
from pooling.api import ORGANISERS
from pooling.models import Campaign, Pool, PoolEntry
from workbench.api import Pagination
from workbench.job_api import job_accepted, job_accepted_response


class MachineSerializer(serializers.ModelSerializer):
    """A machine assessor; the API key is never stored nor shown, only the NAME of the
    environment variable that holds it."""

    account = serializers.CharField(source="account.username", read_only=True)
    baseline = serializers.BooleanField(source="is_baseline", read_only=True)
    machine = serializers.SerializerMethodField()
    price_per_1k_tokens = serializers.DecimalField(
        max_digits=12, decimal_places=6, allow_null=True, required=False
    )

    class Meta:
        model = MachineAssessor
        fields = [
            "id",
            "name",
            "account",
            "machine",
            "baseline",
            *machine_services.MACHINE_SETTINGS,
        ]
        read_only_fields = ["id"]
        extra_kwargs = {"name": {"validators": []}}

    def get_machine(self, machine: MachineAssessor) -> bool:
        return True


def _settings(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k in machine_services.MACHINE_SETTINGS}


def _refused(error: Exception) -> Response:
    return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)


class MachinesView(APIView):
    """GET lists the campaign's machine assessors; POST adds one."""

    permission_classes = ORGANISERS

    @extend_schema(responses=MachineSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        machines = MachineAssessor.objects.filter(campaign=campaign).select_related("account")
        return Response(MachineSerializer(machines, many=True).data)

    @extend_schema(request=MachineSerializer, responses={201: MachineSerializer})
    def post(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        serializer = MachineSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        try:
            machine = machine_services.machine_create(
                campaign=campaign, name=data.pop("name"), **_settings(data)
            )
        except machine_services.MachineError as error:
            return _refused(error)
        return Response(MachineSerializer(machine).data, status=status.HTTP_201_CREATED)


def _machine(slug: str, machine_id: int) -> MachineAssessor:
    return get_object_or_404(
        MachineAssessor.objects.select_related("campaign", "account"),
        campaign__slug=slug,
        pk=machine_id,
    )


class MachineView(APIView):
    """GET one machine; PATCH changes its settings (not its name)."""

    permission_classes = ORGANISERS

    @extend_schema(responses=MachineSerializer)
    def get(self, request: Request, slug: str, machine_id: int) -> Response:
        return Response(MachineSerializer(_machine(slug, machine_id)).data)

    @extend_schema(request=MachineSerializer, responses=MachineSerializer)
    def patch(self, request: Request, slug: str, machine_id: int) -> Response:
        machine = _machine(slug, machine_id)
        serializer = MachineSerializer(machine, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        try:
            machine_services.machine_update(
                machine=machine, **_settings(dict(serializer.validated_data))
            )
        except machine_services.MachineError as error:
            return _refused(error)
        return Response(MachineSerializer(machine).data)


class MachineRunSerializer(serializers.Serializer):
    pool = serializers.IntegerField()
    topics = serializers.ListField(
        child=serializers.CharField(max_length=100), required=False, default=list
    )
    documents = serializers.ChoiceField(choices=machine_services.DOCUMENTS, default="unjudged")


class MachineRunView(APIView):
    """POST starts the machine on a pool's documents (202: poll the job)."""

    permission_classes = ORGANISERS

    @extend_schema(
        request=MachineRunSerializer,
        responses={202: job_accepted_response("The run is a job: poll it.")},
    )
    def post(self, request: Request, slug: str, machine_id: int) -> Response:
        machine = _machine(slug, machine_id)
        serializer = MachineRunSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        pool = Pool.objects.filter(pk=data["pool"], campaign=machine.campaign).first()
        if pool is None:
            return _refused(ValueError(f"pool {data['pool']}: no such pool in this campaign"))
        try:
            job = machine_judge_start(
                machine=machine,
                pool=pool,
                topics=data["topics"] or None,
                documents=data["documents"],
                created_by=request.user,
            )
        except machine_services.MachineError as error:
            return _refused(error)
        return job_accepted(request, job, f"Machine {machine.name} labels pool {pool.pk}.")


class MachineLabelSerializer(serializers.ModelSerializer):
    machine = serializers.CharField(source="machine.name")
    assessor = serializers.CharField(source="machine.account.username")
    topic = serializers.CharField(source="topic.topic_id")

    class Meta:
        model = MachineJudgment
        fields = ["machine", "assessor", "topic", "docno", "labels", "provenance", "updated_at"]


class PoolMachineLabelsView(ListAPIView):
    """The machines' labels of a pool's documents, paged (`?machine=NAME` for one)."""

    permission_classes = ORGANISERS
    serializer_class = MachineLabelSerializer
    pagination_class = Pagination

    def get_queryset(self) -> Any:
        pool = get_object_or_404(Pool, pk=self.kwargs["pool_id"])
        in_pool = PoolEntry.objects.filter(
            pool=pool, topic=OuterRef("topic"), docno=OuterRef("docno")
        )
        labels = MachineJudgment.objects.filter(
            Exists(in_pool), machine__campaign=pool.campaign_id
        ).select_related("machine__account", "topic")
        name = self.request.query_params.get("machine")
        if name:
            labels = labels.filter(machine__name=name)
        return labels.order_by("topic__position", "docno", "machine__name")
