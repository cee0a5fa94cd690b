"""HTTP helpers the pages and the API of every app share."""

from __future__ import annotations

import re
from typing import Any

from django.http import HttpResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header

from workbench.core.plots import FORMATS, Plot

_ID = re.compile(r"[0-9]{1,18}")
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


PLOT_FORMATS = ("svg", "png", "csv")


def plot_response(plot: Plot, fmt: str, name: str, *, download: bool) -> HttpResponse:
    """A picture as SVG or PNG (shown in the page, or a download), or its numbers as
    CSV (always a download); `name` without the suffix."""
    if fmt == "csv":
        return attachment(plot.csv().encode(), f"{name}.csv", "text/csv")
    data, content_type = plot.render(fmt), FORMATS[fmt]
    if download:
        return attachment(data, f"{name}.{fmt}", content_type)
    return HttpResponse(data, content_type=content_type)


def plot_format_error(fmt: str) -> HttpResponse | None:
    """The 400 for a picture format we do not draw; None for one we do."""
    if fmt in PLOT_FORMATS:
        return None
    return HttpResponse(f"format: one of {', '.join(PLOT_FORMATS)}", status=400)


def ids_of(values: list[str]) -> list[int]:
    """The row ids among ticked values (`request.POST.getlist("runs")`): digits a
    bigint holds; any other value names no row (`NaN`, `$x$`, 10,000 digits were a
    ValueError or OverflowError in the query, a 500)."""
    return [int(value) for value in values if _ID.fullmatch(value)]
