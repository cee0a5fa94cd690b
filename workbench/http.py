"""HTTP helpers the pages and the API of every app share."""

from __future__ import annotations

from django.http import HttpResponse


def attachment(data: bytes, name: str, content_type: str) -> HttpResponse:
    """A download: `data` offered as the file `name`."""
    response = HttpResponse(data, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
