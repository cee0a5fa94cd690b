"""Writes for campaigns, topics and documents (runs: `pooling.run_services`;
pools and the budget: `pooling.pool_services`).

Each function checks its whole input with the pure readers
(`workbench.core.run_files`, `pooling.core.topic_files`, `pooling.core.document_files`)
first and raises `InputError` (file, line, reason) before storing anything; what is
stored is stored in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO, Any

from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Max

from pooling.core import document_files, topic_files
from pooling.models import (
    Campaign,
    Document,
    Topic,
)
from pooling.selectors import (
    campaign_schema_lock,
    campaign_task_kind_lock,
)
from workbench.core.problems import InputError, ProblemLog
from workbench.models import Job
from workbench.uploads import in_background

# Wraps an iterable to show progress, as tqdm does.
ProgressBar = Callable[[Iterable[Any]], Iterable[Any]]


# --------------------------------------------------------------------------
# Campaigns


def campaign_create(
    *,
    name: str,
    slug: str,
    description: str = "",
    guidelines: str = "",
    label_schema: dict[str, Any] | None = None,
    judgment_budget: int | None = None,
    budget_counts_adjudications: bool = True,
    task_kind: str = "ranked",  # TaskKind.RANKED
    created_by: Any = None,
) -> Campaign:
    campaign = Campaign(
        name=name,
        slug=slug,
        description=description,
        guidelines=guidelines,
        judgment_budget=judgment_budget,
        budget_counts_adjudications=budget_counts_adjudications,
        task_kind=task_kind,
        created_by=created_by,
    )
    if label_schema is not None:
        campaign.label_schema = label_schema
    campaign.full_clean()
    campaign.save()
    return campaign


def campaign_update(
    *,
    campaign: Campaign,
    name: str,
    description: str,
    guidelines: str,
    judgment_budget: int | None,
    label_schema: dict[str, Any],
    budget_counts_adjudications: bool = True,
    task_kind: str | None = None,
) -> Campaign:
    """Change a campaign; its label schema only while it has no judgment, its task
    kind (None: unchanged) only while it has no runs, gold files or submissions.

    Raises ValidationError (field: messages) and changes nothing when refused.
    """
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        if label_schema != campaign.label_schema:
            reason = campaign_schema_lock(campaign)
            if reason:
                raise ValidationError({"label_schema": [reason]})
        if task_kind is not None and task_kind != campaign.task_kind:
            reason = campaign_task_kind_lock(campaign)
            if reason:
                raise ValidationError({"task_kind": [reason]})
            campaign.task_kind = task_kind
        campaign.name = name
        campaign.description = description
        campaign.guidelines = guidelines
        campaign.judgment_budget = judgment_budget
        campaign.budget_counts_adjudications = budget_counts_adjudications
        campaign.label_schema = label_schema
        campaign.full_clean()
        campaign.save()
    return campaign


# --------------------------------------------------------------------------
# Topics


@dataclass(frozen=True)
class ImportResult:
    created: int
    updated: int
    skipped: int = 0

    def __str__(self) -> str:
        text = f"{self.created:,} created, {self.updated:,} updated"
        return text + (f", {self.skipped:,} skipped" if self.skipped else "")


_TOPIC_TEXT_FIELDS = ("title", "description", "narrative")


def topics_import(
    *, campaign: Campaign, data: bytes, name: str, format: str | None = None
) -> ImportResult:
    """Add the file's topics to the campaign; topics it already has are updated.

    An update changes only what the file gives: a field missing or empty in
    the file keeps its stored value, so a file of `number, query, answer`
    adds the answers without blanking descriptions and narratives.
    """
    with transaction.atomic():
        existing = {t.topic_id: t for t in campaign.topics.select_for_update()}
        topics, log = topic_files.read_topics(data, name=name, format=format, existing=existing)
        if not log.ok:
            raise InputError.from_log(log)
        next_position = (campaign.topics.aggregate(p=Max("position"))["p"] or 0) + 1
        new: list[Topic] = []
        changed: list[Topic] = []
        for record in topics:
            given = {f: getattr(record, f) for f in _TOPIC_TEXT_FIELDS if getattr(record, f)}
            topic = existing.get(record.topic_id)
            if topic is None:
                new.append(
                    Topic(
                        campaign=campaign,
                        topic_id=record.topic_id,
                        extra=record.extra,
                        position=next_position + len(new),
                        **given,
                    )
                )
                continue
            for field, value in given.items():
                setattr(topic, field, value)
            topic.extra = {**topic.extra, **record.extra}
            changed.append(topic)
        Topic.objects.bulk_create(new)
        Topic.objects.bulk_update(changed, [*_TOPIC_TEXT_FIELDS, "extra"])
    return ImportResult(created=len(new), updated=len(changed))


@dataclass(frozen=True)
class AnswersResult:
    set: int
    changed: int

    def __str__(self) -> str:
        return f"{self.set} answers set, {self.changed} of them changed"


def topic_answers_import(*, campaign: Campaign, data: bytes, name: str) -> AnswersResult:
    """Set each topic's accepted answer from a `topics_efficacy` file (`topic answer`).

    Every line is checked first, topics against the campaign's; a file with
    any problem changes nothing.
    """
    answers, log = topic_files.read_answers(data, name=name)
    with transaction.atomic():
        topics = {t.topic_id: t for t in campaign.topics.select_for_update()}
        for answer in answers:
            if answer.topic_id not in topics:
                log.add(answer.line, f"topic {answer.topic_id!r} is not a topic of this campaign")
        if not log.ok:
            raise InputError.from_log(log)
        changed = [
            topics[a.topic_id]
            for a in answers
            if topics[a.topic_id].extra.get("answer") != a.answer
        ]
        for answer in answers:
            topics[answer.topic_id].extra = {
                **topics[answer.topic_id].extra,
                "answer": answer.answer,
            }
        Topic.objects.bulk_update([topics[a.topic_id] for a in answers], ["extra"])
    return AnswersResult(set=len(answers), changed=len(changed))


# --------------------------------------------------------------------------
# Documents


def documents_import(
    *,
    campaign: Campaign,
    stream: IO[bytes],
    name: str,
    format: str | None = None,
    only: set[str] | frozenset[str] | None = None,
    batch_size: int = 2000,
    on_batch: Callable[[int], None] | None = None,
    before_commit: Callable[[ImportResult], None] | None = None,
) -> ImportResult:
    """Stream a collection into the campaign in bounded memory.

    Documents are written in batches inside one transaction; a problem
    anywhere in the file rolls every batch back, so a rejected file changes
    nothing. With `only`, just those docnos are loaded (the documents a pool
    needs from a large collection). `on_batch(n)` reports progress;
    `before_commit(result)` runs inside the transaction, last (a job records
    itself done there: `JobProgress.stored`).
    """
    head = stream.read(512)
    stream.seek(0)
    fmt = format or document_files.detect_document_format(name, head)
    log = ProblemLog(name)
    created = updated = read = 0
    with transaction.atomic():
        batch: list[Document] = []
        for record in document_files.iter_documents(stream, log, format=fmt, only=only):
            read += 1
            batch.append(
                Document(
                    campaign=campaign,
                    docno=record.docno,
                    title=record.title,
                    text=record.text,
                    url=record.url,
                )
            )
            if len(batch) >= batch_size:
                # Once the file has a problem nothing of it will stay: read on to
                # report every problem, but write no more.
                if log.ok:
                    created, updated = _flush_documents(campaign, batch, created, updated, on_batch)
                batch = []
        if not log.ok:
            raise InputError.from_log(log)
        created, updated = _flush_documents(campaign, batch, created, updated, on_batch)
        skipped = 0 if only is None else max(0, len(only) - read)
        result = ImportResult(created=created, updated=updated, skipped=skipped)
        if before_commit:
            before_commit(result)
    return result


def _flush_documents(
    campaign: Campaign,
    batch: list[Document],
    created: int,
    updated: int,
    on_batch: Callable[[int], None] | None,
) -> tuple[int, int]:
    """Upsert one batch; return the running (created, updated) counts."""
    if not batch:
        return created, updated
    docnos = [d.docno for d in batch]
    existing = set(
        Document.objects.filter(campaign=campaign, docno__in=docnos).values_list("docno", flat=True)
    )
    Document.objects.bulk_create(
        batch,
        update_conflicts=True,
        unique_fields=["campaign", "docno"],
        update_fields=["title", "text", "url"],
    )
    if on_batch:
        on_batch(len(batch))
    return created + len(batch) - len(existing), updated + len(existing)


def documents_upload(
    *, campaign: Campaign, file: UploadedFile, format: str | None = None, uploaded_by: Any = None
) -> ImportResult | Job:
    """A collection uploaded on a page or the API: imported now (`documents_import`),
    or, larger than WORKBENCH_UPLOAD_JOB_BYTES, by a background job
    (`documents_import_start`), which is returned."""
    from pooling.jobs import documents_import_start  # the jobs import this module

    if in_background(file.size or 0):
        return documents_import_start(
            campaign=campaign, file=file, format=format, uploaded_by=uploaded_by
        )
    return documents_import(
        campaign=campaign, stream=file.open("rb"), name=file.name, format=format
    )
