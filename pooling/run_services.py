"""Runs: check, import, upload, store, delete and replace a campaign's submitted runs."""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.files.base import ContentFile, File
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import ProtectedError
from django.utils.text import get_valid_filename

from pooling.errors import RunInUse
from pooling.models import (
    Campaign,
    Run,
    Team,
)
from pooling.services import ProgressBar
from workbench.core import file_input, run_files
from workbench.core.problems import InputError, Problem
from workbench.core.run_files import ParsedRun
from workbench.models import Job
from workbench.uploads import in_background


def _no_progress[T](items: Iterable[T]) -> Iterable[T]:
    return items


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
