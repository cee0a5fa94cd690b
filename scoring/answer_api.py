"""API of a generated-answers campaign's scores: the JSON of `manage.py nugget_scores
--format json` (the same core), with each run's answers not judged yet; and the
citation support scores."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from pooling.models import Campaign
from scoring import answer_selectors
from scoring.core.tasks import nuggets
from workbench.roles import IsOrganiser


def _answers_campaign(slug: str) -> Campaign:
    campaign = get_object_or_404(Campaign, slug=slug)
    if not campaign.is_answers:
        raise Http404(f"{campaign.name} is not a generated-answers campaign")
    return campaign


def _measure_fields() -> dict[str, serializers.Field]:
    return {m: serializers.FloatField() for m in nuggets.MEASURES}


NuggetRunSerializer = type(
    "NuggetRunSerializer",
    (serializers.Serializer,),
    {"run": serializers.CharField(), "n_topics": serializers.IntegerField(), **_measure_fields()},
)
NuggetTopicSerializer = type(
    "NuggetTopicSerializer",
    (serializers.Serializer,),
    {"run": serializers.CharField(), "topic": serializers.CharField(), **_measure_fields()},
)


class NuggetScoresSerializer(serializers.Serializer):
    runs = NuggetRunSerializer(many=True)
    per_topic = NuggetTopicSerializer(many=True)
    unjudged = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Per run, its answers no assessor has judged yet (not in its mean).",
    )


class NuggetScoresView(APIView):
    """Every judged answer's nugget scores and each run's means, exactly as
    nuggetizer computes them (the numbers of `manage.py nugget_scores`)."""

    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(responses=NuggetScoresSerializer)
    def get(self, request: Request, slug: str) -> Response:
        return Response(answer_selectors.nugget_scores_json(_answers_campaign(slug)))


class CitationRunSerializer(serializers.Serializer):
    run = serializers.CharField()
    n_answers = serializers.IntegerField()
    precision = serializers.FloatField()
    strict_precision = serializers.FloatField()
    recall = serializers.FloatField()
    strict_recall = serializers.FloatField()


class CitationScoresSerializer(serializers.Serializer):
    runs = CitationRunSerializer(many=True)
    per_answer = serializers.ListField(child=serializers.DictField())
    unjudged = serializers.DictField(child=serializers.IntegerField())


class CitationScoresView(APIView):
    """Citation support precision and recall per judged answer and per run."""

    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(responses=CitationScoresSerializer)
    def get(self, request: Request, slug: str) -> Response:
        return Response(answer_selectors.citation_scores_json(_answers_campaign(slug)))
