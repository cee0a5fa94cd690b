"""Writes for task campaigns (CodiEsp, SciFact): gold files and submissions.

Every file is checked whole by the task's own readers (`scoring.core.tasks.subtasks`),
a block of lines at a time, first; any problem raises `InputError` (file, line,
reason) and nothing is stored. Files are kept as uploaded, as runs are, and a row that fails to save
takes its files with it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import PurePath
from typing import Any, BinaryIO

from django.core.exceptions import SuspiciousFileOperation, ValidationError
from django.core.files.base import ContentFile, File
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils.text import get_valid_filename

from pooling.models import Campaign
from scoring.core.tasks import subtasks
from scoring.core.tasks.line_blocks import BLOCK_BYTES
from scoring.core.tasks.subtasks import NamedFile, Subtask
from scoring.models import MAX_SUBMISSION_NAME, TaskGold, TaskSubmission
from scoring.task_selectors import stored_file, task_gold_read
from workbench.core.id_limits import control_problem
from workbench.core.problems import InputError, Problem


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
