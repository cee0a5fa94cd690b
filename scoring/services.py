"""Writes of scoring: task campaigns' gold files and submissions (CodiEsp, SciFact),
and releases (a pool's results frozen, version by version).

Every file is checked whole by the task's own readers (`scoring.core.tasks.subtasks`),
a block of lines at a time, first; any problem raises `InputError` (file, line,
reason) and nothing is stored. Files are kept as uploaded, as runs are, and a row that fails to save
takes its files with it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import PurePath
from typing import Any, BinaryIO

from django.core.exceptions import SuspiciousFileOperation, ValidationError
from django.core.files.base import ContentFile, File
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.text import get_valid_filename

from pooling.models import Campaign, Pool
from scoring import release_selectors, release_snapshot_selectors, selectors
from scoring.core.analysis.leaderboard import Options as LeaderboardOptions
from scoring.core.tasks import subtasks
from scoring.core.tasks.line_blocks import BLOCK_BYTES
from scoring.core.tasks.subtasks import NamedFile, Subtask
from scoring.models import (
    MAX_SUBMISSION_NAME,
    Release,
    ReleaseRun,
    ReleaseWithdrawal,
    TaskGold,
    TaskSubmission,
)
from scoring.task_selectors import stored_file, task_gold_read
from workbench.core.id_limits import control_problem
from workbench.core.problems import InputError, Problem
from workbench.models import Job


@dataclass(frozen=True)
class TaskUpload:
    """An uploaded file: its name and its bytes, or the uploaded file itself (which
    is read a block at a time, never whole: it may be a large submission)."""

    name: str
    data: bytes | BinaryIO

    def named(self) -> NamedFile:
        return NamedFile(self.name, self.data)

    def sha256(self) -> str:
        if isinstance(self.data, bytes):
            return hashlib.sha256(self.data).hexdigest()
        digest = hashlib.sha256()
        self.data.seek(0)
        while block := self.data.read(BLOCK_BYTES):
            digest.update(block)
        return digest.hexdigest()

    def content(self) -> File:
        """What storage saves: the bytes, or the file (copied a chunk at a time)."""
        if isinstance(self.data, bytes):
            return ContentFile(self.data)
        self.data.seek(0)
        return self.data if isinstance(self.data, File) else File(self.data)


def campaign_subtask(campaign: Campaign, code: str) -> Subtask:
    """The campaign's subtask `code`; ValidationError when its task has none such."""
    try:
        return subtasks.subtask(campaign.task_kind, code)
    except KeyError:
        known = ", ".join(s.code for s in subtasks.SUBTASKS.get(campaign.task_kind, ()))
        raise ValidationError(
            {"subtask": [f"{campaign.name} has no subtask {code!r} (its subtasks: {known})"]}
            if known
            else {"subtask": [f"{campaign.name} is a ranked retrieval campaign: no subtasks"]}
        ) from None


def task_gold_upload(
    *,
    campaign: Campaign,
    subtask: str,
    gold: TaskUpload,
    codes: Sequence[TaskUpload] = (),
    uploaded_by: Any = None,
) -> TaskGold:
    """Store a subtask's gold (and CodiEsp's valid-code lists), replacing the one before.

    A SciFact gold must also fit every submission already stored for it (each
    answers every gold claim): one that does not is rejected with the stored
    submissions' problems.
    """
    task_subtask = campaign_subtask(campaign, subtask)
    checked = subtasks.read_gold(task_subtask, gold.named(), [c.named() for c in codes])
    with transaction.atomic():
        old = TaskGold.objects.select_for_update().filter(campaign=campaign, subtask=subtask)
        stored = list(campaign.task_submissions.select_for_update().filter(subtask=subtask))
        if task_subtask.task == subtasks.SCIFACT and stored:
            with ExitStack() as files:
                subtasks.read_all(
                    [
                        partial(subtasks.read_submission, checked, files.enter_context(_stored(s)))
                        for s in stored
                    ]
                )
        old_paths = [path for row in old for path in (row.file.name, row.codes_file.name) if path]
        old.delete()
        row = TaskGold(
            campaign=campaign,
            subtask=subtask,
            original_name=gold.name[:255],
            sha256=gold.sha256(),
            document_count=checked.documents,
            codes_names=[c.name for c in codes],
            code_count=len(checked.codes),
            uploaded_by=uploaded_by,
        )
        with _files_removed_on_failure() as written:
            row.file.save(_file_name(gold.name, "gold"), gold.content(), save=False)
            written.append(row.file.name)
            if task_subtask.takes_codes:
                text = "".join(f"{code}\n" for code in sorted(checked.codes))
                row.codes_file.save("codes.tsv", ContentFile(text.encode()), save=False)
                written.append(row.codes_file.name)
            row.save()
    # The old files go once the new gold is stored; a new file may reuse a name.
    for path in set(old_paths) - {row.file.name, row.codes_file.name}:
        default_storage.delete(path)
    return row


