"""Assignments, judgments and their audit log."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection, models

from pooling.models import Answer, Campaign, Pool, PoolEntry, Topic
from workbench.core.id_limits import MAX_DOCNO


class AssignmentQuerySet(models.QuerySet["Assignment"]):
    def open(self) -> AssignmentQuerySet:
        """Assignments an assessor can still work on: those of pools not retired."""
        return self.filter(pool__retired_at__isnull=True)

    def queuing(self, docno: Any) -> AssignmentQuerySet:
        """Those whose queue (`Assignment.queue`) holds `docno` (a value or an
        expression): a primary one with a drawn entry of it, an overlap one with a
        drawn item of it."""
        primary = models.Q(
            kind=Assignment.PRIMARY,
            pool__entries__topic=models.F("topic"),
            pool__entries__docno=docno,
            pool__entries__sampled=True,
        )
        overlap = models.Q(items__entry__docno=docno, items__entry__sampled=True) & ~models.Q(
            kind=Assignment.PRIMARY
        )
        return self.filter(primary | overlap)

    def list_with_progress(self) -> list[Assignment]:
        """The assignments, each with `judged` and `total` as `Assignment.progress`
        counts them, in one grouped statement for all of them (ends the chain).

        An assignment's documents are the entries of its topic in the pool
        (primary) or its overlap items; those to count are the drawn ones (the
        queue) and any other the assessor judged (a re-plan took it out of the
        sample: still hers); judged are those she judged. The ORM's form, four
        correlated subqueries per assignment, took 0.4 s on the dashboard of a
        100,000-entry pool; one join of the entries with the judgments takes a
        fraction of that (bench_dashboard).
        """
        assignments = list(self)
        if not assignments:
            return []
        ids_sql, ids_params = self.order_by().values("pk").query.sql_with_params()
        table = {
            model: connection.ops.quote_name(model._meta.db_table)
            for model in (Assignment, OverlapItem, PoolEntry, Judgment)
        }
        sql = f"""
            WITH item AS (
                SELECT a.id AS assignment_id, a.assessor_id, a.topic_id, e.docno, e.sampled
                FROM {table[Assignment]} a
                JOIN {table[PoolEntry]} e ON e.pool_id = a.pool_id AND e.topic_id = a.topic_id
                WHERE a.kind = %s AND a.id IN ({ids_sql})
                UNION ALL
                SELECT a.id, a.assessor_id, a.topic_id, e.docno, e.sampled
                FROM {table[Assignment]} a
                JOIN {table[OverlapItem]} o ON o.assignment_id = a.id
                JOIN {table[PoolEntry]} e ON e.id = o.entry_id
                WHERE a.kind <> %s AND a.id IN ({ids_sql})
            )
            SELECT i.assignment_id, COUNT(j.id), COUNT(*)
            FROM item i
            LEFT JOIN {table[Judgment]} j
                ON j.assessor_id = i.assessor_id AND j.topic_id = i.topic_id AND j.docno = i.docno
            WHERE i.sampled OR j.id IS NOT NULL
            GROUP BY i.assignment_id
        """
        params = [Assignment.PRIMARY, *ids_params, Assignment.PRIMARY, *ids_params]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            counts = {pk: (judged, total) for pk, judged, total in cursor.fetchall()}
        from judging.adaptive import adaptive_caps

        caps = adaptive_caps(a.pool_id for a in assignments)
        for assignment in assignments:
            assignment.judged, assignment.total = counts.get(assignment.pk, (0, 0))
            if assignment.pool_id in caps and assignment.kind == Assignment.PRIMARY:
                # An adaptive pool's queue grows to the topic's share of the budget.
                cap = caps[assignment.pool_id].get(assignment.topic.topic_id, 0)
                assignment.total = max(assignment.total, cap)
        return assignments


class Assignment(models.Model):
    """An assessor's work on one topic of a pool.

    A primary assignment covers every sampled entry of the topic, in the
    pool's presentation order (entries added later join the queue). An
    overlap assignment covers only its listed items, so that the same
    documents are judged by several assessors for measuring agreement.
    """

    PRIMARY = "primary"
    OVERLAP = "overlap"
    KINDS = [(PRIMARY, "Primary"), (OVERLAP, "Overlap")]

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="assignments")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="assignments")
    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    kind = models.CharField(max_length=10, choices=KINDS, default=PRIMARY)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["pool", "topic__position", "assessor__username"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "topic", "assessor"], name="unique_assignment"),
            # The final-label policy falls back on "the primary assessor's" label.
            models.UniqueConstraint(
                fields=["pool", "topic"],
                condition=models.Q(kind="primary"),
                name="one_primary_per_topic",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.assessor} on topic {self.topic.topic_id} ({self.kind})"

    def entries(self) -> models.QuerySet[PoolEntry]:
        """Every entry the assignment covers, drawn or not: the topic's entries in the
        pool (primary) or its overlap items. A pool revision changes which of them
        are drawn (`sampled`), never which they are."""
        if self.kind == self.PRIMARY:
            return PoolEntry.objects.filter(pool_id=self.pool_id, topic_id=self.topic_id)
        return PoolEntry.objects.filter(overlap_items__assignment=self)

    def queue(self) -> models.QuerySet[PoolEntry]:
        """The entries to judge in the order the assessor sees them, each
        annotated with its 1-based `position` in the queue."""
        if self.kind == self.PRIMARY:
            return (
                self.entries()
                .filter(sampled=True)
                .annotate(position=models.F("order"))
                .order_by("order")
            )
        return (
            # An entry a pool revision took out of the plan leaves overlap queues too.
            self.entries()
            .filter(sampled=True)
            .annotate(position=models.F("overlap_items__position"))
            .order_by("overlap_items__position")
        )

    def judgments(self) -> models.QuerySet[Judgment]:
        """What the assessor judged in this assignment: her judgments of its entries,
        whatever a pool revision did to the sample since. They stay hers to see and
        revise, and count as judged in her progress, in or out of the queue.

        Every read of an assessor's own labels goes through this (her topics'
        progress, the judged list, her judgments and notes over the API, reopening
        and revising a label); `list_with_progress` counts the same in SQL."""
        return Judgment.objects.filter(
            assessor_id=self.assessor_id,
            topic_id=self.topic_id,
            docno__in=self.entries().values("docno"),
        )

    def _judged_by_assessor(self) -> models.Exists:
        """Whether the assessor judged an entry (an OuterRef to it)."""
        return models.Exists(
            Judgment.objects.filter(
                assessor_id=self.assessor_id, topic_id=self.topic_id, docno=models.OuterRef("docno")
            )
        )

    def set_aside(self) -> models.QuerySet[DocumentNote]:
        """The assessor's cannot-judge notes on this topic (any queue position)."""
        return DocumentNote.objects.filter(
            assessor_id=self.assessor_id, topic_id=self.topic_id
        ).exclude(cannot_judge="")

    def notes(self) -> models.QuerySet[DocumentNote]:
        """The assessor's notes (and cannot-judge reasons) on the assignment's entries,
        in the queue or not: a re-plan does not hide what she wrote."""
        return DocumentNote.objects.filter(
            assessor_id=self.assessor_id,
            topic_id=self.topic_id,
            docno__in=self.entries().values("docno"),
        )

    def entry_at(self, position: int) -> PoolEntry | None:
        return self.queue().filter(position=position).first()

    def entry_of(self, docno: str) -> PoolEntry | None:
        """The assessor's entry of this docno: in her queue (with its `position`), or
        judged by her after a re-plan took it out of the queue (`position` None);
        None for a document that is neither."""
        entry = self.queue().filter(docno=docno).first()
        if entry is not None:
            return entry
        judged = self.entries().filter(self._judged_by_assessor(), docno=docno).first()
        if judged is not None:
            judged.position = None
        return judged

    def next_unjudged(self, after: int = 0) -> PoolEntry | None:
        """The first unjudged entry after `position`, else the first unjudged at all;
        documents the assessor set aside as cannot-judge are skipped. With the pool's
        `queue_order` "machine_first", the same among the documents the machines did
        not settle (`judging.core.machine_queue`) first, then the others. In an adaptive
        pool with none left, the next document is drawn (`judging.adaptive`)."""
        set_aside = self.set_aside().filter(docno=models.OuterRef("docno"))
        unjudged = (
            self.queue().exclude(self._judged_by_assessor()).exclude(models.Exists(set_aside))
        )
        adaptive = bool(self.pool.spec.get("strategy"))
        if not adaptive and self._machine_first():
            # The documents the machines did not settle come first (positions stay the
            # pool's, which hides run and rank as before); an adaptive pool's strategy
            # keeps choosing, so it is left as it is.
            from judging.machine_selectors import machine_settled_docnos

            first = unjudged.exclude(docno__in=machine_settled_docnos(self.topic))
            entry = first.filter(position__gt=after).first() or first.first()
            if entry is not None:
                return entry
        entry = unjudged.filter(position__gt=after).first() or (unjudged.first() if after else None)
        if entry is None and adaptive:
            # An adaptive pool draws its next document only now (judging.adaptive).
            from judging.adaptive import adaptive_draw

            return adaptive_draw(self)
        return entry

    def _machine_first(self) -> bool:
        return PoolPolicy.objects.filter(
            pool_id=self.pool_id, queue_order=PoolPolicy.MACHINE_FIRST
        ).exists()

    def progress(self) -> tuple[int, int]:
        """(judged, total) as `list_with_progress` counts a list: the documents to
        count are the queue and the others the assessor judged (`judgments`), judged
        those she judged. One count: the judging page asks after every save."""
        judged = self._judged_by_assessor()
        counts = (
            self.entries()
            .filter(models.Q(sampled=True) | judged)
            .aggregate(total=models.Count("pk"), judged=models.Count("pk", filter=judged))
        )
        total = counts["total"]
        if self.kind == self.PRIMARY and self.pool.spec.get("strategy"):
            from judging.adaptive import topic_caps

            total = max(total, topic_caps(self.pool).get(self.topic.topic_id, 0))
        return counts["judged"], total


