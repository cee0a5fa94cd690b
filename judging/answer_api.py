"""API of a generated-answers campaign: its answer runs (list, upload) and its
topics' nuggets (nuggetizer's records; import), with the pages' checks and errors."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging import answer_machine_services, answer_selectors, answer_services
from judging.core import nugget_files
from judging.forms import GeneratedAnswersUploadForm, NuggetsImportForm, machines_option
from judging.models import AnswerAssignment, AnswerJudgment, NuggetList
from pooling import answer_services as answer_run_services
from pooling.api import ORGANISERS, file_upload, upload_request, upload_responses
from pooling.models import Answer, AnswerRun, Campaign


def _answers_campaign(slug: str) -> Campaign:
    campaign = get_object_or_404(Campaign, slug=slug)
    if not campaign.is_answers:
        raise Http404(f"{campaign.name} is not a generated-answers campaign")
    return campaign


class AnswerRunSerializer(serializers.ModelSerializer):
    team = serializers.CharField(source="team.name", allow_null=True, default=None)
    n_answers = serializers.IntegerField(source="answers.count")

    class Meta:
        model = AnswerRun
        fields = ["id", "tag", "team", "original_name", "uploaded_at", "n_answers"]


class AnswerRunsStoredSerializer(serializers.Serializer):
    detail = serializers.CharField()
    runs = AnswerRunSerializer(many=True)


class AnswerRunsView(APIView):
    """GET lists the campaign's runs of answers; POST uploads an answer file (field
    `file`, TREC 2024 RAG format; `pool_cited` also stores each run's cited segments
    as a ranked run). Every line is checked; a problem stores nothing (400)."""

    permission_classes = ORGANISERS
    parser_classes = [MultiPartParser]

    @extend_schema(responses=AnswerRunSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        runs = _answers_campaign(slug).answer_runs.select_related("team").order_by("tag")
        return Response(AnswerRunSerializer(runs, many=True).data)

    @extend_schema(
        request=upload_request("AnswerRunsUpload"),
        responses=upload_responses(AnswerRunsStoredSerializer),
    )
    def post(self, request: Request, slug: str) -> Response:
        _answers_campaign(slug)

        def store(campaign: Campaign, data: dict[str, Any]) -> dict[str, Any]:
            upload = data["file"]
            runs = answer_run_services.answer_runs_import(
                campaign=campaign,
                data=upload.read(),
                name=upload.name,
                uploaded_by=request.user,
                pool_cited=data["pool_cited"],
            )
            return {
                "detail": f"Stored {len(runs)} run(s) of answers from {upload.name}.",
                "runs": AnswerRunSerializer(runs, many=True).data,
            }

        return file_upload(request, slug, GeneratedAnswersUploadForm, store)


class NuggetRecordSerializer(serializers.Serializer):
    qid = serializers.CharField()
    query = serializers.CharField(allow_blank=True)
    version = serializers.IntegerField()
    nuggets = serializers.ListField(child=serializers.DictField())


class NuggetsView(APIView):
    """GET: every topic's current nuggets as nuggetizer's records (`qid`, `query`,
    `nuggets: [{"text", "importance"}]`) with their `version`; POST imports a
    nuggetizer JSONL file (field `file`), each topic its next version."""

    permission_classes = ORGANISERS
    parser_classes = [MultiPartParser]

    @extend_schema(responses=NuggetRecordSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        records = []
        for topic in _answers_campaign(slug).topics.all():
            current = answer_services.current_nuggets(topic)
            if current is None:
                continue
            texts = answer_selectors.nugget_texts(current)
            records.append(
                {
                    "qid": topic.topic_id,
                    "query": topic.title or topic.description,
                    "version": current.version,
                    "nuggets": [{"text": n.text, "importance": n.importance} for n in texts],
                }
            )
        return Response(records)

    @extend_schema(
        request=upload_request("NuggetsUpload"),
        responses=upload_responses(NuggetRecordSerializer(many=True)),
    )
    def post(self, request: Request, slug: str) -> Response:
        _answers_campaign(slug)

        def store(campaign: Campaign, data: dict[str, Any]) -> dict[str, Any]:
            upload = data["file"]
            known = set(campaign.topics.values_list("topic_id", flat=True))
            read = nugget_files.read_nuggets(upload.read(), name=upload.name, known_topics=known)
            saved = answer_services.nuggets_import(
                campaign=campaign, read=read, created_by=request.user
            )
            return {
                "detail": f"Nuggets of {len(saved)} topic(s) from {upload.name}.",
                "versions": {s.topic.topic_id: s.version for s in saved},
            }

        return file_upload(request, slug, NuggetsImportForm, store)


# --------------------------------------------------------------------------
# Assessors: their answer assignments, the next answer, its labels


class AnswerAssignmentSerializer(serializers.ModelSerializer):
    campaign = serializers.CharField(source="topic.campaign.slug", read_only=True)
    topic_id = serializers.CharField(source="topic.topic_id", read_only=True)
    title = serializers.CharField(source="topic.title", read_only=True)

    class Meta:
        model = AnswerAssignment
        fields = ["id", "campaign", "topic_id", "title", "task"]


class NextAnswerSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    total = serializers.IntegerField()
    judged = serializers.IntegerField()
    answer = serializers.IntegerField(help_text="The answer's id (its run is never given).")
    sentences = serializers.ListField(
        child=serializers.DictField(),
        help_text='[{"text", "citations": [{"reference", "segment"}]}]',
    )
    nugget_list = serializers.IntegerField(
        allow_null=True, help_text="nuggets: the version's id, to send back with the labels"
    )
    nuggets = serializers.ListField(
        child=serializers.DictField(), help_text='[{"position", "text", "importance"}]'
    )
    prefill = serializers.DictField(
        allow_null=True,
        help_text='Only when the organiser turned the pre-fill on: {"machine": account, '
        '"labels": [...]}, a machine\'s labels to check; null otherwise',
    )


class AnswerLabelsSerializer(serializers.Serializer):
    labels = serializers.JSONField(
        help_text="nuggets: one of support, partial_support, not_support per nugget, in "
        "order; citations: per sentence, one of full, partial, no per citation"
    )
    nugget_list = serializers.IntegerField(
        required=False, help_text="nuggets: the id of the version the labels are for"
    )
    seconds = serializers.FloatField(required=False, min_value=0, default=0)
    prefilled_from = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="the `prefill.machine` the labels started from (recorded; ignored when "
        "the pre-fill is off)",
    )


class AnswerJudgmentSerializer(serializers.ModelSerializer):
    class Meta:
        model = AnswerJudgment
        fields = ["answer", "task", "nugget_list", "labels", "seconds", "updated_at"]


def _answer_assignment_for(request: Request, assignment_id: int) -> AnswerAssignment:
    return get_object_or_404(
        AnswerAssignment.objects.select_related("topic__campaign", "prefill__account"),
        pk=assignment_id,
        assessor=request.user,
    )


class AnswerAssignmentListView(APIView):
    """The requesting assessor's answer assignments."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=AnswerAssignmentSerializer(many=True))
    def get(self, request: Request) -> Response:
        assignments = request.user.answer_assignments.select_related("topic__campaign")
        return Response(AnswerAssignmentSerializer(assignments, many=True).data)


