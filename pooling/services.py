"""Writes for campaigns, topics, documents and runs.

Each function checks its whole input with the pure readers
(`workbench.core.run_files`, `pooling.core.topic_files`, `pooling.core.document_files`)
first and raises `InputError` (file, line, reason) before storing anything; what is
stored is stored in one transaction.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
import pyarrow as pa
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile, File
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Max, ProtectedError
from django.utils import timezone
from django.utils.text import get_valid_filename

from pooling.core import document_files, topic_files
from pooling.core.budget import pool_cost
from pooling.core.spec import PoolSpec, PoolSpecError, spec_label
from pooling.core.strategies import (
    add_runs_to_pool,
    pool_from_ranked,
    pool_of_judged,
)
from pooling.errors import OverBudget, PoolBuildError, RunInUse
from pooling.models import (
    BudgetOverrun,
    Campaign,
    Document,
    Pool,
    PoolAddition,
    PoolEntry,
    PoolRevision,
    Run,
    Team,
    Topic,
)
from pooling.selectors import (
    campaign_budget,
    campaign_schema_lock,
    campaign_task_kind_lock,
    judged_pairs,
    pool_entries_frame,
    pool_revision_preview,
    pool_runs,
    ranked_runs,
)
from workbench.core import file_input, run_files
from workbench.core.problems import InputError, Problem, ProblemLog
from workbench.core.run_files import ParsedRun
from workbench.db import bulk_insert, update_by_pk
from workbench.models import Job
from workbench.uploads import in_background

# Wraps an iterable to show progress, as tqdm does.
ProgressBar = Callable[[Iterable[Any]], Iterable[Any]]


def _no_progress[T](items: Iterable[T]) -> Iterable[T]:
    return items


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


# --------------------------------------------------------------------------
# Runs


@dataclass(frozen=True)
class RunUpload:
    """A run file to import: its name, and its bytes or where it waits on disk (a
    large upload parsed by a job: `jobs.runs_import_start`)."""

    name: str
    data: bytes | Path

    def sha256(self) -> str:
        if isinstance(self.data, bytes):
            return hashlib.sha256(self.data).hexdigest()
        with open(self.data, "rb") as stream:
            return hashlib.file_digest(stream, "sha256").hexdigest()

    def as_file(self) -> File:
        """The original, for storage to copy in chunks (never whole into memory)."""
        if isinstance(self.data, bytes):
            return ContentFile(self.data)
        return File(open(self.data, "rb"))


def runs_check(
    *,
    campaign: Campaign,
    uploads: Sequence[RunUpload],
    progress: ProgressBar = _no_progress,
    replacing: Run | None = None,
) -> list[ParsedRun]:
    """Parse and validate every file against the campaign; store nothing.

    Two files of one batch with the same tag are caught too: the second
    finds the tag already used. The tag of the run being replaced is free.
    """
    if campaign.is_task:
        reason = (
            f"{campaign.name} is a {campaign.get_task_kind_display()} campaign: it takes "
            "gold files and submissions on its task page, not runs"
        )
        raise InputError([Problem(upload.name, 0, reason) for upload in uploads])
    known = set(campaign.topics.values_list("topic_id", flat=True))
    used = set(campaign.runs.values_list("tag", flat=True)) - {getattr(replacing, "tag", None)}
    checked = []
    parsed = file_input.map_in_threads(_read_upload, uploads)
    # Files are read in parallel; the campaign checks go in order, so that of
    # two files with one tag the second is the one reported.
    for run in progress(parsed):
        run_files.validate_run_for_campaign(run, known_topics=known, used_tags=used)
        if run.table.num_rows:
            used.add(run.tag)
        checked.append(run)
    return checked


def _read_upload(upload: RunUpload) -> ParsedRun:
    """A file waiting on disk is read a chunk at a time: never whole in memory."""
    if isinstance(upload.data, Path):
        return run_files.read_run_file(upload.data, name=upload.name)
    return run_files.read_run(upload.data, name=upload.name)


def runs_import(
    *,
    campaign: Campaign,
    uploads: Sequence[RunUpload],
    uploaded_by: Any = None,
    keep_valid: bool = False,
    progress: ProgressBar = _no_progress,
    before_commit: Callable[[list[Run]], None] | None = None,
) -> list[Run]:
    """Check every file, then store the runs in one transaction.

    By default the batch is all or nothing: one rejected file stores none,
    so the organiser can fix it and import the same batch again. With
    `keep_valid`, the accepted files are stored and the error lists the
    rejected ones. `before_commit` as for `runs_store`.
    """
    checked = runs_check(campaign=campaign, uploads=uploads, progress=progress)
    rejected = [run for run in checked if not run.ok]
    if rejected and not keep_valid:
        raise InputError.from_logs(*(run.problems for run in rejected))
    accepted = [(upload, run) for upload, run in zip(uploads, checked, strict=True) if run.ok]
    stored = runs_store(
        campaign=campaign, accepted=accepted, uploaded_by=uploaded_by, before_commit=before_commit
    )
    if rejected:
        raise RunsPartlyImported(stored, InputError.from_logs(*(r.problems for r in rejected)))
    return stored


def runs_upload(
    *,
    campaign: Campaign,
    files: Sequence[UploadedFile],
    uploaded_by: Any = None,
    keep_valid: bool = False,
) -> list[Run] | Job:
    """Run files uploaded on a page or the API: imported now (`runs_import`), or,
    larger together than WORKBENCH_UPLOAD_JOB_BYTES, by a background job
    (`runs_import_start`), which is returned."""
    from pooling.jobs import runs_import_start  # the jobs import this module

    if in_background(sum(f.size or 0 for f in files)):
        return runs_import_start(
            campaign=campaign, files=files, uploaded_by=uploaded_by, keep_valid=keep_valid
        )
    return runs_import(
        campaign=campaign,
        uploads=[RunUpload(f.name, f.read()) for f in files],
        uploaded_by=uploaded_by,
        keep_valid=keep_valid,
    )


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


class RunsPartlyImported(InputError):
    """With keep_valid: some runs were stored, others rejected."""

    def __init__(self, stored: list[Run], error: InputError):
        self.stored = stored
        super().__init__(error.problems, error.total, lines=str(error).splitlines())


def runs_store(
    *,
    campaign: Campaign,
    accepted: list[tuple[RunUpload, ParsedRun]],
    uploaded_by: Any,
    team: Team | None = None,
    precedence: int | None = None,
    late: bool = False,
    before_commit: Callable[[list[Run]], None] | None = None,
) -> list[Run]:
    """Store runs already checked (`runs_check`, every one ok), each a run of
    `team` (None: the organiser's) with its `precedence` and `late` mark.

    Writes each run's original and Parquet cache (in parallel threads, as
    file writes release the GIL), then its row, in one transaction. If
    anything fails, the files written are removed again. `before_commit(runs)`
    runs inside the transaction, last (a job records itself done there)."""
    runs = [
        _run_row(campaign, upload, parsed, uploaded_by, team=team, precedence=precedence, late=late)
        for upload, parsed in accepted
    ]
    saved: list[str] = []
    try:
        for paths in file_input.map_in_threads(_save_run_files, zip(runs, accepted, strict=True)):
            saved.extend(paths)
        with transaction.atomic():
            stored = Run.objects.bulk_create(runs)
            if before_commit:
                before_commit(stored)
            return stored
    except BaseException:
        for path in saved:
            default_storage.delete(path)
        raise


def _run_row(
    campaign: Campaign,
    upload: RunUpload,
    parsed: ParsedRun,
    uploaded_by: Any,
    *,
    team: Team | None,
    precedence: int | None,
    late: bool,
) -> Run:
    summary = parsed.summary()
    return Run(
        campaign=campaign,
        team=team,
        precedence=precedence,
        late=late,
        tag=parsed.tag,
        uploaded_by=uploaded_by,
        original_name=upload.name[:255],
        sha256=upload.sha256(),
        line_count=summary["lines"],
        topic_count=summary["topics"],
        depth=summary["depth"],
        documents_per_topic=summary["documents_per_topic"],
    )


def _save_run_files(item: tuple[Run, tuple[RunUpload, ParsedRun]]) -> list[str]:
    """Store one run's original file and cache; returns the storage names written."""
    run, (upload, parsed) = item
    # A file name has at most 255 bytes: a long (or multi-byte) tag is cut.
    stem = (get_valid_filename(parsed.tag) or "run").encode()[:100].decode(errors="ignore")
    written = []
    try:
        with upload.as_file() as original:
            run.original_file.save(f"{stem}.txt", original, save=False)
        written.append(run.original_file.name)
        # Written to a temporary file and copied in chunks: a large run's cache
        # is hundreds of megabytes, which need not be held in memory twice.
        with tempfile.TemporaryFile() as cache:
            run_files.write_run_cache(parsed, cache)
            cache.seek(0)
            run.cache_file.save(f"{stem}.parquet", File(cache), save=False)
        written.append(run.cache_file.name)
    except BaseException:
        for path in written:
            default_storage.delete(path)
        raise
    return written