class OverlapItem(models.Model):
    """One entry of an overlap assignment's queue."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="items")
    entry = models.ForeignKey(PoolEntry, on_delete=models.CASCADE, related_name="overlap_items")
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["assignment", "position"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "entry"], name="unique_overlap_item"),
            models.UniqueConstraint(
                fields=["assignment", "position"], name="unique_overlap_position"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.assignment}: #{self.position}"


class Judgment(models.Model):
    """One assessor's labels for one document of one topic.

    Keyed by (assessor, topic, docno), not by pool entry, so that judgments
    outlive a rebuilt pool. `aspects` maps aspect id to value, with -1 for
    an aspect not asked because the document is not relevant.
    """

    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judgments"
    )
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="judgments")
    docno = models.CharField(max_length=MAX_DOCNO)
    relevance = models.SmallIntegerField()
    aspects = models.JSONField(default=dict)
    seconds = models.FloatField(default=0.0, help_text="Active time spent, summed over visits.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assessor", "topic", "docno"], name="unique_judgment"),
        ]
        indexes = [models.Index(fields=["topic", "docno"], name="judgment_document")]

    def __str__(self) -> str:
        return f"{self.assessor} {self.topic.topic_id} {self.docno} = {self.relevance}"

    def labels(self) -> dict[str, Any]:
        return {"relevance": self.relevance, **self.aspects}


class JudgmentEvent(models.Model):
    """The append-only audit log: every change to a judgment, with old and new labels.

    `old` is null for a first judgment and `new` is null when an undo
    removed the judgment; an undo points at the event it reverted.
    """

    CREATE = "create"
    UPDATE = "update"
    UNDO = "undo"
    ACTIONS = [(CREATE, "Judged"), (UPDATE, "Revised"), (UNDO, "Undone")]

    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judgment_events"
    )
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    docno = models.CharField(max_length=MAX_DOCNO)
    action = models.CharField(max_length=10, choices=ACTIONS)
    old = models.JSONField(null=True)
    new = models.JSONField(null=True)
    seconds = models.FloatField(default=0.0)
    reverts = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reverted_by"
    )
    shown_machine_label = models.JSONField(
        null=True,
        blank=True,
        help_text="Post-edit: the machine labels the judging page showed, "
        "{machine name: {aspect: grade}} ({} when it had none); null when not shown.",
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]
        indexes = [
            models.Index(fields=["assessor", "topic", "-id"], name="event_assessor_topic"),
            models.Index(fields=["topic", "docno"], name="event_document"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.assessor} {self.action} {self.docno}"


def _default_label_policy() -> dict[str, Any]:
    from judging.core.labels import DEFAULT_POLICY

    return DEFAULT_POLICY.to_dict()


class PoolPolicy(models.Model):
    """How a pool's judgments become final labels, and the overlap it was given."""

    ANY = "any"
    RELEVANCE_LINE = "relevance_line"
    DISAGREEMENT_MODES = [
        (ANY, "Any difference in any label"),
        (RELEVANCE_LINE, "Only across the relevant / not relevant line"),
    ]

    DEFAULT_ORDER = "default"
    MACHINE_FIRST = "machine_first"
    QUEUE_ORDERS = [
        (DEFAULT_ORDER, "The pool's order"),
        (MACHINE_FIRST, "First the documents whose machine labels disagree or are missing"),
    ]

    pool = models.OneToOneField(Pool, on_delete=models.CASCADE, related_name="policy")
    label_policy = models.JSONField(default=_default_label_policy)
    disagreement_mode = models.CharField(
        max_length=20, choices=DISAGREEMENT_MODES, default=RELEVANCE_LINE
    )
    overlap_spec = models.JSONField(null=True, blank=True)
    # Machines helping the humans (issue 25 item 6; docs/machine_assessors.md).
    queue_order = models.CharField(max_length=20, choices=QUEUE_ORDERS, default=DEFAULT_ORDER)
    post_edit = models.BooleanField(
        default=False, help_text="The judging page shows the machines' labels of the document."
    )

    def __str__(self) -> str:
        return f"policy of {self.pool}"


