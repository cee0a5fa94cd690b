"""HTTP helpers the pages and the API of every app share."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header

# Control characters (NUL, CR, LF...) cannot travel in a header.
_CONTROL = dict.fromkeys((*range(32), 127), "_")


def download_name(name: str) -> str:
    """A file name safe in a Content-Disposition header, whatever went into it
    (a topic id from the query string, a campaign slug, a run tag)."""
    return name.translate(_CONTROL)


def attachment(data: bytes, name: str, content_type: str) -> HttpResponse:
    """A download: `data` offered as the file `name`."""
    response = HttpResponse(data, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(True, download_name(name))
    return response


def streamed_attachment(lines: Any, name: str, content_type: str) -> StreamingHttpResponse:
    """A download written as it is produced: `lines` offered as the file `name`."""
    response = StreamingHttpResponse(lines, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(True, download_name(name))
    return response