def _check_not_pooled(run: Run) -> None:
    pools = sorted(run.pools.values_list("pk", flat=True))
    if pools:
        names = ", ".join(str(pk) for pk in pools)
        raise RunInUse(
            f"run {run.tag} is in pool {names}: a pooled run stays as it was judged; "
            "build a new pool to leave it out"
        )


@contextmanager
def _unless_kept(run: Run) -> Iterator[None]:
    """RunInUse for a run that a row above this floor keeps (a release of results
    holds the runs it scored: PROTECT), rather than the database's error."""
    try:
        yield
    except ProtectedError as error:
        holders = ", ".join(sorted({str(row) for row in error.protected_objects}))
        raise RunInUse(
            f"run {run.tag} is kept by {holders}: a released run stays as it was scored"
        ) from None


def run_delete(*, run: Run) -> None:
    """Remove a run that no pool uses, and its stored files."""
    _check_not_pooled(run)
    paths = [run.original_file.name, run.cache_file.name]
    with _unless_kept(run):
        run.delete()
    for path in paths:
        default_storage.delete(path)


def run_replace(*, run: Run, upload: RunUpload, uploaded_by: Any = None) -> Run:
    """Replace a run no pool uses by a corrected file, checked like any upload.

    The new file may keep the run's tag or bring a new one; a file with any
    problem changes nothing (InputError), nor does a pooled run (RunInUse).
    A team's run stays the team's, with its precedence and late mark.
    """
    _check_not_pooled(run)
    [parsed] = runs_check(campaign=run.campaign, uploads=[upload], replacing=run)
    if not parsed.ok:
        raise InputError.from_log(parsed.problems)
    old_paths = [run.original_file.name, run.cache_file.name]
    with _unless_kept(run), transaction.atomic():
        Run.objects.filter(pk=run.pk).delete()
        [stored] = runs_store(
            campaign=run.campaign,
            accepted=[(upload, parsed)],
            uploaded_by=uploaded_by,
            team=run.team,
            precedence=run.precedence,
            late=run.late,
        )
    # The old files go only once the new run is stored; a new file may reuse
    # a name, so keep what the new run points at.
    for path in set(old_paths) - {stored.original_file.name, stored.cache_file.name}:
        default_storage.delete(path)
    return stored


