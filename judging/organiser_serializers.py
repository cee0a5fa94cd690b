"""The organiser API's serializers: assignments, overlap plans, judgments from a file,
agreement, adjudication and the label policy, in JSON and as input (the views:
`judging.organiser_api`)."""

from __future__ import annotations

from rest_framework import serializers

from judging.models import Assignment, PoolPolicy


class BudgetStateSerializer(serializers.Serializer):
    budget = serializers.IntegerField(allow_null=True)
    judgments = serializers.IntegerField()
    adjudications = serializers.IntegerField()
    spent = serializers.IntegerField()
    remaining = serializers.IntegerField(allow_null=True)


class PoolAssignmentSerializer(serializers.ModelSerializer):
    pool = serializers.IntegerField(source="pool_id", read_only=True)
    topic = serializers.CharField(source="topic.topic_id", read_only=True)
    assessor = serializers.CharField(source="assessor.username", read_only=True)
    judged = serializers.IntegerField(
        read_only=True,
        help_text="documents judged so far, those a re-plan took out of the queue too",
    )
    total = serializers.IntegerField(
        read_only=True,
        help_text="documents in the queue, and those judged that a re-plan took out of it",
    )

    class Meta:
        model = Assignment
        fields = ["id", "pool", "topic", "assessor", "kind", "judged", "total", "created_at"]


class AssignInputSerializer(serializers.Serializer):
    topics = serializers.ListField(
        child=serializers.CharField(), min_length=1, help_text="topic ids, dealt in topic order"
    )
    assessors = serializers.ListField(
        child=serializers.CharField(),
        min_length=1,
        help_text="usernames; several take the topics in turn",
    )


class OverlapInputSerializer(serializers.Serializer):
    k = serializers.IntegerField(
        min_value=2, max_value=100, help_text="assessors per overlap document, the primary too"
    )
    fraction = serializers.FloatField(
        required=False, help_text="share of each topic's documents; default 1 (whole topics)"
    )
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**32 - 1)
    topics = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="default: every topic"
    )
    assessors = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="usernames of the campaign's assessors who may take extra judgments; "
        "default: the pool's assessors (those holding its assignments)",
    )


class OverlapAssignSerializer(OverlapInputSerializer):
    confirm_over_budget = serializers.BooleanField(default=False)


class OverlapCostSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    per_assessor = serializers.DictField(child=serializers.IntegerField())
    per_topic = serializers.DictField(child=serializers.IntegerField())


class OverlapPlanSerializer(serializers.Serializer):
    spec = serializers.JSONField()
    items = serializers.IntegerField(help_text="documents judged K times")
    cost = OverlapCostSerializer(help_text="extra judgments")
    budget = BudgetStateSerializer()
    over_by = serializers.IntegerField()


class JudgmentImportSerializer(serializers.Serializer):
    file = serializers.FileField(
        allow_empty_file=True,
        help_text="TSV: assessor, topic, docno, rel, then the schema's aspects; "
        "a first line starting `assessor` is a header.",
    )
    create_assessors = serializers.BooleanField(
        default=False, help_text="Make accounts (without a password) for unknown assessors."
    )
    make_pool = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="Also make a pool of this name of the judged documents.",
    )


class JudgmentImportResultSerializer(serializers.Serializer):
    detail = serializers.CharField()
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    new_assessors = serializers.ListField(child=serializers.CharField())
    pool = serializers.IntegerField(allow_null=True, help_text="the pool made, if asked")


class GroupAgreementSerializer(serializers.Serializer):
    aspect = serializers.CharField()
    scope = serializers.CharField(help_text="campaign or topic")
    query_id = serializers.CharField(allow_null=True)
    statistic = serializers.CharField()
    value = serializers.FloatField(allow_null=True, help_text="null where undefined")
    n_items = serializers.IntegerField()
    n_assessors = serializers.IntegerField()
    undefined_reason = serializers.CharField(allow_null=True, allow_blank=True)
    note = serializers.CharField(allow_null=True, allow_blank=True)


class PairAgreementSerializer(serializers.Serializer):
    aspect = serializers.CharField()
    scope = serializers.CharField(help_text="campaign or topic")
    query_id = serializers.CharField(allow_null=True)
    assessor_a = serializers.CharField()
    assessor_b = serializers.CharField()
    is_machine_a = serializers.BooleanField(help_text="assessor_a is a machine assessor")
    is_machine_b = serializers.BooleanField(help_text="assessor_b is a machine assessor")
    statistic = serializers.CharField()
    value = serializers.FloatField(allow_null=True, help_text="null where undefined")
    n_items = serializers.IntegerField()
    undefined_reason = serializers.CharField(allow_null=True, allow_blank=True)
    note = serializers.CharField(allow_null=True, allow_blank=True)


