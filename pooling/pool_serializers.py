"""The pool API's serializers: a pool, its entries, a what-if, a re-plan and a
budget in JSON, and the input each pool endpoint reads (the views: `pooling.pool_api`)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from pooling import selectors
from pooling.core.spec import LIVE_STRATEGIES, ORDER_MODES, PRESETS, PoolSpec, spec_label
from pooling.forms import DEFAULT_POOL_PRESET
from pooling.models import Pool, PoolAddition, PoolEntry, PoolRevision
from pooling.serializers import BudgetSerializer


class PoolSerializer(serializers.ModelSerializer):
    campaign = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    label = serializers.SerializerMethodField(help_text="The strata, the depth stratum first.")
    runs = serializers.SlugRelatedField(slug_field="tag", many=True, read_only=True)
    entries = serializers.IntegerField(source="n_entries", read_only=True)
    to_judge = serializers.IntegerField(
        source="n_sampled", read_only=True, help_text="Entries drawn for judging."
    )
    created_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = Pool
        fields = [
            "id",
            "campaign",
            "name",
            "label",
            "spec",
            "runs",
            "entries",
            "to_judge",
            "created_by",
            "created_at",
            "retired_at",
        ]

    def get_label(self, pool: Pool) -> str:
        return spec_label(PoolSpec.from_dict(pool.spec))


class StratumSerializer(serializers.Serializer):
    number = serializers.IntegerField(help_text="1-based, the depth stratum first")
    ranks = serializers.CharField(help_text='"1-20"; empty where the spec does not say')
    entries = serializers.IntegerField()
    drawn = serializers.IntegerField()
    probability = serializers.FloatField()


class TopicStatsSerializer(serializers.Serializer):
    topic_id = serializers.CharField()
    title = serializers.CharField()
    entries = serializers.IntegerField()
    to_judge = serializers.IntegerField()
    judged = serializers.IntegerField()
    strata = StratumSerializer(many=True)


class RevisionSerializer(serializers.ModelSerializer):
    label = serializers.SerializerMethodField()
    topics = serializers.ListField(child=serializers.CharField())
    summary = serializers.ListField(child=serializers.DictField())
    created_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = PoolRevision
        fields = [
            "number",
            "label",
            "spec",
            "topics",
            "reason",
            "summary",
            "created_by",
            "created_at",
        ]

    def get_label(self, revision: Any) -> str:
        return spec_label(PoolSpec.from_dict(revision.spec))


class AdditionSerializer(serializers.ModelSerializer):
    runs = serializers.SlugRelatedField(slug_field="tag", many=True, read_only=True)
    entries = serializers.IntegerField(source="n_entries")
    created_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = PoolAddition
        fields = ["id", "runs", "entries", "created_by", "created_at"]


class PoolDetailSerializer(PoolSerializer):
    retired_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    topics = serializers.SerializerMethodField()
    revisions = serializers.SerializerMethodField()
    additions = serializers.SerializerMethodField()
    late_runs = serializers.SerializerMethodField(
        help_text="Runs of the campaign not in the pool that can be added to it "
        "(a depth-k pool built from runs only)."
    )
    without_text = serializers.SerializerMethodField(
        help_text="The docnos to judge whose text is not loaded (assessors would see only "
        "the docno): load them before assigning."
    )

    class Meta(PoolSerializer.Meta):
        fields = [
            *PoolSerializer.Meta.fields,
            "retired_by",
            "topics",
            "revisions",
            "additions",
            "late_runs",
            "without_text",
        ]

    @extend_schema_field(TopicStatsSerializer(many=True))
    def get_topics(self, pool: Pool) -> Any:
        return TopicStatsSerializer(selectors.pool_topic_stats(pool), many=True).data

    @extend_schema_field(RevisionSerializer(many=True))
    def get_revisions(self, pool: Pool) -> Any:
        revisions = pool.revisions.select_related("created_by")
        return RevisionSerializer(revisions, many=True).data

    @extend_schema_field(AdditionSerializer(many=True))
    def get_additions(self, pool: Pool) -> Any:
        additions = pool.additions.prefetch_related("runs").annotate(n_entries=Count("entries"))
        return AdditionSerializer(additions, many=True).data

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_without_text(self, pool: Pool) -> list[str]:
        return selectors.docnos_without_text(pool)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_late_runs(self, pool: Pool) -> list[str]:
        if not PoolSpec.from_dict(pool.spec).accepts_late_runs:
            return []
        late = pool.campaign.runs.exclude(pk__in=pool.runs.values("pk"))
        return list(late.values_list("tag", flat=True))


class PoolEntrySerializer(serializers.ModelSerializer):
    topic = serializers.CharField(source="topic.topic_id", read_only=True)

    class Meta:
        model = PoolEntry
        fields = [
            "topic",
            "docno",
            "best_rank",
            "n_runs",
            "stratum",
            "inclusion_probability",
            "sampled",
            "order",
            "retired",
            "revision",
            "addition",
        ]


class PoolSpecInputSerializer(serializers.Serializer):
    """A strategy as the pool form takes it; without depth and strata, a preset's."""

    preset = serializers.ChoiceField(
        choices=list(PRESETS),
        required=False,
        help_text=f"Start from a preset (default {DEFAULT_POOL_PRESET}) when neither "
        "depth nor strata is given.",
    )
    depth = serializers.CharField(required=False, allow_blank=True, help_text="e.g. 20")
    strata = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text='Strata separated by spaces, "lo-hi:rate", e.g. "1-20:1 21-100:0.1".',
    )
    seed = serializers.CharField(required=False, allow_blank=True, help_text="default 0")
    order = serializers.ChoiceField(choices=list(ORDER_MODES), required=False)
    allow_gaps = serializers.BooleanField(required=False)
    strategy = serializers.ChoiceField(
        choices=list(LIVE_STRATEGIES),
        required=False,
        help_text="A live adaptive pool: each topic's next document is chosen from the "
        "judgments so far, among those ranked <= depth (docs/adaptive_pooling.md).",
    )
    budget = serializers.IntegerField(
        required=False, help_text="An adaptive pool's judgments, shared over its topics."
    )
    runs_per_team = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="Pool each team's first N runs by its precedence (and the organiser's "
        "own runs); default: every run.",
    )