# --------------------------------------------------------------------------
# Budget


def budget_check(
    *, campaign: Campaign, cost: int, action: str, confirmed: bool, user: Any = None
) -> None:
    """Let work through that the budget covers; past it, only with `confirmed`, and
    then record who confirmed how much. Call it inside the write's transaction."""
    state = campaign_budget(campaign)
    if not state.over_by(cost):
        return
    if not confirmed:
        raise OverBudget(state, cost, action)
    BudgetOverrun.objects.create(
        campaign=campaign,
        action=action,
        cost=cost,
        remaining=state.remaining or 0,
        confirmed_by=user if getattr(user, "pk", None) else None,
    )


# --------------------------------------------------------------------------
# Pools


# Told how far a pool build is: progress(topics done, topics in the pool).
BuildProgress = Callable[[int, int], None]


def pool_build(
    *,
    campaign: Campaign,
    spec: PoolSpec,
    name: str = "",
    created_by: Any = None,
    progress: BuildProgress | None = None,
    confirm_over_budget: bool = False,
    runs_per_team: int | None = None,
    before_commit: Callable[[Pool], None] | None = None,
) -> Pool:
    """Build a pool from every run of the campaign (with `runs_per_team`, from each
    team's first N runs by precedence and the organiser's own: `selectors.pool_runs`)
    and store it in one transaction, `before_commit(pool)` last inside it (a job
    records itself done there).

    `progress(done, total)` counts the topics whose entries are ready to store,
    first with done 0 once the runs are ranked and pooled. Everything but the
    insert happens before the transaction, so that what progress says can be read
    while the build goes on (a progress written inside a transaction is seen only
    when it commits), and the transaction, which holds SQLite's write lock, is short.

    A pool asking for more new judgments than the budget has left raises
    OverBudget unless `confirm_over_budget`.
    """
    if runs_per_team is not None and runs_per_team < 1:
        raise PoolBuildError(f"runs per team must be 1 or more, not {runs_per_team}")
    runs = pool_runs(campaign, runs_per_team=runs_per_team)
    label = spec_label(spec) + (f", first {runs_per_team} run(s) per team" if runs_per_team else "")
    ranked = ranked_runs(campaign, max_depth=spec.max_depth, runs=runs)
    entries = pool_from_ranked(ranked, spec)
    cost = pool_cost(entries, judged_pairs(campaign))
    if spec.is_adaptive:
        # Candidates only: each is drawn when an assessor asks (judging.adaptive).
        entries = entries.assign(sampled=False, order=pd.NA)
        cost = min(cost, spec.budget or 0)
    topics = dict(campaign.topics.values_list("topic_id", "pk"))
    rows = _entry_rows(entries, topics, progress=progress)
    with transaction.atomic():
        budget_check(
            campaign=campaign,
            cost=cost,
            action=f"building pool {name or label}",
            confirmed=confirm_over_budget,
            user=created_by,
        )
        pool = Pool.objects.create(
            campaign=campaign,
            name=name or label,
            spec=spec.to_dict(),
            runs_per_team=runs_per_team,
            created_by=created_by,
        )
        pool.runs.set(runs)
        _insert_entries(pool, rows, addition=None)
        if before_commit:
            before_commit(pool)
    return pool


