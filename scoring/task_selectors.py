"""Reads for task campaigns (CodiEsp, SciFact): the stored files scored by
`scoring.core.tasks.subtasks`, as the pages and the API show them.

A submission's scores are cached under its row and its gold's: a gold is
replaced by a new row and a submission is never changed, so a cached value
never goes stale.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.cache import cache

from pooling.models import Campaign
from scoring.core.tasks import subtasks
from scoring.core.tasks.line_blocks import Progress
from scoring.core.tasks.subtasks import NamedFile, Scores, Subtask
from workbench import uploads

if TYPE_CHECKING:
    from django.db.models.fields.files import FieldFile

    from scoring.models import TaskGold, TaskSubmission

CACHE_SECONDS = 3600


@contextmanager
def stored_file(field: FieldFile, name: str) -> Iterator[NamedFile]:
    """A stored file, open for the readers (which read it a block at a time)."""
    with field.open("rb") as stream:
        yield NamedFile(name, stream)


def task_gold_read(gold: TaskGold) -> subtasks.Gold:
    """The stored gold (and valid codes) read again."""
    task_subtask = subtasks.subtask(gold.campaign.task_kind, gold.subtask)
    with ExitStack() as files:
        data = files.enter_context(stored_file(gold.file, gold.original_name))
        codes = (
            [files.enter_context(stored_file(gold.codes_file, "codes.tsv"))]
            if gold.codes_file
            else []
        )
        return subtasks.read_gold(task_subtask, data, codes)


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


def _gold(campaign: Campaign, subtask: Subtask) -> TaskGold | None:
    return campaign.task_golds.select_related("campaign").filter(subtask=subtask.code).first()


def task_scores(
    *,
    campaign: Campaign,
    subtask: Subtask,
    sort: str = "",
    scored: Mapping[int, Scores] | None = None,
) -> TaskScores:
    """Every submission of the subtask scored (here, or `scored`: what a job stored);
    sorted by `sort` (default: best first by the subtask's ranking measure). No rows
    while the subtask has no gold."""
    sort = sort or subtasks.default_sort(subtask)
    gold = _gold(campaign, subtask)
    if gold is None:
        return TaskScores(subtask, None, [], sort)
    submissions = list(campaign.task_submissions.filter(subtask=subtask.code))
    if scored is None:
        scorer = SubmissionScorer(gold)
        rows = [ScoredSubmission(s, scorer.scores(s)) for s in submissions]
    else:
        rows = [ScoredSubmission(s, scored[s.pk]) for s in submissions if s.pk in scored]
    ordered = subtasks.sort_rows(rows, sort, values=lambda row: row.scores.measures)
    return TaskScores(subtask, gold, ordered, sort)


@dataclass(frozen=True)
class SubmissionDocuments:
    """One submission's scores and each document's values, in the order asked."""

    submission: TaskSubmission
    scores: Scores
    rows: list[tuple[str, dict[str, float]]]
    sort: str


def submission_documents(
    *, submission: TaskSubmission, sort: str = "", scores: Scores | None = None
) -> SubmissionDocuments:
    """The drill-down: each clinical case's or claim's values (default: in the
    scorer's order, cases sorted and claims as the gold lists them), scored here
    unless `scores` (a job's) are given."""
    task_subtask = subtasks.subtask(submission.campaign.task_kind, submission.subtask)
    sort = sort or subtasks.default_sort(task_subtask, documents=True)
    if scores is None:
        gold = submission.campaign.task_golds.select_related("campaign").get(
            subtask=submission.subtask
        )
        scores = SubmissionScorer(gold).scores(submission)
    rows = subtasks.sort_rows(list(scores.documents.items()), sort, values=lambda row: row[1])
    return SubmissionDocuments(submission, scores, rows, sort)


class SubmissionScorer:
    """Scores submissions against one gold, reading the gold only on a cache miss."""

    def __init__(self, gold: TaskGold):
        self.gold = gold
        self._checked: subtasks.Gold | None = None

    def scores(self, submission: TaskSubmission, progress: Progress | None = None) -> Scores:
        key = f"task-scores:{self.gold.pk}:{self.gold.sha256}:{submission.pk}:{submission.sha256}"
        found: Any = cache.get(key)
        if found is None:
            if self._checked is None:
                self._checked = task_gold_read(self.gold)
            with stored_file(submission.file, submission.original_name) as file:
                found = subtasks.score(self._checked, file, progress=progress)
            cache.set(key, found, timeout=CACHE_SECONDS)
        return found


# --------------------------------------------------------------------------
# Scored in a request, or by a job


def submission_bytes(campaign: Campaign, subtask: Subtask) -> int:
    """What scoring every submission of the subtask reads: their files' sizes."""
    return sum(s.file.size for s in campaign.task_submissions.filter(subtask=subtask.code))


def scores_in_request(campaign: Campaign, subtask: Subtask) -> bool:
    """Whether a request scores the subtask's submissions itself: the decided rule for
    uploads (`uploads.in_background`) over the bytes of all its submissions. Larger
    ones are scored by a job (`scores_params`), whose result the pages and the API
    show."""
    return not uploads.in_background(submission_bytes(campaign, subtask))


def scores_params(campaign: Campaign, subtask: Subtask) -> dict[str, Any]:
    """The params of the job that scores the subtask as it is now: its `version`
    changes with the gold and with any submission added or deleted (files never
    change under a row)."""
    gold = _gold(campaign, subtask)
    parts = [f"gold {gold.pk} {gold.sha256}" if gold else "no gold"]
    for pk, sha256 in (
        campaign.task_submissions.filter(subtask=subtask.code)
        .order_by("pk")
        .values_list("pk", "sha256")
    ):
        parts.append(f"{pk} {sha256}")
    version = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
    return {"campaign": campaign.pk, "subtask": subtask.code, "version": version}


def scores_from_job(subtask: Subtask, result: Mapping[str, Any]) -> dict[int, Scores]:
    """What a scores job stored (`scoring.jobs.task_scores`), by submission id."""
    return {int(pk): Scores.from_dict(subtask, data) for pk, data in result["submissions"].items()}