class PoolBuildSerializer(PoolSpecInputSerializer):
    name = serializers.CharField(
        required=False, allow_blank=True, max_length=200, help_text="default: the strata"
    )
    confirm_over_budget = serializers.BooleanField(
        required=False, help_text="Build it even if it costs more than the budget has left."
    )


class WhatIfRowSerializer(serializers.Serializer):
    scheme = serializers.CharField(help_text='"depth 10", or the strata of the spec')
    depth = serializers.IntegerField(allow_null=True, help_text="null for the spec")
    candidates = serializers.IntegerField(help_text="documents in the pool, sampled or not")
    pool_size = serializers.IntegerField(help_text="documents drawn for judging")
    judged = serializers.IntegerField(help_text="of those, already judged")
    needed = serializers.IntegerField(help_text="new judgments: pool_size - judged")


class DepthFitSerializer(serializers.Serializer):
    depth = serializers.IntegerField()
    pool_size = serializers.IntegerField()
    needed = serializers.IntegerField()


class ScaleFitSerializer(serializers.Serializer):
    factor = serializers.FloatField()
    label = serializers.CharField()
    spec = serializers.JSONField()
    pool_size = serializers.IntegerField()
    needed = serializers.IntegerField()


class WhatIfSerializer(serializers.Serializer):
    label = serializers.CharField()
    spec = serializers.JSONField()
    rows = WhatIfRowSerializer(many=True, help_text="Each depth of the pool page's chart.")
    chosen = WhatIfRowSerializer()
    budget = BudgetSerializer()
    left = serializers.IntegerField(
        allow_null=True, help_text="What the budget has left; null without a budget."
    )
    over_by = serializers.IntegerField()
    left_after = serializers.IntegerField(allow_null=True)
    deepest_rank = serializers.IntegerField()
    fit_depth = DepthFitSerializer(
        allow_null=True, help_text="The deepest depth-k pool within the budget."
    )
    fit_scale = ScaleFitSerializer(
        allow_null=True, help_text="The spec's strata rates scaled to fit the budget."
    )


