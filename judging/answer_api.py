"""API of a generated-answers campaign: its answer runs (list, upload) and its
topics' nuggets (nuggetizer's records; import), with the pages' checks and errors."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging import answer_selectors, answer_services
from judging.core import nugget_files
from judging.forms import GeneratedAnswersUploadForm, NuggetsImportForm
from pooling import answer_services as answer_run_services
from pooling.api import ORGANISERS, _file_upload, _upload_request, _upload_responses
from pooling.models import AnswerRun, Campaign


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
        request=_upload_request("AnswerRunsUpload"),
        responses=_upload_responses(AnswerRunsStoredSerializer),
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

        return _file_upload(request, slug, GeneratedAnswersUploadForm, store)


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
        request=_upload_request("NuggetsUpload"),
        responses=_upload_responses(NuggetRecordSerializer(many=True)),
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

        return _file_upload(request, slug, NuggetsImportForm, store)