class NextAnswerView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={
            200: NextAnswerSerializer,
            204: OpenApiResponse(description="Every answer is judged or set aside."),
        }
    )
    def get(self, request: Request, answer_assignment_id: int) -> Response:
        """The first answer of the assignment not yet judged, with what to label."""
        assignment = _answer_assignment_for(request, answer_assignment_id)
        queue = answer_selectors.answer_queue(assignment)
        position = queue.next_unjudged()
        if position is None:
            return Response(status=204)
        answer = Answer.objects.get(pk=queue.at(position))
        nugget_list = (
            answer_services.current_nuggets(assignment.topic)
            if assignment.task == AnswerAssignment.NUGGETS
            else None
        )
        nuggets = nugget_list.nuggets.order_by("position") if nugget_list else []
        prefill = (
            answer_machine_services.prefill_labels(assignment, answer, nugget_list)
            if assignment.task == AnswerAssignment.NUGGETS
            and not AnswerJudgment.objects.filter(
                assessor=assignment.assessor, answer=answer, task=assignment.task
            ).exists()
            else None
        )
        return Response(
            {
                "position": position,
                "total": queue.total,
                "judged": len(queue.judged & set(queue.ids)),
                "answer": answer.pk,
                "sentences": [
                    {
                        "text": sentence.text,
                        "citations": [
                            {"reference": c.reference, "segment": c.segment}
                            for c in sentence.citations.all()
                        ],
                    }
                    for sentence in answer.sentences.prefetch_related("citations")
                ],
                "nugget_list": getattr(nugget_list, "pk", None),
                "nuggets": [
                    {"position": n.position, "text": n.text, "importance": n.importance}
                    for n in nuggets
                ],
                "prefill": None
                if prefill is None
                else {"machine": assignment.prefill.account.username, "labels": prefill},
            }
        )


