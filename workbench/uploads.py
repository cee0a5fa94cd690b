"""Uploaded files: a size limit per file enforced while the file arrives.

Django streams every upload larger than FILE_UPLOAD_MAX_MEMORY_SIZE to a
temporary file; this handler, first in FILE_UPLOAD_HANDLERS, stops a file
as soon as it passes WORKBENCH_MAX_UPLOAD_BYTES, so that an oversized
upload is neither held in memory nor written to disk. The view then
answers 413 naming the file (`refused`).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest


class SizeLimitedUploadHandler(FileUploadHandler):
    """Skips the rest of any file over the limit and notes its name on the request."""

    def new_file(self, field_name: str, file_name: str, *args: Any, **kwargs: Any) -> None:
        super().new_file(field_name, file_name, *args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self.received += len(raw_data)
        if self.received > settings.WORKBENCH_MAX_UPLOAD_BYTES:
            refused = self.request.__dict__.setdefault("uploads_refused", [])
            refused.append(self.file_name)
            raise SkipFile(f"{self.file_name} is over the upload limit")
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handlers make the file


def refused(request: HttpRequest) -> list[str]:
    """The names of the files of this request that were over the limit (reads the body)."""
    request.FILES  # noqa: B018  (parses the upload, which runs the handler)
    return list(getattr(request, "uploads_refused", []))


def in_background(size: int) -> bool:
    """Whether work on `size` bytes of uploaded files (a run upload, a document
    collection, the submissions a task's scores read) is too large for a request
    and goes to a background job: more than WORKBENCH_UPLOAD_JOB_BYTES."""
    return size > settings.WORKBENCH_UPLOAD_JOB_BYTES


def limit_message(names: list[str]) -> str:
    limit = settings.WORKBENCH_MAX_UPLOAD_BYTES
    return (
        f"{', '.join(names)}: over the upload limit of {limit:,} bytes per file; "
        "nothing was stored. Use the import command for files this large."
    )