def _stored(submission: TaskSubmission) -> AbstractContextManager[NamedFile]:
    name = f"{submission.original_name} (stored submission {submission.name})"
    return stored_file(submission.file, name)


def task_submission_upload(
    *,
    campaign: Campaign,
    subtask: str,
    upload: TaskUpload,
    name: str = "",
    uploaded_by: Any = None,
) -> TaskSubmission:
    """Check a submission against its subtask's gold and store it under `name`
    (by default its file name without the extension), a name not yet used there."""
    task_subtask = campaign_subtask(campaign, subtask)
    name = name.strip() or PurePath(upload.name).stem or upload.name
    gold = TaskGold.objects.filter(campaign=campaign, subtask=subtask).first()
    if gold is None:
        raise _refused(upload, f"no gold for {task_subtask.label} yet: upload the gold first")
    if len(name) > MAX_SUBMISSION_NAME:
        raise _refused(upload, f"the name is {len(name)} characters, over {MAX_SUBMISSION_NAME}")
    problem = control_problem("submission name", name)
    if problem:
        raise _refused(upload, problem)
    if campaign.task_submissions.filter(subtask=subtask, name=name).exists():
        raise _refused(
            upload,
            f"a submission named {name!r} is already stored for {task_subtask.label}: "
            "delete it first, or give this one another name",
        )
    checked = subtasks.read_submission(task_gold_read(gold), upload.named())
    row = TaskSubmission(
        campaign=campaign,
        subtask=subtask,
        name=name,
        original_name=upload.name[:255],
        sha256=upload.sha256(),
        document_count=checked.documents,
        uploaded_by=uploaded_by,
    )
    with _files_removed_on_failure() as written:
        row.file.save(_file_name(upload.name, "submission"), upload.content(), save=False)
        written.append(row.file.name)
        row.save()
    return row


def task_submission_replace(
    *, submission: TaskSubmission, upload: TaskUpload, uploaded_by: Any = None
) -> TaskSubmission:
    """Replace a submission's file in one step, keeping its name and subtask: the new
    file is checked against the subtask's gold first, and a refused one (InputError)
    changes nothing; the old file goes only once the new one is stored."""
    gold = TaskGold.objects.filter(campaign=submission.campaign, subtask=submission.subtask).first()
    if gold is None:
        raise _refused(upload, f"no gold for {submission.get_subtask_display()}: upload it first")
    checked = subtasks.read_submission(task_gold_read(gold), upload.named())
    old_path = submission.file.name
    with _files_removed_on_failure() as written, transaction.atomic():
        row = TaskSubmission.objects.select_for_update().get(pk=submission.pk)
        row.file.save(_file_name(upload.name, "submission"), upload.content(), save=False)
        written.append(row.file.name)
        row.original_name = upload.name[:255]
        row.sha256 = upload.sha256()
        row.document_count = checked.documents
        row.uploaded_by = uploaded_by if getattr(uploaded_by, "pk", None) else None
        row.uploaded_at = timezone.now()
        row.save()
    if old_path != row.file.name:
        default_storage.delete(old_path)
    return row


def task_submission_delete(*, submission: TaskSubmission) -> None:
    """Remove a submission and its stored file."""
    path = submission.file.name
    submission.delete()
    default_storage.delete(path)


def _refused(upload: TaskUpload, reason: str) -> InputError:
    return InputError([Problem(upload.name, 0, reason)])


def _file_name(name: str, fallback: str) -> str:
    """A storage name made from an uploaded file's name; a file name has at most 255
    bytes, so a long (or multi-byte) one is cut."""
    try:
        valid = get_valid_filename(PurePath(name).name)
    except SuspiciousFileOperation:  # nothing usable in it
        valid = fallback
    return valid.encode()[:100].decode(errors="ignore") or fallback


@contextmanager
def _files_removed_on_failure() -> Iterator[list[str]]:
    """The storage names written inside the block are deleted if it fails."""
    written: list[str] = []
    try:
        yield written
    except BaseException:
        for path in written:
            default_storage.delete(path)
        raise


# --------------------------------------------------------------------------
# Releases: a pool's results frozen, version by version


