"""Campaigns and what they are made of: topics, documents and submitted runs."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.deconstruct import deconstructible

from pooling.core.topic_files import ANSWERS, parse_answer
from workbench.core.id_limits import MAX_DOCNO, MAX_RUN_TAG, MAX_TOPIC_ID, MAX_URL, control_problem
from workbench.core.label_schema import (
    SCHEMA_PRESETS,
    LabelSchema,
    SchemaPreset,
    default_schema,
    preset_of,
    schema_problems,
)


def validate_label_schema(value: Any) -> None:
    problems = schema_problems(value)
    if problems:
        raise ValidationError(problems)


@deconstructible
class NoControlCharacters:
    """A field's validator: a name or id holds no control character
    (`id_limits.control_problem`), so that every form, serializer and admin page
    that edits the field refuses one, with the reason."""

    def __init__(self, what: str):
        self.what = what

    def __call__(self, value: Any) -> None:
        problem = control_problem(self.what, str(value))
        if problem:
            raise ValidationError(problem, code="control_character")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NoControlCharacters) and other.what == self.what


class TaskKind(models.TextChoices):
    """What a campaign evaluates: ranked runs judged in pools, or a task whose
    gold and submissions are scored by its official rules (`scoring.core.tasks`)."""

    RANKED = "ranked", "Ranked retrieval"
    CODIESP = "codiesp", "CodiEsp clinical coding"
    SCIFACT = "scifact", "SciFact claim verification"
    ANSWERS = "answers", "Generated answers (RAG)"


class Campaign(models.Model):
    name = models.CharField(max_length=200, validators=[NoControlCharacters("campaign name")])
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    guidelines = models.TextField(blank=True, help_text="Shown to assessors beside every topic.")
    label_schema = models.JSONField(default=default_schema, validators=[validate_label_schema])
    judgment_budget = models.PositiveIntegerField(
        null=True, blank=True, help_text="How many judgments the campaign can pay for."
    )
    budget_counts_adjudications = models.BooleanField(
        default=True,
        help_text="Adjudications are paid from the judgment budget too (each counts once).",
    )
    task_kind = models.CharField(
        max_length=16,
        choices=TaskKind.choices,
        default=TaskKind.RANKED,
        help_text="Ranked retrieval: runs, pools and judging. CodiEsp or SciFact: "
        "submissions scored against a gold file by the task's official rules. Generated "
        "answers: RAG answers judged by nuggets and citation support.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Participation: teams submit runs until the deadline (see `Team`).
    submission_deadline = models.DateTimeField(
        null=True, blank=True, help_text="Teams' runs are refused after it (unless accepted late)."
    )
    max_runs_per_team = models.PositiveIntegerField(
        null=True, blank=True, help_text="The most runs one team may submit; empty: no limit."
    )
    pooled_runs_per_team = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="How many runs of each team, first by the team's precedence, a pool takes.",
    )

    class Meta:
        ordering = ["-created_at", "slug"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_task(self) -> bool:
        """A CodiEsp or SciFact campaign: a gold file and submissions scored by its rules."""
        return self.task_kind in (TaskKind.CODIESP, TaskKind.SCIFACT)

    @property
    def is_answers(self) -> bool:
        """A generated-answers campaign: answer runs judged by nuggets and citation support."""
        return self.task_kind == TaskKind.ANSWERS

    @property
    def schema(self) -> LabelSchema:
        return LabelSchema.parse(self.label_schema)

    @property
    def schema_preset(self) -> SchemaPreset | None:
        """The preset the label schema is, or None for a schema of its own."""
        name = preset_of(self.label_schema)
        return SCHEMA_PRESETS[name] if name else None


class Topic(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="topics")
    # A string: "1", "301" and "covid-12" are all topic ids; never cast to int.
    topic_id = models.CharField(
        max_length=MAX_TOPIC_ID, validators=[NoControlCharacters("topic id")]
    )
    title = models.TextField(blank=True)
    description = models.TextField(blank=True)
    narrative = models.TextField(blank=True)
    extra = models.JSONField(default=dict, blank=True)
    # Order of first appearance in the imported topic file, which is the
    # order organisers expect to see.
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["campaign", "position", "topic_id"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "topic_id"], name="unique_topic_id"),
        ]

    def __str__(self) -> str:
        return f"{self.topic_id}: {self.title}" if self.title else self.topic_id

    @property
    def answer(self) -> int | None:
        """The accepted answer (-1, 0 or 1), used by the correctness qrels; None if unknown."""
        return parse_answer(self.extra["answer"]) if "answer" in self.extra else None

    @property
    def answer_name(self) -> str:
        return ANSWERS.get(self.answer, "") if self.answer is not None else ""


class Document(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="documents")
    docno = models.CharField(max_length=MAX_DOCNO, validators=[NoControlCharacters("docno")])
    title = models.TextField(blank=True)
    text = models.TextField(blank=True)
    url = models.CharField(max_length=MAX_URL, blank=True)

    class Meta:
        ordering = ["campaign", "docno"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "docno"], name="unique_docno"),
        ]
        indexes = [
            # The few documents loaded without text: a pool's documents to judge that
            # have none are counted from it and `unique_docno` (`selectors.pools_without_text`).
            models.Index(
                fields=["campaign", "docno"],
                condition=models.Q(text=""),
                name="document_without_text",
            )
        ]

    def __str__(self) -> str:
        return self.docno


class Team(models.Model):
    """Participants: accounts that submit runs to one campaign and see only their own.

    A participant is neither an organiser nor an assessor (`workbench.roles`).
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=200, validators=[NoControlCharacters("team name")])
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="teams", blank=True)
    # Late runs the organiser still accepts from this team after the deadline.
    late_runs_accepted = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "name"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="unique_team_name"),
        ]

    def __str__(self) -> str:
        return self.name