class Adjudication(models.Model):
    """The final label of a (topic, docno) that assessors disagree on."""

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="adjudications")
    docno = models.CharField(max_length=MAX_DOCNO)
    relevance = models.SmallIntegerField()
    aspects = models.JSONField(default=dict)
    reason = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["topic", "docno"], name="unique_adjudication"),
        ]

    def __str__(self) -> str:
        return f"{self.topic.topic_id} {self.docno} = {self.relevance}"

    def labels(self) -> dict[str, Any]:
        return {"relevance": self.relevance, **self.aspects}


class DocumentNoteQuerySet(models.QuerySet["DocumentNote"]):
    def with_in_queue(self) -> DocumentNoteQuerySet:
        """Each note with `in_queue`: whether one of its assessor's open assignments of
        its topic has the document in the queue (a re-plan may have taken it out)."""
        return self.annotate(
            in_queue=models.Exists(
                Assignment.objects.open()
                .filter(assessor=models.OuterRef("assessor"), topic=models.OuterRef("topic"))
                .queuing(models.OuterRef("docno"))
            )
        )


class DocumentNote(models.Model):
    """An assessor's word on a document of a topic: a free note, and why they
    cannot judge it when they cannot.

    Not a judgment: a document set aside as cannot-judge spends no budget,
    stays pooled but unjudged, leaves the assessor's queue and waits on the
    organiser's dashboard. Judging it later clears the reason; the note stays.
    """

    EMPTY = "empty"
    UNREADABLE = "unreadable"
    LANGUAGE = "language"
    NO_ACCESS = "no_access"
    OTHER = "other"
    REASONS = [
        (EMPTY, "Empty or no text"),
        (UNREADABLE, "Unreadable or garbled"),
        (LANGUAGE, "Wrong language"),
        (NO_ACCESS, "Login wall or paywall"),
        (OTHER, "Other"),
    ]
    MAX_TEXT = 2000

    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="document_notes"
    )
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="document_notes")
    docno = models.CharField(max_length=MAX_DOCNO)
    text = models.TextField(blank=True, max_length=MAX_TEXT)
    cannot_judge = models.CharField(max_length=20, choices=REASONS, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DocumentNoteQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["assessor", "topic", "docno"], name="unique_document_note"
            ),
        ]
        indexes = [models.Index(fields=["topic", "docno"], name="note_document")]

    def __str__(self) -> str:
        return f"{self.assessor} {self.topic.topic_id} {self.docno}: {self.cannot_judge or 'note'}"