def pool_from_judged(
    *, campaign: Campaign, pairs: pd.DataFrame, name: str, source: str, created_by: Any = None
) -> Pool:
    """A pool of (query_id, doc_id) pairs judged elsewhere, as `strategies.pool_of_judged`
    makes it, with a spec that says where they came from (`source`).

    Called inside the transaction that stores those judgments, so that a
    rejected import leaves no pool behind.
    """
    name = name.strip()
    if not name:
        raise PoolBuildError("give the pool a name")
    if campaign.pools.filter(name=name).exists():
        raise PoolBuildError(f"campaign {campaign.slug} already has a pool named {name!r}")
    spec = PoolSpec(source=source, order="docno")
    topics = dict(campaign.topics.values_list("topic_id", "pk"))
    with transaction.atomic():
        pool = Pool.objects.create(
            campaign=campaign, name=name, spec=spec.to_dict(), created_by=created_by
        )
        _store_entries(pool, pool_of_judged(pairs), topics, addition=None)
    return pool


def pool_add_runs(
    *, pool: Pool, runs: Sequence[Run], created_by: Any = None, confirm_over_budget: bool = False
) -> PoolAddition:
    """Add late runs to a depth-k pool: only their new documents, nothing else changes.

    New documents beyond what the budget has left raise OverBudget unless
    `confirm_over_budget`.
    """
    runs = [run for run in runs if run.campaign_id == pool.campaign_id]
    if not runs:
        raise PoolBuildError("choose at least one run of this pool's campaign to add")
    already = set(pool.runs.values_list("pk", flat=True))
    repeated = [run.tag for run in runs if run.pk in already]
    if repeated:
        raise PoolBuildError(f"already in the pool: {', '.join(repeated)}")
    spec = PoolSpec.from_dict(pool.spec)
    existing = pool_entries_frame(pool)
    late = pa.concat_tables(run_files.read_run_cache(run.cache_file.path) for run in runs)
    try:
        new = add_runs_to_pool(existing, late, spec)
    except PoolSpecError as error:
        raise PoolBuildError(str(error)) from None
    topics = dict(pool.campaign.topics.values_list("topic_id", "pk"))
    cost = pool_cost(new, judged_pairs(pool.campaign))
    with transaction.atomic():
        budget_check(
            campaign=pool.campaign,
            cost=cost,
            action=f"adding {', '.join(run.tag for run in runs)} to pool {pool.pk}",
            confirmed=confirm_over_budget,
            user=created_by,
        )
        addition = PoolAddition.objects.create(pool=pool, created_by=created_by)
        addition.runs.set(runs)
        pool.runs.add(*runs)
        _store_entries(pool, new, topics, addition=addition)
    return addition