class AssessorAgreementSerializer(serializers.Serializer):
    assessor = serializers.CharField()
    mean_value = serializers.FloatField(allow_null=True)
    n_pairs = serializers.IntegerField()
    n_items = serializers.IntegerField()
    median_of_others = serializers.FloatField(allow_null=True)
    flagged = serializers.BooleanField()
    flag_reason = serializers.CharField(allow_null=True, allow_blank=True)
    undefined_reason = serializers.CharField(allow_null=True, allow_blank=True)


class ConfusionSerializer(serializers.Serializer):
    a = serializers.CharField()
    b = serializers.CharField()
    topic = serializers.CharField(allow_null=True)
    values = serializers.ListField(child=serializers.JSONField(), help_text="b's labels")
    rows = serializers.ListField(
        child=serializers.ListField(child=serializers.JSONField()),
        help_text="[a's label, [counts by b's label]]",
    )


class RaterSerializer(serializers.Serializer):
    assessor = serializers.CharField(help_text="the username (a machine's account)")
    name = serializers.CharField(help_text='as pages show it: "qwen (machine)"')
    is_machine = serializers.BooleanField()


class HumanMachineSerializer(serializers.Serializer):
    machine = serializers.CharField(help_text="the machine account's username")
    name = serializers.CharField()
    aspect = serializers.CharField()
    values = serializers.ListField(child=serializers.IntegerField())
    counts = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="counts[i][j]: documents whose human final label is values[i] and "
        "machine label values[j]",
    )
    n = serializers.IntegerField(help_text="documents both labelled")


class AgreementSerializer(serializers.Serializer):
    machines = serializers.BooleanField(help_text="whether machine assessors take part")
    raters = RaterSerializer(many=True, help_text="every assessor in the statistics")
    aspects = serializers.ListField(child=serializers.CharField())
    aspect = serializers.CharField()
    statistic = serializers.CharField()
    labels = serializers.IntegerField(help_text="judgments on the pool's documents")
    campaign_groups = GroupAgreementSerializer(many=True)
    topic_groups = GroupAgreementSerializer(many=True, help_text="worst first")
    campaign_pairs = PairAgreementSerializer(many=True, help_text="worst first")
    topic_pairs = PairAgreementSerializer(many=True, help_text="worst first")
    assessors = AssessorAgreementSerializer(many=True, help_text="humans only: the flagging")
    human_machine = HumanMachineSerializer(
        many=True, help_text="per machine and aspect: humans' final labels by machine labels"
    )
    confusion = ConfusionSerializer(required=False, help_text="with ?a=&b=")


class DisagreementSerializer(serializers.Serializer):
    query_id = serializers.CharField()
    doc_id = serializers.CharField()
    n_judgments = serializers.IntegerField()
    assessors = serializers.ListField(child=serializers.CharField())
    relevance_values = serializers.ListField(
        child=serializers.IntegerField(), help_text="in the assessors' order"
    )
    spread = serializers.IntegerField(help_text="max - min relevance")
    crosses_line = serializers.BooleanField(help_text="relevant to some, not to others")
    disagrees_on = serializers.ListField(child=serializers.CharField())


class AdjudicationInputSerializer(serializers.Serializer):
    topic = serializers.CharField(help_text="topic id")
    docno = serializers.CharField()
    relevance = serializers.JSONField(help_text="A relevance grade of the campaign's schema.")
    aspects = serializers.DictField(child=serializers.JSONField(), required=False, default=dict)
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class AdjudicationSerializer(serializers.Serializer):
    topic = serializers.CharField(source="topic.topic_id")
    docno = serializers.CharField()
    relevance = serializers.IntegerField()
    aspects = serializers.DictField(child=serializers.IntegerField())
    reason = serializers.CharField(allow_blank=True)
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True)
    decided_at = serializers.DateTimeField()


class PolicySerializer(serializers.Serializer):
    steps = serializers.ListField(
        child=serializers.CharField(),
        help_text="In order, e.g. adjudicated, primary, majority, maximum.",
    )
    disagreement_mode = serializers.ChoiceField(choices=PoolPolicy.DISAGREEMENT_MODES)
    queue_order = serializers.ChoiceField(
        choices=PoolPolicy.QUEUE_ORDERS,
        required=False,
        help_text="machine_first: each queue starts with the documents no machine labelled or "
        "whose machine samples disagree (not for adaptive pools); kept when left out",
    )
    post_edit = serializers.BooleanField(
        required=False,
        help_text="the judging page shows the machines' labels; kept when left out",
    )
    overlap_spec = serializers.JSONField(read_only=True, allow_null=True)
