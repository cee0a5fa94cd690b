"""Reads of the judging app that views, services, commands and other apps share.

Each reads the ORM once into the frames the pure cores take (`overlap`,
`agreement`, `labels`), and computes from them; nothing here writes. The
writes are in `services`. The agreement report is cached until a judgment
changes, because the statistics cost about a millisecond per pair,
topic and aspect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db.models import Count, Exists, Max, Min, OuterRef, QuerySet

from judging.core import agreement, agreement_table, labels
from judging.models import (
    Adjudication,
    Assignment,
    Judgment,
    JudgmentEvent,
    PoolPolicy,
)
from pooling.models import Campaign, Pool, PoolEntry
from workbench.core.label_schema import NOT_ASKED
from workbench.roles import assessor_accounts, is_organiser

# --------------------------------------------------------------------------
# Who may be given work


def eligible_assessors(campaign: Campaign) -> QuerySet[User]:
    """The accounts that may be given judging work in the campaign, by name order: the
    one rule the assign and overlap forms offer, the API accepts and the services
    enforce (`assessor_refusals` says why an account is not one).

    Assessor accounts (`workbench.roles.assessor_accounts`: neither organisers nor
    participants) that are active and can log in (a usable password: not the accounts
    `import_qrels` makes for a file's judgments). An assessor of another campaign may
    be chosen by name (assessors often judge for several tracks); what "every
    assessor" means without a choice is `pool_assessors`, the pool's own.
    """
    return (
        assessor_accounts()
        .filter(is_active=True, machine__isnull=True)
        .exclude(password__startswith=UNUSABLE_PASSWORD_PREFIX)
        .exclude(password="")
        .order_by("username")
    )


def pool_assessors(pool: Pool) -> QuerySet[User]:
    """Whom "every assessor" means for the pool's overlap: the eligible accounts that
    hold one of its assignments."""
    holding = Assignment.objects.filter(pool=pool, assessor=OuterRef("pk"))
    return eligible_assessors(pool.campaign).filter(Exists(holding))


def assessor_refusals(campaign: Campaign, accounts: Sequence[User]) -> dict[str, str]:
    """Username -> why the campaign's work cannot go to that account, for the accounts
    `eligible_assessors` leaves out (none for those it has)."""
    eligible = set(eligible_assessors(campaign).filter(pk__in=[a.pk for a in accounts]))
    refused = [account for account in accounts if account not in eligible]
    if not refused:
        return {}
    in_teams = set(
        User.objects.filter(pk__in=[a.pk for a in refused], teams__isnull=False).values_list(
            "pk", flat=True
        )
    )
    machines = set(
        User.objects.filter(pk__in=[a.pk for a in refused], machine__isnull=False).values_list(
            "pk", flat=True
        )
    )
    reasons = {}
    for account in refused:
        if account.pk in machines:
            reason = "a machine assessor is never given an assignment"
        elif is_organiser(account) or account.is_staff or account.is_superuser:
            reason = "an organiser, not an assessor"
        elif account.pk in in_teams:
            reason = "a participant (member of a team) is not an assessor"
        elif not account.is_active:
            reason = "the account is deactivated"
        elif not account.has_usable_password():
            reason = "the account cannot log in (no password: set one in the admin first)"
        else:
            reason = "not an assessor of this campaign"
        reasons[account.username] = reason
    return reasons


# --------------------------------------------------------------------------
# Frames


def primary_assessors(pool: Pool) -> dict[str, str]:
    """topic id -> username of its primary assessor."""
    return dict(
        pool.assignments.filter(kind=Assignment.PRIMARY).values_list(
            "topic__topic_id", "assessor__username"
        )
    )


def judgments_frame(pool: Pool) -> pd.DataFrame:
    """Every judgment on the pool's entries, one row per (assessor, item).

    Columns: assessor (username), query_id, doc_id, relevance, is_primary,
    and one column per aspect of the campaign's schema (NOT_ASKED, -1, when
    the aspect was not asked).
    """
    aspect_ids = pool.campaign.schema.aspect_ids
    in_pool = PoolEntry.objects.filter(pool=pool, topic=OuterRef("topic"), docno=OuterRef("docno"))
    is_primary = Assignment.objects.filter(
        pool=pool, topic=OuterRef("topic"), assessor=OuterRef("assessor"), kind=Assignment.PRIMARY
    )
    rows = (
        Judgment.objects.filter(Exists(in_pool))
        .annotate(is_primary=Exists(is_primary))
        .values_list(
            "assessor__username", "topic__topic_id", "docno", "relevance", "is_primary", "aspects"
        )
        .order_by("topic__position", "docno", "assessor__username")
    )
    columns = ["assessor", "query_id", "doc_id", "relevance", "is_primary"]
    return _with_aspects(list(rows), columns, aspect_ids)


def adjudications_frame(pool: Pool) -> pd.DataFrame:
    """Adjudications of the pool's items. Columns: query_id, doc_id, relevance,
    the schema's aspects, reason, decided_by (username, None if the account is
    gone), decided_at (ISO 8601, to the second)."""
    aspect_ids = pool.campaign.schema.aspect_ids
    in_pool = PoolEntry.objects.filter(pool=pool, topic=OuterRef("topic"), docno=OuterRef("docno"))
    rows = (
        Adjudication.objects.filter(Exists(in_pool))
        .values_list(
            "topic__topic_id",
            "docno",
            "relevance",
            "reason",
            "decided_by__username",
            "decided_at",
            "aspects",
        )
        .order_by("topic__position", "docno")
    )
    columns = ["query_id", "doc_id", "relevance", "reason", "decided_by", "decided_at"]
    frame = _with_aspects(list(rows), columns, aspect_ids)
    frame["decided_at"] = [at.isoformat(timespec="seconds") for at in frame["decided_at"]]
    return frame


def _with_aspects(
    rows: list[tuple], columns: list[str], aspect_ids: tuple[str, ...]
) -> pd.DataFrame:
    """Rows whose last value is an aspects dict, with that dict spread into columns."""
    frame = pd.DataFrame([row[:-1] for row in rows], columns=columns)
    for aspect in aspect_ids:
        frame[aspect] = pd.array([row[-1].get(aspect, NOT_ASKED) for row in rows], dtype="int64")
    if not rows:
        frame = frame.astype({"relevance": "int64"})
    return frame


# --------------------------------------------------------------------------
# Agreement, disagreement and final labels


@dataclass(frozen=True)
class AgreementReport:
    """The agreement of a pool's assessors. `labels`, `pairs` and `groups` hold the
    machine assessors too when `machines` lists any (their accounts' usernames, each
    mapped to its display name); `assessors`, the flagging of assessors, is always
    over human pairs only."""

    labels: pd.DataFrame
    aspects: tuple[agreement.Aspect, ...]
    pairs: pd.DataFrame
    groups: pd.DataFrame
    assessors: pd.DataFrame
    machines: dict[str, str] = field(default_factory=dict)
    machines_available: bool = False

    def aspect(self, name: str) -> agreement.Aspect:
        return next(a for a in self.aspects if a.name == name)

    def is_machine(self, assessor: str) -> bool:
        return assessor in self.machines

    def display_name(self, assessor: str) -> str:
        """A human's username; a machine's name followed by "(machine)"."""
        return self.machines.get(assessor, assessor)

    def summary(self) -> dict:
        return agreement.agreement_summary(self.pairs, self.groups)


def schema_aspects(pool: Pool) -> tuple[agreement.Aspect, ...]:
    return agreement_table.schema_aspects(pool.campaign.schema)


def agreement_report(pool: Pool, *, machines: bool | None = None) -> AgreementReport:
    """Agreement of the pool's assessors, machine assessors among them when `machines`
    is True, or None (the default) and the pool has machine labels; humans only with
    False. The flagging of assessors (`assessors`) is over human pairs only."""
    from judging.machine_selectors import machine_display_names, machine_labels_frame

    # Any judgment change appends an event; a late run adds entries; a machine run
    # or import changes its labels' count or latest update.
    version = JudgmentEvent.objects.filter(topic__campaign=pool.campaign).aggregate(Max("id"))
    machine_version = machine_labels_version(pool.campaign)
    key = (
        f"agreement:{pool.pk}:{version['id__max']}:{pool.entries.count()}:"
        f"{machine_version}:{machines}"
    )
    report = cache.get(key)
    if report is None:
        humans = judgments_frame(pool)
        machine_frame = machine_labels_frame(pool)
        include = bool(len(machine_frame)) if machines is None else machines
        table = pd.concat([humans, machine_frame], ignore_index=True) if include else humans
        if include and not len(humans):
            table = machine_frame
        aspects = schema_aspects(pool)
        pairs = agreement.pairwise_agreement(table, aspects=aspects)
        names = machine_display_names(pool.campaign) if include else {}
        human_pairs = pairs[~pairs.assessor_a.isin(names) & ~pairs.assessor_b.isin(names)]
        report = AgreementReport(
            labels=table,
            aspects=aspects,
            pairs=pairs,
            groups=agreement.group_agreement(table, aspects=aspects),
            assessors=agreement.assessor_agreement(human_pairs),
            machines={u: n for u, n in names.items() if u in set(table["assessor"])},
            machines_available=bool(len(machine_frame)),
        )
        cache.set(key, report, timeout=3600)
    return report


def human_machine_matrices(
    pool: Pool, report: AgreementReport, *, aspect: str | None = None
) -> list[dict[str, Any]]:
    """Per machine of the report and per aspect (or the one named): the confusion
    matrix of the humans' final labels (rows) by the machine's labels (columns) on
    the documents both labelled, every grade of the schema (`judging.core.calibration`).
    JSON-ready dicts: machine (username), name, aspect, values, counts, n."""
    if not report.machines:
        return []
    from judging.core.calibration import calibrate_frames

    humans = judgments_frame(pool)
    if humans.empty:
        return []
    final = final_labels(pool)
    chosen = [a for a in report.aspects if aspect is None or a.name == aspect]
    matrices = []
    for username, name in sorted(report.machines.items()):
        rows = report.labels[report.labels["assessor"] == username]
        for one in chosen:
            calibration = calibrate_frames(final, rows, aspect=one)
            matrices.append(
                {
                    "machine": username,
                    "name": name,
                    "aspect": one.name,
                    "values": list(calibration.values),
                    "counts": [list(row) for row in calibration.confusion],
                    "n": calibration.n,
                }
            )
    return matrices


def machine_labels_version(campaign: Campaign) -> str:
    """Changes whenever a machine label of the campaign is added, changed or removed."""
    from judging.models import MachineJudgment

    seen = MachineJudgment.objects.filter(machine__campaign=campaign).aggregate(
        n=Count("id"), last=Max("updated_at"), top=Max("id")
    )
    return f"{seen['n']}.{seen['top']}.{seen['last'].isoformat() if seen['last'] else ''}"


def agreement_lines(pool: Pool, *, machines: bool | None = None) -> pd.DataFrame:
    """The agreement table (`manage.py agreement --pool`) from the page's report."""
    report = agreement_report(pool, machines=machines)
    pairs = report.pairs
    if report.machines:  # a machine is named as pages name it: "qwen (machine)"
        pairs = pairs.assign(
            assessor_a=pairs.assessor_a.map(report.display_name),
            assessor_b=pairs.assessor_b.map(report.display_name),
        )
    return agreement_table.lines_of(pairs, report.groups, schema=pool.campaign.schema)