def pool_revise(
    *,
    pool: Pool,
    spec: PoolSpec,
    topics: Sequence[str],
    reason: str = "",
    created_by: Any = None,
    confirm_over_budget: bool = False,
    before_commit: Callable[[PoolRevision], None] | None = None,
) -> PoolRevision:
    """Re-plan `topics` of a pool being judged with `spec`: a new revision of the same
    pool (`pooling.core.revisions`). Queues change in place, assignments carry over, and
    nothing judged is lost. New judgments beyond what the budget has left raise
    OverBudget unless `confirm_over_budget`. `before_commit(revision)` runs
    inside the transaction, last (a job records itself done there).
    """
    if spec.source or PoolSpec.from_dict(pool.spec).source:
        raise PoolBuildError("a pool of imported judgments is not built from runs: no re-plan")
    if spec.is_adaptive or PoolSpec.from_dict(pool.spec).is_adaptive:
        raise PoolBuildError(
            "an adaptive pool is re-planned by its budget alone (pool_replan --budget N)"
        )
    revision = pool_revision_preview(pool, spec=spec, topics=topics)
    topic_pk = dict(pool.campaign.topics.values_list("topic_id", "pk"))
    with transaction.atomic():
        number = (pool.revisions.select_for_update().aggregate(n=Max("number"))["n"] or 1) + 1
        budget_check(
            campaign=pool.campaign,
            cost=revision.cost,
            action=f"re-planning {len(topics)} topic(s) of pool {pool.pk}",
            confirmed=confirm_over_budget,
            user=created_by,
        )
        _apply_revision(pool, revision.entries, topic_pk, number)
        stored = PoolRevision.objects.create(
            pool=pool,
            number=number,
            spec=spec.to_dict(),
            topics=list(topics),
            reason=reason.strip(),
            summary=revision.summary.to_dict(orient="records"),
            created_by=created_by if getattr(created_by, "pk", None) else None,
        )
        if before_commit:
            before_commit(stored)
    return stored


def pool_budget_set(
    *, pool: Pool, budget: int, created_by: Any = None, confirm_over_budget: bool = False
) -> Pool:
    """Raise or lower an adaptive pool's budget (its re-plan): topics draw up to their
    new share (`PoolSpec.topic_budgets`); what is drawn or judged stays. A raise
    beyond what the campaign's budget has left raises OverBudget unless confirmed."""
    spec = PoolSpec.from_dict(pool.spec)
    if not spec.is_adaptive:
        raise PoolBuildError(f"pool {pool.pk} is not adaptive: re-plan it with a spec")
    try:
        new = replace(spec, budget=budget)
    except PoolSpecError as error:
        raise PoolBuildError(str(error)) from None
    with transaction.atomic():
        locked = Pool.objects.select_for_update().get(pk=pool.pk)
        budget_check(
            campaign=pool.campaign,
            cost=max(budget - (spec.budget or 0), 0),
            action=f"raising the budget of pool {pool.pk} to {budget}",
            confirmed=confirm_over_budget,
            user=created_by,
        )
        locked.spec = new.to_dict()
        locked.save(update_fields=["spec"])
    pool.spec = locked.spec
    return pool


_REVISED_FIELDS = (
    "best_rank",
    "n_runs",
    "stratum",
    "inclusion_probability",
    "sampled",
    "order",
    "retired",
    "revision",
)


