"""The base app's API serializers: campaigns, their budget, topics, documents, runs
and the problems of a rejected file (the views: `pooling.api`, `pooling.run_api`)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    extend_schema_field,
)
from rest_framework import serializers

from pooling import selectors
from pooling.models import Campaign, Document, Run, TaskKind, Topic
from workbench.core.label_schema import DEFAULT_PRESET, SCHEMA_PRESETS


class CampaignSerializer(serializers.ModelSerializer):
    class Meta:
        model = Campaign
        fields = [
            "slug",
            "name",
            "task_kind",
            "description",
            "judgment_budget",
            "label_schema",
            "created_at",
        ]


class RunSerializer(serializers.ModelSerializer):
    uploaded_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = Run
        fields = [
            "id",
            "tag",
            "original_name",
            "sha256",
            "line_count",
            "topic_count",
            "depth",
            "documents_per_topic",
            "uploaded_by",
            "uploaded_at",
        ]


class ProblemSerializer(serializers.Serializer):
    file = serializers.CharField()
    line = serializers.IntegerField(help_text="1-based; 0 for the whole file.")
    reason = serializers.CharField()


class RejectedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = ProblemSerializer(many=True, help_text="The first 50 problems of each file.")
    total = serializers.IntegerField(help_text="All problems, listed or not.")


class PartlyStoredSerializer(serializers.Serializer):
    detail = serializers.CharField()
    stored = RunSerializer(many=True, help_text="The runs stored.")
    errors = ProblemSerializer(many=True, help_text="The rejected files' first 50 problems each.")
    total = serializers.IntegerField(help_text="All problems of the rejected files.")


class BudgetSerializer(serializers.Serializer):
    budget = serializers.IntegerField(allow_null=True, help_text="null: no budget set")
    judgments = serializers.IntegerField()
    adjudications = serializers.IntegerField()
    spent = serializers.IntegerField()
    remaining = serializers.IntegerField(
        allow_null=True, help_text="negative once overspent; null without a budget"
    )


class CampaignDetailSerializer(CampaignSerializer):
    budget = serializers.SerializerMethodField()
    topics = serializers.IntegerField(source="n_topics", read_only=True)
    documents = serializers.IntegerField(source="n_documents", read_only=True)
    runs = serializers.IntegerField(source="n_runs", read_only=True)
    pools = serializers.IntegerField(source="n_pools", read_only=True)
    schema_lock = serializers.SerializerMethodField(
        help_text="Why the label schema can no longer change; empty while it can."
    )
    task_kind_lock = serializers.SerializerMethodField(
        help_text="Why the task kind can no longer change; empty while it can."
    )

    class Meta(CampaignSerializer.Meta):
        fields = [
            *CampaignSerializer.Meta.fields,
            "guidelines",
            "budget_counts_adjudications",
            "budget",
            "topics",
            "documents",
            "runs",
            "pools",
            "schema_lock",
            "task_kind_lock",
        ]

    @extend_schema_field(BudgetSerializer)
    def get_budget(self, campaign: Campaign) -> dict[str, Any]:
        state = selectors.campaign_budget(campaign)
        return {
            "budget": state.budget,
            "judgments": state.judgments,
            "adjudications": state.adjudications,
            "spent": state.spent,
            "remaining": state.remaining,
        }

    def get_schema_lock(self, campaign: Campaign) -> str:
        return selectors.campaign_schema_lock(campaign)

    def get_task_kind_lock(self, campaign: Campaign) -> str:
        return selectors.campaign_task_kind_lock(campaign)


class CampaignInputSerializer(serializers.Serializer):
    """A campaign's fields as the campaign form takes them; the form checks them again."""

    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=100, help_text="Names its URLs and files; it stays.")
    task_kind = serializers.ChoiceField(choices=TaskKind.choices, default=TaskKind.RANKED)
    description = serializers.CharField(allow_blank=True, default="")
    guidelines = serializers.CharField(
        allow_blank=True, default="", help_text="Shown to assessors beside every topic."
    )
    judgment_budget = serializers.IntegerField(
        allow_null=True, default=None, min_value=0, max_value=2**31 - 1
    )
    budget_counts_adjudications = serializers.BooleanField(default=True)
    label_schema = serializers.JSONField(
        default=DEFAULT_PRESET,
        help_text=f"A preset ({', '.join(SCHEMA_PRESETS)}) or a schema object, "
        "checked as the page checks a custom schema.",
    )


class CampaignUpdateSerializer(CampaignInputSerializer):
    """Any of the fields; those left out keep their value. The slug cannot change."""

    slug = None  # type: ignore[assignment]

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, partial=True, **kwargs)


class CampaignTopicSerializer(serializers.ModelSerializer):
    class Meta:
        model = Topic
        fields = ["topic_id", "title", "description", "narrative", "extra", "position"]


class DocumentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Document
        fields = ["docno", "title", "url"]


class DocumentDetailSerializer(serializers.ModelSerializer):
    class Meta:
        model = Document
        fields = ["docno", "title", "url", "text"]


class ImportedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    created = serializers.IntegerField()
    updated = serializers.IntegerField()


class AnswersSetSerializer(serializers.Serializer):
    detail = serializers.CharField()
    set = serializers.IntegerField()
    changed = serializers.IntegerField()
