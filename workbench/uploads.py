"""Uploaded files: a size limit per file enforced while the file arrives.

Django streams every upload larger than FILE_UPLOAD_MAX_MEMORY_SIZE to a
temporary file; this handler, first in FILE_UPLOAD_HANDLERS, stops a file
as soon as it passes WORKBENCH_MAX_UPLOAD_BYTES, so that an oversized
upload is neither held in memory nor written to disk. The view then
answers 413 naming the file (`refused`).

Every upload, on a page or the API, is decided by one rule (`upload_receive`):
413 past the size limit, 400 with the form's or the file's problems, 202 when
a background job stores it, else 201. Pages render the `Received` their way;
the API answers it with `upload_answer`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest

from workbench.core.problems import InputError
from workbench.models import Job

if TYPE_CHECKING:  # services import this module: DRF only where the API answers
    from rest_framework.request import Request
    from rest_framework.response import Response


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


def too_large(request: HttpRequest | Request) -> list[str]:
    """The names of the files of this request over WORKBENCH_MAX_UPLOAD_BYTES: those
    the handler cut off, and any that arrived whole past the limit."""
    request = getattr(request, "_request", request)  # a DRF request wraps Django's
    limit = settings.WORKBENCH_MAX_UPLOAD_BYTES
    names = refused(request)
    for field in request.FILES:
        names += [f.name for f in request.FILES.getlist(field) if f.size and f.size > limit]
    return names


@dataclass(frozen=True)
class Received:
    """What became of an upload: `status` 413 (`detail` names the files over the
    limit), 400 (the errors are on `form`, or the file's problems in `error`), 202
    (`stored` is the job that stores it) or 201 (`stored` is what was stored)."""

    status: int
    form: Any
    stored: Any = None
    error: InputError | None = None
    detail: str = ""


def upload_receive(
    request: HttpRequest | Request, form: Any, store: Callable[[dict[str, Any]], Any]
) -> Received:
    """The one rule of every upload, pages and API alike: refuse a file over the
    limit before anything is read, then check the form (a Django form, or a DRF
    serializer where an API endpoint has no page), then `store` its cleaned data
    with a service (which returns what it stored, or the Job that will)."""
    names = too_large(request)
    if names:
        detail = limit_message(names)
        if _is_form(form):  # the page shows the other fields' errors too
            form.is_valid()
            form.add_error(None, detail)
        return Received(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, form, detail=detail)
    if not form.is_valid():
        return Received(HTTPStatus.BAD_REQUEST, form)
    try:
        stored = store(form.cleaned_data if _is_form(form) else form.validated_data)
    except InputError as error:
        return Received(HTTPStatus.BAD_REQUEST, form, error=error)
    except ValidationError as error:  # a service refusing the request as a whole
        if not _is_form(form):
            raise
        form.add_error(None, error)
        return Received(HTTPStatus.BAD_REQUEST, form)
    if isinstance(stored, Job):
        return Received(HTTPStatus.ACCEPTED, form, stored=stored)
    return Received(HTTPStatus.CREATED, form, stored=stored)


def _is_form(form: Any) -> bool:
    return hasattr(form, "add_error")


def rejected_response(error: InputError, detail: str) -> Response:
    """The line-level errors of a rejected upload, as JSON."""
    from rest_framework.response import Response

    return Response({"detail": detail, **error.as_dict()}, status=HTTPStatus.BAD_REQUEST)


def upload_answer(
    request: Request,
    received: Received,
    body: Callable[[Any], Any],
    *,
    rejected: str = "Rejected: nothing was stored.",
    accepted: str = "Accepted: a background job checks and stores it.",
    stored: int = HTTPStatus.CREATED,
) -> Response:
    """The API's answer to a `Received`: 413 and 400 as JSON (`{field: [messages]}`
    for the form, `detail`, `errors` and `total` for the file), 202 with the job's
    address, 201 (or `stored`: 200 for a replacement) with `body(stored)`."""
    from rest_framework import serializers
    from rest_framework.response import Response

    from workbench.api import form_errors
    from workbench.job_api import job_accepted

    if received.status == HTTPStatus.REQUEST_ENTITY_TOO_LARGE:
        return Response({"detail": received.detail}, status=received.status)
    if received.error is not None:
        return rejected_response(received.error, rejected)
    if received.status == HTTPStatus.BAD_REQUEST:
        if not _is_form(received.form):
            raise serializers.ValidationError(received.form.errors)
        raise form_errors(received.form)
    if received.status == HTTPStatus.ACCEPTED:
        return job_accepted(request, received.stored, accepted)
    return Response(body(received.stored), status=stored)