class AddRunsSerializer(serializers.Serializer):
    runs = serializers.ListField(child=serializers.CharField(), min_length=1, help_text="tags")
    confirm_over_budget = serializers.BooleanField(default=False)


class AdditionResultSerializer(serializers.Serializer):
    detail = serializers.CharField()
    addition = serializers.IntegerField()
    runs = serializers.ListField(child=serializers.CharField())
    entries = serializers.IntegerField()


class ReplanSerializer(serializers.Serializer):
    """The topics to re-plan and their new plan; seed and order stay the pool's.
    Without depth and strata, the pool's own plan."""

    which = serializers.ChoiceField(choices=["unfinished", "chosen", "all"], default="unfinished")
    topics = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="with which=chosen"
    )
    depth = serializers.CharField(required=False, allow_blank=True)
    strata = serializers.CharField(required=False, allow_blank=True)
    allow_gaps = serializers.BooleanField(required=False)
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000)


class ReplanApplySerializer(ReplanSerializer):
    confirm_over_budget = serializers.BooleanField(default=False)


class RevisionSummarySerializer(serializers.Serializer):
    query_id = serializers.CharField()
    to_judge_before = serializers.IntegerField()
    to_judge_after = serializers.IntegerField()
    leaving = serializers.IntegerField()
    joining = serializers.IntegerField()
    judged_kept = serializers.IntegerField()
    judged_out_of_sample = serializers.IntegerField()
    new_judgments = serializers.IntegerField()


class RedrawSerializer(serializers.Serializer):
    stratum = serializers.CharField(help_text="A sampled stratum of the new plan: lo-hi:rate.")
    was = serializers.ListField(
        child=serializers.CharField(),
        help_text="The strata the plan now samples at those ranks, with other bounds.",
    )


class SampleKeepingSerializer(serializers.Serializer):
    label = serializers.CharField()
    spec = serializers.JSONField()
    cost = serializers.IntegerField(help_text="New judgments this plan asks for.")
    work_change = serializers.IntegerField(help_text="Change in the judgments left to make.")
    judged_out_of_sample = serializers.IntegerField()


class ReplanPreviewSerializer(serializers.Serializer):
    label = serializers.CharField()
    spec = serializers.JSONField()
    topics = serializers.ListField(child=serializers.CharField())
    cost = serializers.IntegerField(help_text="New judgments the re-plan asks for.")
    work_change = serializers.IntegerField(help_text="Change in the judgments left to make.")
    joining = serializers.IntegerField(help_text="Documents joining the queues.")
    judged_out_of_sample = serializers.IntegerField(
        help_text="Judged documents the new plan does not draw (they stay in the qrels)."
    )
    redraws = RedrawSerializer(
        many=True,
        help_text="Sampled strata the plan draws again, other bounds than now: a new draw, "
        "not a part of the old one (documents join, judged ones leave the sample).",
    )
    sample_keeping = SampleKeepingSerializer(
        allow_null=True,
        help_text="With redraws: the plan now at lower rates, drawing about as many "
        "documents and keeping the sample, when it asks for fewer new judgments; else null.",
    )
    budget = BudgetSerializer()
    over_by = serializers.IntegerField()
    summary = RevisionSummarySerializer(many=True)


class PoolBudgetSerializer(serializers.Serializer):
    budget = serializers.IntegerField(help_text="The adaptive pool's new budget (judgments).")
    confirm_over_budget = serializers.BooleanField(required=False, default=False)
