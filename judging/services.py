"""Writes for assignments and judgments.

Every judgment write is transactional and idempotent: one row per
(assessor, topic, docno), however often or concurrently a request arrives;
the later value wins, every change appends a JudgmentEvent, and a save that
changes nothing stores nothing (not even its seconds).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from judging import selectors
from judging.core.judgment_files import ImportedJudgment, read_judgments_tsv
from judging.core.labels import LabelPolicy
from judging.core.overlap import OverlapPlan, OverlapSpec, plan_overlap
from judging.models import (
    Adjudication,
    Assignment,
    DocumentNote,
    Judgment,
    JudgmentEvent,
    MachineAssessor,
    OverlapItem,
    PoolPolicy,
)
from pooling import pool_services
from pooling.models import Campaign, Pool, PoolEntry, Topic
from pooling.pool_services import budget_check
from pooling.selectors import pool_entries_frame
from workbench.core.label_schema import LabelSchema
from workbench.core.problems import InputError

# One visit longer than this is a forgotten tab, not work.
MAX_SECONDS_PER_VISIT = 30 * 60


def active_seconds(seconds: Any) -> float:
    """The time one visit adds to a judgment: 0 for what is not a finite, positive
    number, and at most MAX_SECONDS_PER_VISIT (the forms and the API reject the
    rest first; this keeps a bad value out of the store whoever calls)."""
    try:
        value = float(seconds or 0.0)
    except (TypeError, ValueError):
        return 0.0
    return min(value, MAX_SECONDS_PER_VISIT) if math.isfinite(value) and value > 0 else 0.0


class AssignmentError(ValueError):
    """An assignment request that cannot be carried out."""


class JudgmentError(ValueError):
    """A judgment that cannot be recorded (not the assessor's document)."""


# --------------------------------------------------------------------------
# Assignments


def assignments_create(
    *, pool: Pool, topics: Iterable[Topic], assessors: Iterable[User]
) -> list[Assignment]:
    """Make each assessor the primary assessor of each topic, in one transaction.

    An assignment that already exists is kept as it is; a topic that already
    has another primary assessor is an error (give that topic an overlap
    assessor instead), and nothing is created.
    """
    topics, assessors = list(topics), list(assessors)
    if not topics or not assessors:
        raise AssignmentError("choose at least one topic and one assessor")
    if len(assessors) > 1 and len(topics) == 1:
        names = ", ".join(a.username for a in assessors)
        raise AssignmentError(
            f"topic {topics[0].topic_id} can have one primary assessor, not {names}"
        )
    foreign = [t.topic_id for t in topics if t.campaign_id != pool.campaign_id]
    if foreign:
        raise AssignmentError(f"not topics of this pool's campaign: {', '.join(foreign)}")
    _check_eligible(pool, assessors)
    # Several assessors and several topics: deal the topics out in turn.
    wanted = {topic.id: assessors[i % len(assessors)] for i, topic in enumerate(topics)}
    with transaction.atomic():
        existing = {
            a.topic_id: a
            for a in Assignment.objects.select_for_update()
            .filter(pool=pool, topic_id__in=wanted, kind=Assignment.PRIMARY)
            .select_related("assessor", "topic")
        }
        clashes = [
            f"topic {a.topic.topic_id} already has primary assessor {a.assessor.username}"
            for topic_id, a in existing.items()
            if a.assessor_id != wanted[topic_id].id
        ]
        if clashes:
            raise AssignmentError("; ".join(clashes))
        new = [
            Assignment(pool=pool, topic_id=topic_id, assessor=assessor)
            for topic_id, assessor in wanted.items()
            if topic_id not in existing
        ]
        Assignment.objects.bulk_create(new)
    return list(Assignment.objects.filter(pool=pool, topic_id__in=wanted, kind=Assignment.PRIMARY))


def _check_eligible(pool: Pool, assessors: Sequence[User]) -> None:
    """Work goes only to the campaign's eligible assessors (`selectors.eligible_assessors`):
    never to an organiser, a participant, an account that cannot log in or another
    campaign's assessor."""
    refusals = selectors.assessor_refusals(pool.campaign, assessors)
    if refusals:
        raise AssignmentError("; ".join(f"{name}: {why}" for name, why in sorted(refusals.items())))


def assignment_delete(*, assignment: Assignment) -> None:
    """Take a topic from an assessor: the assignment and its overlap items go. The
    judgments made stay (they belong to assessor, topic and docno) and still count."""
    assignment.delete()


# --------------------------------------------------------------------------
# Judgments


def judgment_submit(
    *,
    assignment: Assignment,
    docno: str,
    relevance: Any,
    aspects: dict[str, Any],
    seconds: float = 0.0,
    schema: LabelSchema | None = None,
) -> Judgment:
    """Record the assessor's labels for a document of their queue, or revise one
    they judged that a re-plan took out of it (`Assignment.entry_of`).

    Raises LabelError (labels outside the schema) or JudgmentError (the
    document is not in this assignment) before writing anything.
    """
    if assignment.entry_of(docno) is None:
        raise JudgmentError(f"document {docno!r} is not in this assignment")
    return judgment_record(
        assessor=assignment.assessor,
        topic=assignment.topic,
        docno=docno,
        relevance=relevance,
        aspects=aspects,
        seconds=seconds,
        schema=schema,
    )


def judgment_record(
    *,
    assessor: User,
    topic: Topic,
    docno: str,
    relevance: Any,
    aspects: dict[str, Any],
    seconds: float = 0.0,
    schema: LabelSchema | None = None,
    shown_machine_label: dict[str, Any] | None = None,
) -> Judgment:
    """Create or change one judgment, appending an event when the labels change.

    `shown_machine_label`: with post-edit on, the machine labels the judging page
    showed the assessor (`machine_selectors.post_edit_labels`), kept on the event.

    Saving the labels a judgment already has changes nothing (a double submit,
    a retried request or a repeated PUT is idempotent): no event, and no time
    added, so that repeating a save cannot inflate the active-time figures. A
    visit's seconds count when it creates the judgment or changes its labels.
    Two concurrent first submissions cannot create two rows: the unique
    constraint turns the second insert into an update.
    """
    schema = schema or topic.campaign.schema
    rel, cleaned = schema.clean(relevance, aspects)
    new_labels = {"relevance": rel, **cleaned}
    spent = active_seconds(seconds)
    with transaction.atomic():
        judgment = _locked(assessor, topic, docno)
        if judgment is None:
            try:
                with transaction.atomic():
                    judgment = Judgment.objects.create(
                        assessor=assessor,
                        topic=topic,
                        docno=docno,
                        relevance=rel,
                        aspects=cleaned,
                        seconds=spent,
                    )
            except IntegrityError:
                # Another request created it first: ours becomes an update.
                judgment = _locked(assessor, topic, docno)
                assert judgment is not None
            else:
                _log(judgment, JudgmentEvent.CREATE, None, new_labels, spent, shown_machine_label)
                # Judged after all: no longer set aside (the note itself stays).
                DocumentNote.objects.filter(assessor=assessor, topic=topic, docno=docno).exclude(
                    cannot_judge=""
                ).update(cannot_judge="", updated_at=timezone.now())
                return judgment
        old_labels = judgment.labels()
        if old_labels == new_labels:
            return judgment
        judgment.seconds += spent
        judgment.relevance, judgment.aspects = rel, cleaned
        judgment.save(update_fields=["relevance", "aspects", "seconds", "updated_at"])
        _log(judgment, JudgmentEvent.UPDATE, old_labels, new_labels, spent, shown_machine_label)
    return judgment


class NoteError(ValueError):
    """A note or cannot-judge the workbench will not store, with the reason."""


def note_record(*, assessor: User, topic: Topic, docno: str, text: str) -> DocumentNote | None:
    """Set the assessor's note on a document (blank clears it); None when there is none."""
    text = _note_text(text)
    note = DocumentNote.objects.filter(assessor=assessor, topic=topic, docno=docno).first()
    if note is None:
        if not text:
            return None
        return DocumentNote.objects.get_or_create(
            assessor=assessor, topic=topic, docno=docno, defaults={"text": text}
        )[0]
    if note.text != text:
        note.text = text
        note.save(update_fields=["text", "updated_at"])
    return note


def cannot_judge_record(
    *, assignment: Assignment, docno: str, reason: str, text: str = ""
) -> DocumentNote:
    """Set a document of the assessor's queue aside as one they cannot judge.

    Not a judgment: it spends no budget and the document stays unjudged. A
    document the assessor has judged is revised or undone instead.
    """
    if reason not in dict(DocumentNote.REASONS):
        raise NoteError(
            f"unknown reason {reason!r}: one of {', '.join(dict(DocumentNote.REASONS))}"
        )
    text = _note_text(text)
    if reason == DocumentNote.OTHER and not text:
        raise NoteError("say in a few words why the document cannot be judged")
    where = {"assessor": assignment.assessor, "topic": assignment.topic, "docno": docno}
    if Judgment.objects.filter(**where).exists():
        raise NoteError("you judged this document: revise or undo the judgment instead")
    if not assignment.queue().filter(docno=docno).exists():
        raise JudgmentError(f"document {docno!r} is not in this assignment")
    note, _ = DocumentNote.objects.update_or_create(
        **where, defaults={"cannot_judge": reason, "text": text}
    )
    return note


def cannot_judge_clear(*, note: DocumentNote) -> bool:
    """The organiser gives a set-aside document back to its assessor's queue
    (after fixing its text, say), or clears the mark of one a re-plan took out of
    the plan; the note stays for the record. Returns whether the document is in
    one of the assessor's queues (back to judge) or not (nothing to judge)."""
    if note.cannot_judge:
        note.cannot_judge = ""
        note.save(update_fields=["cannot_judge", "updated_at"])
    return DocumentNote.objects.with_in_queue().values_list("in_queue", flat=True).get(pk=note.pk)


def _note_text(text: Any) -> str:
    text = str(text or "").strip()
    if "\x00" in text:
        raise NoteError("the note contains a NUL character")
    if len(text) > DocumentNote.MAX_TEXT:
        raise NoteError(
            f"a note has at most {DocumentNote.MAX_TEXT} characters ({len(text)} given)"
        )
    return text


def judgment_undo(*, assignment: Assignment) -> JudgmentEvent | None:
    """Revert the assessor's latest change on the topic that is not yet reverted.

    A first judgment is removed, a revision restored to its previous labels.
    Repeated undos walk further back. Returns the reverted event, or None
    when there is nothing to undo.
    """
    assessor, topic = assignment.assessor, assignment.topic
    with transaction.atomic():
        last = (
            # Lock only the event row: the reverted_by test is an outer join.
            JudgmentEvent.objects.select_for_update(of=("self",))
            .filter(
                assessor=assessor,
                topic=topic,
                action__in=[JudgmentEvent.CREATE, JudgmentEvent.UPDATE],
                reverted_by__isnull=True,
            )
            .order_by("-id")
            .first()
        )
        if last is None:
            return None
        judgment = _locked(assessor, topic, last.docno)
        current = judgment.labels() if judgment else None
        if last.old is None:
            if judgment is not None:
                judgment.delete()
        else:
            if judgment is None:
                judgment = Judgment(assessor=assessor, topic=topic, docno=last.docno)
            judgment.relevance = last.old["relevance"]
            judgment.aspects = {k: v for k, v in last.old.items() if k != "relevance"}
            judgment.save()
        try:
            with transaction.atomic():
                JudgmentEvent.objects.create(
                    assessor=assessor,
                    topic=topic,
                    docno=last.docno,
                    action=JudgmentEvent.UNDO,
                    old=current,
                    new=last.old,
                    reverts=last,
                )
        except IntegrityError:
            # A concurrent undo reverted the same event first.
            transaction.set_rollback(True)
            return None
    return last


def _locked(assessor: User, topic: Topic, docno: str) -> Judgment | None:
    return (
        Judgment.objects.select_for_update()
        .filter(assessor=assessor, topic=topic, docno=docno)
        .first()
    )


def _log(
    judgment: Judgment,
    action: str,
    old: dict[str, Any] | None,
    new: dict[str, Any] | None,
    seconds: float,
    shown_machine_label: dict[str, Any] | None = None,
) -> None:
    JudgmentEvent.objects.create(
        assessor_id=judgment.assessor_id,
        topic_id=judgment.topic_id,
        docno=judgment.docno,
        action=action,
        old=old,
        new=new,
        seconds=seconds,
        shown_machine_label=shown_machine_label,
    )


# --------------------------------------------------------------------------
# Overlap, policy and adjudication


def policy_update(*, pool: Pool, steps: Sequence[str], disagreement_mode: str) -> PoolPolicy:
    """Set how the pool's judgments become final labels.

    Raises ValueError (with the reason) for steps that make no policy or an
    unknown disagreement mode, and stores nothing then.
    """
    label_policy = LabelPolicy.from_dict({"steps": list(steps)}).to_dict()
    if disagreement_mode not in dict(PoolPolicy.DISAGREEMENT_MODES):
        modes = ", ".join(dict(PoolPolicy.DISAGREEMENT_MODES))
        raise ValueError(f"disagreement mode must be one of {modes}, not {disagreement_mode!r}")
    policy, _ = PoolPolicy.objects.update_or_create(
        pool=pool,
        defaults={"label_policy": label_policy, "disagreement_mode": disagreement_mode},
    )
    return policy


def policy_machine_use_update(*, pool: Pool, queue_order: str, post_edit: bool) -> PoolPolicy:
    """Set how machines help the pool's assessors: the queue order ("default" or
    "machine_first") and post-edit (the judging page shows the machines' labels).
    Raises ValueError for an unknown order, and stores nothing then."""
    if queue_order not in dict(PoolPolicy.QUEUE_ORDERS):
        orders = ", ".join(dict(PoolPolicy.QUEUE_ORDERS))
        raise ValueError(f"queue order must be one of {orders}, not {queue_order!r}")
    policy, _ = PoolPolicy.objects.update_or_create(
        pool=pool, defaults={"queue_order": queue_order, "post_edit": bool(post_edit)}
    )
    return policy


def overlap_plan(*, pool: Pool, spec: OverlapSpec, assessors: Iterable[User]) -> OverlapPlan:
    """The overlap the spec asks for, planned but not assigned (a preview of its cost)."""
    entries = pool_entries_frame(pool)
    return plan_overlap(
        entries.loc[entries["sampled"], ["query_id", "doc_id", "order"]],
        primaries=selectors.primary_assessors(pool),
        assessors=[a.username for a in assessors],
        spec=spec,
    )


def overlap_assign(
    *,
    pool: Pool,
    spec: OverlapSpec,
    assessors: Iterable[User],
    confirm_over_budget: bool = False,
    user: User | None = None,
) -> OverlapPlan:
    """Plan the overlap and store it in one transaction: an overlap assignment per
    (assessor, topic), its items in the pool's order after any it already had.

    Extra judgments beyond what the budget has left raise OverBudget unless
    `confirm_over_budget`."""
    assessors = list(assessors)
    _check_eligible(pool, assessors)
    plan = overlap_plan(pool=pool, spec=spec, assessors=assessors)
    users = {a.username: a for a in assessors}
    topics = {t.topic_id: t for t in pool.campaign.topics.all()}
    with transaction.atomic():
        budget_check(
            campaign=pool.campaign,
            cost=plan.cost.total,
            action=f"overlap K={spec.k} on pool {pool.pk}",
            confirmed=confirm_over_budget,
            user=user,
        )
        entries = {
            (e.topic.topic_id, e.docno): e
            for e in PoolEntry.objects.filter(pool=pool, sampled=True).select_related("topic")
        }
        for (username, topic_id), rows in plan.assignments.groupby(["assessor", "query_id"]):
            assignment, _ = Assignment.objects.get_or_create(
                pool=pool,
                topic=topics[topic_id],
                assessor=users[username],
                defaults={"kind": Assignment.OVERLAP},
            )
            if assignment.kind != Assignment.OVERLAP:
                raise AssignmentError(
                    f"{username} is already primary on topic {topic_id}; cannot add overlap items"
                )
            have = set(assignment.items.values_list("entry_id", flat=True))
            start = assignment.items.count()
            new = [
                entries[(topic_id, doc_id)]
                for doc_id in rows.sort_values("position").doc_id
                if entries[(topic_id, doc_id)].pk not in have
            ]
            OverlapItem.objects.bulk_create(
                OverlapItem(assignment=assignment, entry=entry, position=start + i + 1)
                for i, entry in enumerate(new)
            )
        PoolPolicy.objects.update_or_create(pool=pool, defaults={"overlap_spec": spec.to_dict()})
    return plan


class AdjudicationError(ValueError):
    """An item that cannot be adjudicated: not a document of the pool for that topic."""


def adjudication_record(
    *,
    pool: Pool,
    topic: Topic,
    docno: str,
    relevance: Any,
    aspects: dict[str, Any],
    reason: str,
    decided_by: User,
) -> Adjudication:
    """Set the final label of a (topic, docno) of the pool; checked against the
    campaign's schema (LabelError). A document the pool does not hold for that topic
    is refused (AdjudicationError): its final label would be stored, and never exported."""
    adjudication_check(pool=pool, topic=topic, docno=docno)
    rel, cleaned = topic.campaign.schema.clean(relevance, aspects)
    adjudication, _ = Adjudication.objects.update_or_create(
        topic=topic,
        docno=docno,
        defaults={
            "relevance": rel,
            "aspects": cleaned,
            "reason": reason.strip(),
            "decided_by": decided_by,
        },
    )
    return adjudication


def adjudication_check(*, pool: Pool, topic: Topic, docno: str) -> None:
    """Raise AdjudicationError, with the reason, unless the pool holds the document for
    the topic (a pooled document: judged or not, sampled or not)."""
    if topic.campaign_id != pool.campaign_id:
        raise AdjudicationError(f"topic {topic.topic_id} is not a topic of pool {pool.pk}")
    if not PoolEntry.objects.filter(pool=pool, topic=topic, docno=docno).exists():
        raise AdjudicationError(
            f"document {docno!r} is not in pool {pool.pk} for topic {topic.topic_id}: "
            "only a pooled document gets a final label"
        )


# --------------------------------------------------------------------------
# Importing judgments made elsewhere


@dataclass(frozen=True)
class JudgmentImportResult:
    created: int
    updated: int
    unchanged: int
    new_assessors: tuple[str, ...] = ()
    pool: Pool | None = None
    machine_labels: int = 0  # rows of machine accounts, stored as their imported labels

    def __str__(self) -> str:
        text = f"{self.created:,} created, {self.updated:,} updated, {self.unchanged:,} unchanged"
        if self.machine_labels:
            text += f"; {self.machine_labels:,} machine labels (provenance imported)"
        if self.new_assessors:
            text += f"; new assessor accounts: {', '.join(self.new_assessors)}"
        if self.pool is not None:
            text += f"; pool {self.pool.pk} {self.pool.name!r} made of the judged documents"
        return text


@dataclass(frozen=True)
class PoolOfImport:
    """The pool an import makes of the documents it judges (`import_qrels --make-pool`)."""

    name: str
    source: str  # where the judgments came from, stored in the pool's spec


def judgments_import(
    *,
    campaign: Campaign,
    rows: Sequence[ImportedJudgment],
    create_assessors: bool = False,
    make_pool: PoolOfImport | None = None,
) -> JudgmentImportResult:
    """Store checked judgments in one transaction, in bulk, with their events.

    Rows come from `judgment_files` (already checked against the schema and
    the campaign). Assessors without an account are an error unless
    `create_assessors`, which makes accounts that cannot log in until an
    organiser sets a password. With `make_pool`, the same transaction makes
    the pool of every (topic, docno) the rows judge
    (`pooling.pool_services.pool_from_judged`), so that judgments loaded from a
    published qrels file can be adjudicated, exported and scored; if the pool
    cannot be made, nothing is stored.
    """
    machines = {
        m.account.username: m
        for m in MachineAssessor.objects.filter(
            account__username__in={row.assessor for row in rows}
        ).select_related("account", "campaign")
    }
    foreign = sorted(name for name, m in machines.items() if m.campaign_id != campaign.pk)
    if foreign:
        raise JudgmentError(f"machine assessor accounts of another campaign: {', '.join(foreign)}")
    every_row, machine_rows = rows, [row for row in rows if row.assessor in machines]
    rows = [row for row in rows if row.assessor not in machines]
    names = sorted({row.assessor for row in rows})
    now = timezone.now()
    with transaction.atomic():
        if machine_rows:
            _machine_rows_store(campaign, machines, machine_rows)
        users = {u.username: u for u in User.objects.filter(username__in=names)}
        missing = [name for name in names if name not in users]
        if missing and not create_assessors:
            raise JudgmentError(f"no assessor account named {', '.join(missing)}")
        for name in missing:
            users[name] = User.objects.create_user(name, password=None)
        topics = {t.topic_id: t for t in campaign.topics.all()}
        existing = {
            (j.assessor_id, j.topic_id, j.docno): j
            for j in Judgment.objects.select_for_update().filter(
                assessor__in=users.values(), topic__campaign=campaign
            )
        }
        new: list[Judgment] = []
        changed: list[Judgment] = []
        events: list[JudgmentEvent] = []
        unchanged = 0
        for row in rows:
            user, topic = users[row.assessor], topics[row.topic_id]
            labels = {"relevance": row.relevance, **row.aspects}
            judgment = existing.get((user.pk, topic.pk, row.docno))
            if judgment is None:
                new.append(
                    Judgment(
                        assessor=user,
                        topic=topic,
                        docno=row.docno,
                        relevance=row.relevance,
                        aspects=row.aspects,
                    )
                )
                action, old = JudgmentEvent.CREATE, None
            elif judgment.labels() == labels:
                unchanged += 1
                continue
            else:
                old = judgment.labels()
                judgment.relevance, judgment.aspects, judgment.updated_at = (
                    row.relevance,
                    row.aspects,
                    now,
                )
                changed.append(judgment)
                action = JudgmentEvent.UPDATE
            events.append(
                JudgmentEvent(
                    assessor=user, topic=topic, docno=row.docno, action=action, old=old, new=labels
                )
            )
        Judgment.objects.bulk_create(new, batch_size=2000)
        Judgment.objects.bulk_update(
            changed, ["relevance", "aspects", "updated_at"], batch_size=2000
        )
        JudgmentEvent.objects.bulk_create(events, batch_size=2000)
        pool = None
        if make_pool is not None:
            pairs = pd.DataFrame(
                [(row.topic_id, row.docno) for row in every_row], columns=["query_id", "doc_id"]
            )
            pool = pool_services.pool_from_judged(
                campaign=campaign, pairs=pairs, name=make_pool.name, source=make_pool.source
            )
    return JudgmentImportResult(
        len(new), len(changed), unchanged, tuple(missing), pool, len(machine_rows)
    )


def _machine_rows_store(
    campaign: Campaign, machines: dict[str, MachineAssessor], rows: Sequence[ImportedJudgment]
) -> None:
    """A machine account's rows of an imported file become its labels, provenance
    "imported" (never Judgment rows: machine labels stay apart from the humans')."""
    from judging.machine_services import machine_judgments_store

    topics = {t.topic_id: t.pk for t in campaign.topics.all()}
    relevance_id = campaign.schema.relevance.id
    by_machine: dict[str, dict[tuple[int, str], dict[str, int]]] = {}
    for row in rows:
        labels = {relevance_id: row.relevance, **row.aspects}
        by_machine.setdefault(row.assessor, {})[(topics[row.topic_id], row.docno)] = labels
    for name, labels in by_machine.items():
        machine_judgments_store(machine=machines[name], labels=labels)


def judgments_import_file(
    *,
    campaign: Campaign,
    data: bytes,
    name: str,
    create_assessors: bool = False,
    make_pool: PoolOfImport | None = None,
) -> JudgmentImportResult:
    """Import a judgments TSV made elsewhere (`import_judgments`, the API): every line
    is checked first against the campaign's topics and label schema, and its
    assessors against the accounts unless `create_assessors`
    (`judgment_files.read_judgments_tsv`); a file with any problem raises InputError
    with each file:line: reason and stores nothing. Then `judgments_import` stores
    it (raising JudgmentError or PoolBuildError as it does)."""
    known = None if create_assessors else User.objects.values_list("username", flat=True)
    rows, log = read_judgments_tsv(
        data,
        name=name,
        schema=campaign.schema,
        known_topics=campaign.topics.values_list("topic_id", flat=True),
        known_assessors=known,
    )
    if not log.ok:
        raise InputError.from_log(log)
    return judgments_import(
        campaign=campaign, rows=rows, create_assessors=create_assessors, make_pool=make_pool
    )