# --------------------------------------------------------------------------
# Generated answers: nuggets, and the labels of answers (docs/answers.md)


class NuggetList(models.Model):
    """One version of a topic's nuggets. An edit makes the next version; the ones
    before stay, so that every nugget judgment knows the list it was made against."""

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="nugget_lists")
    version = models.PositiveIntegerField()
    note = models.CharField(max_length=200, blank=True, help_text="What the edit changed.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["topic", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["topic", "version"], name="unique_nugget_version")
        ]

    def __str__(self) -> str:
        return f"nuggets of {self.topic.topic_id}, version {self.version}"


class Nugget(models.Model):
    VITAL = "vital"
    OKAY = "okay"
    IMPORTANCES = [(VITAL, "Vital"), (OKAY, "Okay")]
    MAX_TEXT = 1000

    nugget_list = models.ForeignKey(NuggetList, on_delete=models.CASCADE, related_name="nuggets")
    position = models.PositiveIntegerField(help_text="1-based, the order assessors see.")
    text = models.TextField(max_length=MAX_TEXT)
    importance = models.CharField(max_length=5, choices=IMPORTANCES)

    class Meta:
        ordering = ["nugget_list", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["nugget_list", "position"], name="unique_nugget_position"
            )
        ]

    def __str__(self) -> str:
        return f"{self.position}. {self.text} ({self.importance})"