def _run_upload_path(run: Run, filename: str) -> str:
    return f"runs/{run.campaign.slug}/{filename}"


class Run(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="runs")
    tag = models.CharField(max_length=MAX_RUN_TAG, validators=[NoControlCharacters("run tag")])
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    uploaded_at = models.DateTimeField(auto_now_add=True)
    original_name = models.CharField(max_length=255)
    original_file = models.FileField(upload_to=_run_upload_path, max_length=500)
    # The parsed rows (query_id, doc_id, score) as Parquet, read by the pooler.
    cache_file = models.FileField(upload_to=_run_upload_path, max_length=500)
    sha256 = models.CharField(max_length=64)
    line_count = models.PositiveIntegerField()
    topic_count = models.PositiveIntegerField()
    depth = models.PositiveIntegerField(help_text="Most documents retrieved for one topic.")
    documents_per_topic = models.JSONField(default=dict)
    # A team's run (null: the organiser's upload), its judging precedence in the
    # team (1 = first), and whether it came after the deadline, accepted late.
    team = models.ForeignKey(
        Team, null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    precedence = models.PositiveIntegerField(null=True, blank=True)
    late = models.BooleanField(default=False)

    class Meta:
        ordering = ["campaign", "tag"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "tag"], name="unique_run_tag"),
            models.UniqueConstraint(fields=["team", "precedence"], name="unique_run_precedence"),
        ]

    def __str__(self) -> str:
        return self.tag