def release_create(
    *,
    pool: Pool,
    measure: str,
    measures: Sequence[str] | None = None,
    options: LeaderboardOptions | None = None,
    labels: str = selectors.HUMAN_LABELS,
    machine: str | None = None,
    reason: str = "",
    released_by: Any = None,
    progress: Any = None,
    before_commit: Callable[[Release], None] | None = None,
) -> Release:
    """Release the pool's results as they are now: the next version of the pool
    (1, 2, ...), written once and never changed (`release_snapshot_selectors.release_snapshot`
    says what it holds). The files are stored under the release's folder with
    their SHA-256 in the row; a failure stores nothing (no row, no file).
    `before_commit(release)` runs inside the transaction, last (a job records
    itself done there)."""
    snapshot = release_snapshot_selectors.release_snapshot(
        pool=pool,
        measure=measure,
        measures=measures,
        options=options,
        labels=labels,
        machine=machine,
        progress=progress,
    )
    released_at = timezone.now()
    workbench = release_snapshot_selectors.workbench_version()
    written: list[str] = []
    try:
        with transaction.atomic():
            list(Pool.objects.select_for_update().filter(pk=pool.pk).values_list("pk"))
            version = (pool.releases.aggregate(last=Max("version"))["last"] or 0) + 1
            documents = release_snapshot_selectors.release_documents(
                snapshot,
                version=version,
                released_at=released_at,
                released_by=released_by,
                reason=reason,
                workbench=workbench,
            )
            files = {**snapshot.files, **documents}
            release = Release.objects.create(
                pool=pool,
                version=version,
                measure=measure,
                measures=snapshot.measures,
                leaderboard_options=snapshot.options,
                label_policy=snapshot.label_policy,
                pool_spec=snapshot.pool_spec,
                pool_revisions=snapshot.pool_revisions,
                judged_topics=snapshot.judged_topics,
                left_out_topics=snapshot.left_out_topics,
                leaderboard=snapshot.leaderboard,
                directory=f"releases/{pool.campaign.slug}/pool{pool.pk}/v{version}",
                files=release_snapshot_selectors.described_files(files),
                workbench=workbench,
                state_as_of=datetime.fromisoformat(snapshot.state_as_of),
                reason=reason,
                released_by=released_by if getattr(released_by, "pk", None) else None,
                released_at=released_at,
            )
            ReleaseRun.objects.bulk_create(
                ReleaseRun(
                    release=release,
                    run=item.run,
                    tag=item.run.tag,
                    file_name=item.file_name,
                    sha256=item.run.sha256,
                    team=item.team,
                    team_name=item.team.name if item.team else "",
                    means=item.means,
                    missing_topics=item.missing_topics,
                )
                for item in snapshot.runs
            )
            # The folder is this version's: a committed release of it would have
            # made the row above fail. What an earlier attempt left there goes.
            for name, data in files.items():
                path = f"{release.directory}/{name}"
                default_storage.delete(path)
                written.append(default_storage.save(path, ContentFile(data)))
                if written[-1] != path:
                    raise release_selectors.ReleaseError(f"{path} could not be written")
            if before_commit:
                before_commit(release)
    except IntegrityError:
        _delete(written)
        raise release_selectors.ReleaseError(
            f"another release of pool {pool.pk} was made at the same time: release again"
        ) from None
    except BaseException:
        _delete(written)
        raise
    return release


def _delete(paths: Sequence[str]) -> None:
    for path in paths:
        default_storage.delete(path)


def release_withdraw(*, release: Release, reason: str, withdrawn_by: Any = None) -> Release:
    """Hide a release from the teams, saying why; it stays in the record as it was.
    ReleaseError without a reason or for a release withdrawn already."""
    reason = reason.strip()
    if not reason:
        raise release_selectors.ReleaseError("say why the release is withdrawn")
    try:
        with transaction.atomic():
            ReleaseWithdrawal.objects.create(
                release=release,
                reason=reason,
                withdrawn_by=withdrawn_by if getattr(withdrawn_by, "pk", None) else None,
            )
    except IntegrityError:
        raise release_selectors.ReleaseError(
            f"release {release.version} of pool {release.pool_id} is withdrawn already"
        ) from None
    return Release.objects.select_related("withdrawal").get(pk=release.pk)


def release_start(
    *,
    pool: Pool,
    measure: str,
    measures: Sequence[str] | None = None,
    options: LeaderboardOptions | None = None,
    labels: str = selectors.HUMAN_LABELS,
    machine: str | None = None,
    reason: str = "",
    released_by: Any = None,
) -> Release | Job:
    """Release the pool's results here when scoring them fits in a request
    (WORKBENCH_SYNC_SCORING_CELLS), else in a job (`jobs.release_make_start`).
    A request it cannot make is refused first (ReleaseError, NothingJudged)."""
    release_snapshot_selectors.release_refusal(
        pool=pool, measure=measure, measures=measures, labels=labels, machine=machine
    )
    options = options or LeaderboardOptions()
    if selectors.scores_in_request(pool):
        return release_create(
            pool=pool,
            measure=measure,
            measures=measures,
            options=options,
            labels=labels,
            machine=machine,
            reason=reason,
            released_by=released_by,
        )
    from scoring.jobs import release_make_start  # the jobs import this module

    return release_make_start(
        pool=pool,
        measure=measure,
        measures=measures,
        options=options,
        labels=labels,
        machine=machine,
        reason=reason,
        released_by=released_by,
    )