def policy_of(pool: Pool) -> PoolPolicy:
    """The pool's stored policy, or the default one (unsaved: reading writes nothing)."""
    return PoolPolicy.objects.filter(pool=pool).first() or PoolPolicy(pool=pool)


def machine_use_manifest(pool: Pool) -> dict[str, Any]:
    """How machines helped the pool's assessors, for the export manifest: the queue
    order, post-edit, and how many judgment changes were made with a machine label
    shown (post-edit)."""
    policy = policy_of(pool)
    in_pool = PoolEntry.objects.filter(pool=pool, topic=OuterRef("topic"), docno=OuterRef("docno"))
    shown = JudgmentEvent.objects.filter(
        Exists(in_pool), topic__campaign=pool.campaign, shown_machine_label__isnull=False
    ).count()
    adaptive = bool(pool.spec.get("strategy"))
    return {
        "queue_order": policy.queue_order,
        "queue_order_applies": not adaptive,
        "queue_order_note": (
            "adaptive pool: its strategy chose the next document"
            if adaptive
            else "machine_first: each queue began with the documents no machine labelled or "
            "whose machine samples disagreed"
            if policy.queue_order == PoolPolicy.MACHINE_FIRST
            else "the pool's presentation order"
        ),
        "post_edit": policy.post_edit,
        "judgment_events_with_machine_label_shown": shown,
    }


