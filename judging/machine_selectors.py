"""Reads of machine assessors' labels and spend, for pages, the API, exports and
(item 6 of issue 25) agreement and qrels variants."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pandas as pd
from django.db.models import Count, Exists, OuterRef, Q, Sum

from judging.models import MachineAssessor, MachineJudgment, MachineSample
from pooling.models import Campaign, Pool, PoolEntry, Topic
from workbench.core.label_schema import NOT_ASKED


def machines_of(campaign: Campaign) -> list[MachineAssessor]:
    return list(MachineAssessor.objects.filter(campaign=campaign).select_related("account"))


def machine_display_names(campaign: Campaign) -> dict[str, str]:
    """Each machine account's username -> how pages name the machine among assessors:
    "qwen (machine)", and "baseline (machine, lexical baseline)" for the baseline."""
    return {
        username: f"{name} (machine, lexical baseline)"
        if kind == MachineAssessor.LEXICAL
        else f"{name} (machine)"
        for username, name, kind in MachineAssessor.objects.filter(campaign=campaign).values_list(
            "account__username", "name", "kind"
        )
    }


def machine_labels_frame(pool: Pool, machine: MachineAssessor | None = None) -> pd.DataFrame:
    """The machines' labels of the pool's entries, with the SAME columns as
    `judging.selectors.judgments_frame` so the two concatenate: assessor (the
    machine account's username), query_id, doc_id, relevance, is_primary (False),
    one column per aspect of the schema (NOT_ASKED, -1, when not asked)."""
    aspect_ids = pool.campaign.schema.aspect_ids
    in_pool = PoolEntry.objects.filter(pool=pool, topic=OuterRef("topic"), docno=OuterRef("docno"))
    rows = MachineJudgment.objects.filter(Exists(in_pool), machine__campaign=pool.campaign_id)
    if machine is not None:
        rows = rows.filter(machine=machine)
    values = list(
        rows.values_list(
            "machine__account__username", "topic__topic_id", "docno", "labels"
        ).order_by("topic__position", "docno", "machine__account__username")
    )
    relevance_id = pool.campaign.schema.relevance.id
    frame = pd.DataFrame(
        [(a, q, d, int(labels[relevance_id]), False) for a, q, d, labels in values],
        columns=["assessor", "query_id", "doc_id", "relevance", "is_primary"],
    )
    frame = frame.astype({"relevance": "int64", "is_primary": "bool"})
    for aspect in aspect_ids:
        frame[aspect] = pd.array(
            [int(labels.get(aspect, NOT_ASKED)) for *_, labels in values], dtype="int64"
        )
    return frame


@dataclass(frozen=True)
class MachineSpend:
    """What machines cost: requests sent, samples copied from the cache, tokens, and
    the cost (None when no machine of those that sent requests has a price)."""

    requests: int
    cached: int
    failed: int
    tokens_in: int
    tokens_out: int
    cost: Decimal | None
    labels: int


def machine_spend(campaign: Campaign, *, pool: Pool | None = None) -> MachineSpend:
    """The campaign's machine spend (its pool's documents only, with `pool`)."""
    samples = MachineSample.objects.filter(machine__campaign=campaign)
    labels = MachineJudgment.objects.filter(machine__campaign=campaign)
    if pool is not None:
        in_pool = PoolEntry.objects.filter(
            pool=pool, topic=OuterRef("topic"), docno=OuterRef("docno")
        )
        samples, labels = samples.filter(Exists(in_pool)), labels.filter(Exists(in_pool))
    cost: Decimal | None = None
    per_machine = samples.values("machine__price_per_1k_tokens").annotate(
        tokens=Sum("tokens_in") + Sum("tokens_out")
    )
    for row in per_machine:
        price = row["machine__price_per_1k_tokens"]
        if price is not None and row["tokens"]:
            cost = (cost or Decimal(0)) + price * row["tokens"] / 1000
    totals = samples.aggregate(
        requests=Sum("requests"),
        cached=Count("pk", filter=Q(cached=True)),
        failed=Count("pk", filter=Q(ok=False)),
        tokens_in=Sum("tokens_in"),
        tokens_out=Sum("tokens_out"),
    )
    return MachineSpend(
        requests=totals["requests"] or 0,
        cached=totals["cached"] or 0,
        failed=totals["failed"] or 0,
        tokens_in=totals["tokens_in"] or 0,
        tokens_out=totals["tokens_out"] or 0,
        cost=cost,
        labels=labels.count(),
    )


def judgments_export_tsv(pool: Pool, *, assessor: str | None = None) -> tuple[str, int]:
    """The pool's stored judgments, human and machine (machine rows under the machine
    account's username), as the TSV `import_judgments` reads; and how many rows.
    With `assessor`, that account's only (a username, or a machine's name)."""
    from judging.core.judgment_files import write_judgments_tsv
    from judging.selectors import judgments_frame

    aspect_ids = pool.campaign.schema.aspect_ids
    frame = pd.concat([judgments_frame(pool), machine_labels_frame(pool)], ignore_index=True)
    if assessor is not None:
        machine = MachineAssessor.objects.filter(campaign=pool.campaign, name=assessor).first()
        names = {assessor} | ({machine.account.username} if machine else set())
        frame = frame[frame["assessor"].isin(names)]
    columns = ["assessor", "query_id", "doc_id", "relevance", *aspect_ids]
    rows = (
        (a, q, d, r, rest)
        for a, q, d, r, *rest in frame[columns].itertuples(index=False, name=None)
    )
    return write_judgments_tsv(rows, aspect_ids), len(frame)


# --------------------------------------------------------------------------
# Machines helping the humans: the queue order and post-edit (issue 25 item 6)


def machine_settled_docnos(topic: Topic) -> set[str]:
    """The topic's docnos the campaign's machines settled (labelled, their samples
    agreeing: `judging.core.machine_queue`); a `machine_first` queue puts the others
    first."""
    from judging.core.machine_queue import settled_documents

    campaign_id = topic.campaign_id
    labelled = MachineJudgment.objects.filter(
        machine__campaign=campaign_id, topic=topic
    ).values_list("docno", flat=True)
    relevance_id = topic.campaign.schema.relevance.id
    samples = MachineSample.objects.filter(
        machine__campaign=campaign_id, topic=topic, ok=True
    ).values_list("machine_id", "docno", "sample", "id", "labels")
    return settled_documents(
        labelled,
        (
            (machine, docno, index, row, int(labels[relevance_id]))
            for machine, docno, index, row, labels in samples
            if labels and relevance_id in labels
        ),
    )


@dataclass(frozen=True)
class ShownMachineLabel:
    """One machine's label of a document as the post-edit judging page shows it."""

    machine: str
    description: str  # "lexical baseline", or "<name>, model <model>"
    labels: dict[str, int]
    text: str  # "relevant", then each asked aspect: "Effectiveness: high"


def post_edit_labels(topic: Topic, docno: str) -> list[ShownMachineLabel]:
    """The campaign's machines' labels of one document, by machine name, for the
    post-edit judging page (and recorded with the judgment made there)."""
    schema = topic.campaign.schema
    rows = (
        MachineJudgment.objects.filter(
            machine__campaign=topic.campaign_id, topic=topic, docno=docno
        )
        .select_related("machine")
        .order_by("machine__name")
    )
    shown = []
    for row in rows:
        machine = row.machine
        relevance = int(row.labels[schema.relevance.id])
        parts = [schema.relevance.value_name(relevance)]
        for question in schema.aspects_asked(relevance):
            value = row.labels.get(question.id, NOT_ASKED)
            if value is not None and int(value) >= 0:
                parts.append(f"{question.name}: {question.value_name(int(value))}")
        shown.append(
            ShownMachineLabel(
                machine=machine.name,
                description="lexical baseline"
                if machine.is_baseline
                else f"{machine.name}, model {machine.model}",
                labels=dict(row.labels),
                text="; ".join(parts),
            )
        )
    return shown