def _apply_revision(
    pool: Pool, entries: pd.DataFrame, topic_pk: dict[str, int], number: int
) -> None:
    """Store the revised topics' entries: update those that exist and changed (one
    statement per batch, `update_by_pk`), create the others; compared as frames."""
    fields = list(_REVISED_FIELDS)
    plan = entries.assign(topic=entries["query_id"].map(topic_pk))[["topic", "doc_id", *fields]]
    stored = pd.DataFrame(
        list(
            PoolEntry.objects.select_for_update()
            .filter(pool=pool, topic_id__in=plan["topic"].unique().tolist())
            .values_list("pk", "topic_id", "docno", *fields)
        ),
        columns=["pk", "topic", "doc_id", *(f"{field}_stored" for field in fields)],
    ).astype({"pk": "int64", "topic": "int64", "doc_id": object})
    both = plan.merge(stored, on=["topic", "doc_id"], how="left")
    exists = both["pk"].notna()
    differs = pd.Series(False, index=both.index)
    for field in fields:
        new, old = both[field], both[f"{field}_stored"]
        differs |= ~((new == old).fillna(False).astype(bool) | (new.isna() & old.isna()))
    changed = both[exists & differs]
    update_by_pk(
        PoolEntry,
        zip(
            changed["pk"].astype("int64").tolist(),
            *(_python_values(changed[field]) for field in fields),
            strict=True,
        ),
        fields,
    )
    added = both[~exists]
    PoolEntry.objects.bulk_create(
        (
            PoolEntry(
                pool=pool, topic_id=topic, docno=docno, **dict(zip(fields, values, strict=True))
            )
            for topic, docno, *values in zip(
                added["topic"].tolist(),
                added["doc_id"].tolist(),
                *(_python_values(added[field]) for field in fields),
                strict=True,
            )
        ),
        batch_size=2000,
    )


def _python_values(column: pd.Series) -> list[Any]:
    """A column's values as Python ints, floats and bools, None where missing."""
    return [None if pd.isna(value) else value for value in column.astype(object).tolist()]


def pool_retire(*, pool: Pool, retired_by: Any = None) -> Pool:
    """Close the pool: its assignments leave the assessors' lists; its judgments stay
    (they belong to assessor, topic and docno, and count for any other pool)."""
    if not pool.is_retired:
        pool.retired_at, pool.retired_by = timezone.now(), retired_by
        pool.save(update_fields=["retired_at", "retired_by"])
    return pool


def pool_reopen(*, pool: Pool) -> Pool:
    """Undo a retirement: the assignments come back as they were."""
    pool.retired_at, pool.retired_by = None, None
    pool.save(update_fields=["retired_at", "retired_by"])
    return pool


def _store_entries(
    pool: Pool, entries: pd.DataFrame, topics: dict[str, int], *, addition: PoolAddition | None
) -> None:
    _insert_entries(pool, _entry_rows(entries, topics), addition=addition)


# The columns of `_entry_rows`, then the pool and the addition `_insert_entries` adds.
_ENTRY_FIELDS = (
    "topic_id",
    "docno",
    "best_rank",
    "n_runs",
    "stratum",
    "inclusion_probability",
    "sampled",
    "order",
)


def _entry_rows(
    entries: pd.DataFrame, topics: dict[str, int], *, progress: BuildProgress | None = None
) -> list[list[tuple[Any, ...]]]:
    """A pool frame's entries as rows to insert (`_ENTRY_FIELDS`, Python values), made
    a topic at a time in the frame's order (rows of a topic together, as the pool
    frame keeps them); `progress(done, total)` counts the topics made."""
    if not len(entries):
        return []
    query_ids = entries["query_id"].to_numpy()
    columns = [
        entries["query_id"].map(topics).to_numpy(),
        entries["doc_id"].to_numpy(),
        *(entries[c].to_numpy(dtype=np.int64) for c in ("best_rank", "n_runs", "stratum")),
        entries["inclusion_probability"].to_numpy(dtype=np.float64),
        entries["sampled"].to_numpy(dtype=bool),
        entries["order"].astype("Int64").to_numpy(dtype=object, na_value=None),
    ]
    starts = np.flatnonzero(np.r_[True, query_ids[1:] != query_ids[:-1]])
    ends = np.r_[starts[1:], len(entries)]
    total = len(starts)
    if progress is not None:
        progress(0, total)
    rows = []
    for done, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True), 1):
        values = [column[start:end].tolist() for column in columns]
        rows.append(list(zip(*values, strict=True)))
        if progress is not None:
            progress(done, total)
    return rows


def _insert_entries(
    pool: Pool, rows: Iterable[Sequence[tuple[Any, ...]]], *, addition: PoolAddition | None
) -> None:
    """Insert the rows of `_entry_rows` as the pool's entries (`workbench.db.bulk_insert`:
    bulk_create's per-row work made storing a large pool take most of its build)."""
    extra = (pool.pk, addition.pk if addition is not None else None)
    bulk_insert(
        PoolEntry,
        (*_ENTRY_FIELDS, "pool_id", "addition_id"),
        (row + extra for topic_rows in rows for row in topic_rows),
    )