class AnswerAssignment(models.Model):
    """An assessor's work on one topic's generated answers: nugget assignment or
    citation support. The answers come in an order shuffled by `seed`, and the
    assessor never sees which run wrote one."""

    NUGGETS = "nuggets"
    CITATIONS = "citations"
    TASKS = [(NUGGETS, "Nugget assignment"), (CITATIONS, "Citation support")]

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="answer_assignments")
    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="answer_assignments"
    )
    task = models.CharField(max_length=10, choices=TASKS, default=NUGGETS)
    seed = models.PositiveIntegerField(default=0)
    prefill = models.ForeignKey(
        "MachineAssessor",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Start the assessor's labels from this machine's (off when empty).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["topic__position", "task", "assessor__username"]
        constraints = [
            models.UniqueConstraint(
                fields=["topic", "task", "assessor"], name="unique_answer_assignment"
            )
        ]

    def __str__(self) -> str:
        return f"{self.assessor} on topic {self.topic.topic_id} ({self.task})"

    def answer_ids(self) -> list[int]:
        """The topic's answers in this assignment's order (1-based positions are
        indices + 1): the ids sorted, then shuffled by the seed and the topic."""
        from judging.core.answer_order import shuffled

        ids = sorted(Answer.objects.filter(topic_id=self.topic_id).values_list("pk", flat=True))
        return shuffled(ids, seed=self.seed, topic=self.topic.topic_id)

    def judgments(self) -> models.QuerySet[AnswerJudgment]:
        return AnswerJudgment.objects.filter(
            assessor_id=self.assessor_id, task=self.task, answer__topic_id=self.topic_id
        )

    def notes(self) -> models.QuerySet[AnswerNote]:
        return AnswerNote.objects.filter(
            assessor_id=self.assessor_id, task=self.task, answer__topic_id=self.topic_id
        )


class AnswerJudgment(models.Model):
    """One assessor's labels of one answer. Nuggets: a label per nugget of the list
    version `nugget_list`, in its order (support, partial_support, not_support).
    Citations: per sentence, a label per citation (full, partial, no)."""

    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="answer_judgments"
    )
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="judgments")
    task = models.CharField(max_length=10, choices=AnswerAssignment.TASKS)
    nugget_list = models.ForeignKey(
        NuggetList, null=True, blank=True, on_delete=models.PROTECT, related_name="judgments"
    )
    labels = models.JSONField()
    seconds = models.FloatField(default=0.0, help_text="Active time spent, summed over visits.")
    provenance = models.JSONField(
        null=True,
        blank=True,
        help_text="A machine's labels: machine, model, prompt version, raw reply, tokens.",
    )
    prefilled_from = models.CharField(
        max_length=150,
        blank=True,
        help_text="The machine account whose labels the assessor's page started from.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["assessor", "answer", "task"], name="unique_answer_judgment"
            )
        ]

    def __str__(self) -> str:
        return f"{self.assessor} {self.answer_id} {self.task}"


class AnswerJudgmentEvent(models.Model):
    """The append-only audit log of answer judgments (as `JudgmentEvent` for documents)."""

    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="answer_judgment_events"
    )
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="+")
    task = models.CharField(max_length=10, choices=AnswerAssignment.TASKS)
    action = models.CharField(max_length=10, choices=JudgmentEvent.ACTIONS)
    nugget_list = models.ForeignKey(
        NuggetList, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    old = models.JSONField(null=True)
    new = models.JSONField(null=True)
    seconds = models.FloatField(default=0.0)
    prefilled_from = models.CharField(max_length=150, blank=True)
    reverts = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reverted_by"
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]
        indexes = [
            models.Index(fields=["assessor", "task", "-id"], name="answer_event_assessor"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.assessor} {self.action} {self.answer_id}"


class AnswerNote(models.Model):
    """An assessor's note on an answer, and why she cannot judge it when she cannot."""

    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="answer_notes"
    )
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="notes")
    task = models.CharField(max_length=10, choices=AnswerAssignment.TASKS)
    text = models.TextField(blank=True, max_length=DocumentNote.MAX_TEXT)
    cannot_judge = models.CharField(max_length=20, choices=DocumentNote.REASONS, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["assessor", "answer", "task"], name="unique_answer_note"
            )
        ]

    def __str__(self) -> str:
        return f"{self.assessor} {self.answer_id}: {self.cannot_judge or 'note'}"


