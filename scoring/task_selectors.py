"""Reads for task campaigns (CodiEsp, SciFact): the stored files scored by
`scoring.core.tasks.subtasks`, as the pages and the API show them.

A submission's scores are cached under its row and its gold's: a gold is
replaced by a new row and a submission is never changed, so a cached value
never goes stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.cache import cache

from pooling.models import Campaign
from scoring.core.tasks import subtasks
from scoring.core.tasks.subtasks import NamedFile, Scores, Subtask

if TYPE_CHECKING:
    from django.db.models.fields.files import FieldFile

    from scoring.models import TaskGold, TaskSubmission

CACHE_SECONDS = 3600


def stored_file(field: FieldFile) -> bytes:
    with field.open("rb") as stream:
        return stream.read()


def task_gold_read(gold: TaskGold) -> subtasks.Gold:
    """The stored gold (and valid codes) read again."""
    task_subtask = subtasks.subtask(gold.campaign.task_kind, gold.subtask)
    codes = [NamedFile("codes.tsv", stored_file(gold.codes_file))] if gold.codes_file else []
    return subtasks.read_gold(
        task_subtask, NamedFile(gold.original_name, stored_file(gold.file)), codes
    )


@dataclass(frozen=True)
class ScoredSubmission:
    submission: TaskSubmission
    scores: Scores


@dataclass(frozen=True)
class TaskScores:
    """A subtask's submissions scored against its gold, in the order asked."""

    subtask: Subtask
    gold: TaskGold | None
    rows: list[ScoredSubmission]
    sort: str


def campaign_subtasks(campaign: Campaign) -> tuple[Subtask, ...]:
    return subtasks.SUBTASKS.get(campaign.task_kind, ())


def task_scores(*, campaign: Campaign, subtask: Subtask, sort: str = "") -> TaskScores:
    """Every submission of the subtask scored; sorted by `sort` (default: best first
    by the subtask's ranking measure). No rows while the subtask has no gold."""
    sort = sort or subtasks.default_sort(subtask)
    gold = campaign.task_golds.select_related("campaign").filter(subtask=subtask.code).first()
    if gold is None:
        return TaskScores(subtask, None, [], sort)
    submissions = list(campaign.task_submissions.filter(subtask=subtask.code))
    scorer = _Scorer(gold)
    rows = [ScoredSubmission(s, scorer.scores(s)) for s in submissions]
    ordered = subtasks.sort_rows(rows, sort, values=lambda row: row.scores.measures)
    return TaskScores(subtask, gold, ordered, sort)


@dataclass(frozen=True)
class SubmissionDocuments:
    """One submission's scores and each document's values, in the order asked."""

    submission: TaskSubmission
    scores: Scores
    rows: list[tuple[str, dict[str, float]]]
    sort: str


def submission_documents(*, submission: TaskSubmission, sort: str = "") -> SubmissionDocuments:
    """The drill-down: each clinical case's or claim's values (default: in the
    scorer's order, cases sorted and claims as the gold lists them)."""
    task_subtask = subtasks.subtask(submission.campaign.task_kind, submission.subtask)
    sort = sort or subtasks.default_sort(task_subtask, documents=True)
    gold = submission.campaign.task_golds.select_related("campaign").get(subtask=submission.subtask)
    scores = _Scorer(gold).scores(submission)
    rows = subtasks.sort_rows(list(scores.documents.items()), sort, values=lambda row: row[1])
    return SubmissionDocuments(submission, scores, rows, sort)


class _Scorer:
    """Scores submissions against one gold, reading the gold only on a cache miss."""

    def __init__(self, gold: TaskGold):
        self.gold = gold
        self._checked: subtasks.Gold | None = None

    def scores(self, submission: TaskSubmission) -> Scores:
        key = f"task-scores:{self.gold.pk}:{self.gold.sha256}:{submission.pk}:{submission.sha256}"
        found: Any = cache.get(key)
        if found is None:
            if self._checked is None:
                self._checked = task_gold_read(self.gold)
            file = NamedFile(submission.original_name, stored_file(submission.file))
            found = subtasks.score(self._checked, subtasks.read_submission(self._checked, file))
            cache.set(key, found, timeout=CACHE_SECONDS)
        return found