def disagreements(pool: Pool) -> pd.DataFrame:
    """The adjudication queue under the pool's disagreement mode, worst first."""
    policy = policy_of(pool)
    table = judgments_frame(pool)
    if table.empty:
        return table
    mode = policy.disagreement_mode
    aspect_ids = pool.campaign.schema.aspect_ids
    return labels.find_disagreements(
        table,
        mode=mode,
        aspects=None if mode == PoolPolicy.RELEVANCE_LINE else ("relevance", *aspect_ids),
        adjudications=adjudications_frame(pool),
    )


def final_labels(pool: Pool) -> pd.DataFrame:
    """Every judged item's final label under the pool's stored policy, with provenance."""
    policy = policy_of(pool)
    return labels.final_labels(
        judgments_frame(pool),
        adjudications_frame(pool),
        policy=labels.LabelPolicy.from_dict(policy.label_policy),
        aspects=pool.campaign.schema.aspect_ids,
    )


def labelling_times(pool: Pool) -> pd.DataFrame:
    """When each judged item of the campaign first got a label: its first judgment,
    else its adjudication (`query_id, doc_id, labelled_at`)."""
    campaign = pool.campaign
    judged = (
        Judgment.objects.filter(topic__campaign=campaign)
        .values("topic__topic_id", "docno")
        .annotate(at=Min("created_at"))
        .values_list("topic__topic_id", "docno", "at")
    )
    decided = Adjudication.objects.filter(topic__campaign=campaign).values_list(
        "topic__topic_id", "docno", "decided_at"
    )
    frame = pd.DataFrame([*judged, *decided], columns=["query_id", "doc_id", "labelled_at"])
    return frame.groupby(["query_id", "doc_id"], as_index=False, sort=False)["labelled_at"].min()


def adjudicated_count(pool: Pool) -> int:
    return Adjudication.objects.filter(topic__campaign=pool.campaign).count()