class AnswerAdjudication(models.Model):
    """The final labels of an answer its assessors disagree on (nuggets: against the
    nugget version they judged), with who decided and why. It counts in the scores
    in place of any assessor's labels."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="adjudications")
    task = models.CharField(max_length=10, choices=AnswerAssignment.TASKS)
    nugget_list = models.ForeignKey(
        NuggetList, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    labels = models.JSONField()
    reason = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["answer", "task"], name="unique_answer_adjudication")
        ]

    def __str__(self) -> str:
        return f"{self.answer_id} {self.task} adjudicated"


# --------------------------------------------------------------------------
# Machine assessors (issue 25): their labels are never rows of Judgment, so that
# no machine label reaches human qrels, the budget, status or agreement by accident.


class MachineAssessor(models.Model):
    """A model (or the built-in lexical baseline) that labels a campaign's documents.

    `account` is a user that cannot log in (unusable password, inactive) and is
    never assigned work: the name under which its labels are exported. The API
    key is never stored: `api_key_env` names the environment variable holding it.
    """

    CHAT = "chat"
    LEXICAL = "lexical"
    KINDS = [(CHAT, "Chat completions endpoint"), (LEXICAL, "Lexical baseline (BM25)")]

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="machines")
    name = models.CharField(max_length=100)
    account = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="machine"
    )
    kind = models.CharField(max_length=10, choices=KINDS, default=CHAT)
    base_url = models.CharField(max_length=500, blank=True)
    model = models.CharField(max_length=200, blank=True)
    api_key_env = models.CharField(
        max_length=100, blank=True, help_text="The NAME of the environment variable, never the key."
    )
    temperature = models.FloatField(default=0.0)
    samples = models.PositiveSmallIntegerField(default=1)
    concurrency = models.PositiveSmallIntegerField(default=4)
    requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    price_per_1k_tokens = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True
    )
    prompt_override = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="unique_machine_name"),
        ]
        ordering = ["campaign", "name"]

    def __str__(self) -> str:
        return f"{self.name} (machine)"

    @property
    def is_baseline(self) -> bool:
        return self.kind == self.LEXICAL

    @property
    def model_label(self) -> str:
        return "lexical-bm25" if self.is_baseline else self.model


class MachineJudgment(models.Model):
    """The machine's label for one document: per aspect the most frequent grade
    over its samples, ties to the lower grade. `labels` = {aspect: grade} with
    "relevance" first and NOT_ASKED (-1) for aspects not asked."""

    COMPUTED = "computed"
    IMPORTED = "imported"

    machine = models.ForeignKey(MachineAssessor, on_delete=models.CASCADE, related_name="judgments")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    docno = models.CharField(max_length=MAX_DOCNO)
    labels = models.JSONField()
    provenance = models.CharField(max_length=10, default=COMPUTED)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["machine", "topic", "docno"], name="unique_machine_judgment"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.machine.name} {self.topic_id} {self.docno} = {self.labels}"


class MachineSample(models.Model):
    """One request's answer (one sample) with its provenance, failed or not."""

    machine = models.ForeignKey(
        MachineAssessor, on_delete=models.CASCADE, related_name="sample_rows"
    )
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    docno = models.CharField(max_length=MAX_DOCNO)
    sample = models.PositiveSmallIntegerField(default=0)
    labels = models.JSONField(null=True, blank=True)
    ok = models.BooleanField(default=False)
    failure = models.CharField(max_length=500, blank=True)
    raw_reply = models.TextField(blank=True)
    model = models.CharField(max_length=200, blank=True)
    endpoint_host = models.CharField(max_length=255, blank=True)
    prompt_version = models.CharField(max_length=16, blank=True)
    temperature = models.FloatField(default=0.0)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    requests = models.PositiveSmallIntegerField(
        default=1, help_text="Requests sent (2 when the reply was asked once more; 0 cached)."
    )
    cached = models.BooleanField(default=False, help_text="Copied from an earlier sample.")
    cache_key = models.CharField(max_length=64, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["machine", "topic", "docno"], name="machine_sample_document")
        ]

    def __str__(self) -> str:
        return f"{self.machine_id} {self.topic_id} {self.docno} #{self.sample}"