class AnswerLabelsView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=AnswerLabelsSerializer,
        responses={
            200: AnswerJudgmentSerializer,
            400: OpenApiResponse(description="Labels rejected; nothing saved."),
        },
    )
    def put(self, request: Request, answer_assignment_id: int, answer_id: int) -> Response:
        """Set the labels of one answer of the assignment. Repeating it changes nothing."""
        assignment = _answer_assignment_for(request, answer_assignment_id)
        answer = get_object_or_404(Answer, pk=answer_id, topic=assignment.topic)
        payload = AnswerLabelsSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        nugget_list = None
        if assignment.task == AnswerAssignment.NUGGETS:
            nugget_list = NuggetList.objects.filter(
                pk=data.get("nugget_list") or 0, topic=assignment.topic
            ).first()
            if nugget_list is None:
                return Response(
                    {"detail": "nugget_list: the id of one of the topic's nugget versions"},
                    status=400,
                )
        try:
            judgment = answer_services.answer_judgment_record(
                assignment=assignment,
                answer=answer,
                labels=data["labels"],
                seconds=data["seconds"],
                nugget_list=nugget_list,
                prefilled_from=answer_machine_services.prefilled_from(
                    data["prefilled_from"], assignment
                ),
            )
        except answer_services.AnswerLabelError as error:
            return Response({"detail": str(error)}, status=400)
        return Response(AnswerJudgmentSerializer(judgment).data)


class AnswerAgreementView(APIView):
    """GET the agreement on a campaign's answer labels (`?task=nuggets|citations`),
    pooled and per topic. The campaign's machine accounts take part as assessors
    (listed in `machines`, with the human-versus-machine confusion: support,
    partial, not) when they have labels of the task; `?machines=0` leaves them
    out, `?machines=1` asks for them, as on the relevance agreement."""

    permission_classes = ORGANISERS

    @extend_schema(responses=OpenApiResponse(description="pairs, groups, machines, confusion"))
    def get(self, request: Request, slug: str) -> Response:
        from judging.core.agreement import records

        campaign = _answers_campaign(slug)
        task = "citations" if request.query_params.get("task") == "citations" else "nuggets"
        machines = machines_option(request.query_params.get("machines"))
        report = answer_selectors.answer_agreement(campaign, task, machines=machines)
        return Response(
            {
                "task": task,
                "n_labels": len(report.labels),
                "machines": sorted(report.machines),
                "pairs": records(report.pairs),
                "groups": records(report.groups),
                "confusion": report.confusion,
            }
        )