class Pool(models.Model):
    """The documents to judge, built from a campaign's runs with a stored spec.

    `spec` holds everything needed to rebuild it byte for byte: depth,
    strata and rates, per-topic depths, the presentation order and the seed.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="pools")
    name = models.CharField(max_length=200)
    spec = models.JSONField()
    runs = models.ManyToManyField(Run, related_name="pools", blank=True)
    # Built from each team's first N runs by precedence (and the organiser's own
    # runs); null: from every run of the campaign.
    runs_per_team = models.PositiveIntegerField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # A retired pool's assignments are closed to assessors; its judgments stay.
    retired_at = models.DateTimeField(null=True, blank=True)
    retired_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["campaign", "-created_at"]

    def __str__(self) -> str:
        return f"{self.campaign.slug}: {self.name}"

    @property
    def is_retired(self) -> bool:
        return self.retired_at is not None


class PoolAddition(models.Model):
    """Runs added to a pool after it was built (late submissions)."""

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="additions")
    runs = models.ManyToManyField(Run, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pool", "created_at"]

    def __str__(self) -> str:
        return f"{self.pool}: addition of {self.created_at:%Y-%m-%d %H:%M}"


class PoolEntry(models.Model):
    """One (topic, docno) of a pool. Unsampled entries are pooled but not judged."""

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="entries")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    # A string, not a Document key: a pool may be built before its documents
    # are loaded (and then used to load only those documents).
    docno = models.CharField(max_length=MAX_DOCNO)
    best_rank = models.PositiveIntegerField()
    n_runs = models.PositiveIntegerField()
    stratum = models.PositiveSmallIntegerField(
        help_text="1-based index into the topic's strata, the depth stratum first."
    )
    inclusion_probability = models.FloatField()
    sampled = models.BooleanField()
    # Presentation order within the topic, 1-based; null for unsampled entries.
    order = models.PositiveIntegerField(null=True)
    addition = models.ForeignKey(
        PoolAddition, null=True, blank=True, on_delete=models.CASCADE, related_name="entries"
    )
    # A revision's plan no longer pools it: out of the queue and the exports but
    # the plain qrels, its place in the queue never given to another document.
    retired = models.BooleanField(default=False)
    # The revision whose spec drew it, and so its stratum and probability (1: the build).
    revision = models.PositiveSmallIntegerField(default=1)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["pool", "topic", "docno"], name="unique_pool_entry"),
        ]
        indexes = [models.Index(fields=["pool", "topic", "order"], name="pool_entry_queue")]

    def __str__(self) -> str:
        return f"{self.topic.topic_id} {self.docno}"


class PoolRevision(models.Model):
    """A re-plan of some topics of a pool while it is judged (see `pooling.core.revisions`).

    The build is revision 1 (the pool's own spec); each revision gives its
    topics a new spec, and the manifest of an export lists them all.
    """

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveSmallIntegerField()
    spec = models.JSONField(help_text="The spec of the revised topics (PoolSpec.to_dict).")
    topics = models.JSONField(help_text="The topic ids revised.")
    reason = models.TextField(blank=True)
    summary = models.JSONField(default=list, help_text="Per topic: what the revision changed.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pool", "number"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "number"], name="unique_revision_number")
        ]

    def __str__(self) -> str:
        return f"{self.pool}: revision {self.number}"


class BudgetOverrun(models.Model):
    """An organiser's explicit go-ahead for work that costs more than the budget has left."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="overruns")
    action = models.CharField(max_length=200, help_text="What was done, e.g. 'build pool 3'.")
    cost = models.PositiveIntegerField(help_text="Judgments the action asks for.")
    remaining = models.IntegerField(help_text="Judgments the budget had left at the time.")
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    confirmed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "confirmed_at"]

    def __str__(self) -> str:
        return f"{self.campaign.slug}: {self.action} ({self.cost} > {self.remaining} left)"


class AnswerRun(models.Model):
    """A run of generated answers (the TREC 2024 RAG track's format), one answer a topic.

    Read by `pooling.core.answer_files`; a team's run (null: the organiser's upload).
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="answer_runs")
    tag = models.CharField(max_length=MAX_RUN_TAG, validators=[NoControlCharacters("run tag")])
    team = models.ForeignKey(
        Team, null=True, blank=True, on_delete=models.PROTECT, related_name="answer_runs"
    )
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    uploaded_at = models.DateTimeField(auto_now_add=True)
    original_name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64)

    class Meta:
        ordering = ["campaign", "tag"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "tag"], name="unique_answer_run_tag"),
        ]

    def __str__(self) -> str:
        return self.tag


class Answer(models.Model):
    """One run's answer to one topic: its references (segment ids) and its sentences."""

    run = models.ForeignKey(AnswerRun, on_delete=models.CASCADE, related_name="answers")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="generated_answers")
    topic_text = models.TextField(blank=True, help_text="The `topic` the file gave, as given.")
    references = models.JSONField(default=list, help_text="Segment ids, cited by index.")
    response_length = models.PositiveIntegerField()
    line = models.PositiveIntegerField(help_text="Its line in the uploaded file.")

    class Meta:
        ordering = ["run", "topic__position"]
        constraints = [models.UniqueConstraint(fields=["run", "topic"], name="unique_run_answer")]

    def __str__(self) -> str:
        return f"{self.run.tag} on {self.topic.topic_id}"


class AnswerSentence(models.Model):
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="sentences")
    position = models.PositiveIntegerField(help_text="0-based, its index in the answer.")
    text = models.TextField()

    class Meta:
        ordering = ["answer", "position"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "position"], name="unique_answer_sentence")
        ]

    def __str__(self) -> str:
        return f"{self.answer}: sentence {self.position}"


class Citation(models.Model):
    """One citation of a sentence: an index into the answer's references, and its segment."""

    sentence = models.ForeignKey(AnswerSentence, on_delete=models.CASCADE, related_name="citations")
    position = models.PositiveIntegerField(help_text="0-based, its place in the sentence.")
    reference = models.PositiveIntegerField(help_text="Index into the answer's references.")
    segment = models.CharField(max_length=MAX_DOCNO)

    class Meta:
        ordering = ["sentence", "position"]
        constraints = [
            models.UniqueConstraint(fields=["sentence", "position"], name="unique_citation")
        ]

    def __str__(self) -> str:
        return f"{self.sentence} cites {self.segment}"
