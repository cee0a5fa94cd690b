"""What every app's API shares: how request bodies are parsed and errors answered.

Machine clients get JSON back whatever goes wrong: a body nested too deeply
is a 400, a database that cannot answer now (a lock timeout, a dropped
connection) a 503 to retry, and an unexpected error a 500 in JSON.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import DatabaseError
from django.http import HttpRequest, JsonResponse
from rest_framework import parsers, status
from rest_framework.exceptions import ParseError
from rest_framework.response import Response
from rest_framework.views import exception_handler

log = logging.getLogger(__name__)


class JSONParser(parsers.JSONParser):
    """DRF's parser, with a body nested too deeply for the decoder a 400 like any bad JSON."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None


def handle_exception(error: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, and a 503 in JSON when the database cannot answer now."""
    response = exception_handler(error, context)
    if response is None and isinstance(error, DatabaseError):
        log.exception("database error in %s", context.get("view"))
        return Response(
            {"detail": "The database could not answer; try again in a moment."},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": "5"},
        )
    return response


def server_error(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
    """Django's 500 page, in JSON for the API's clients."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Server error."}, status=500)
    from django.views.defaults import server_error as page

    return page(request, *args, **kwargs)
