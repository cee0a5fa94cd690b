"""Requests no view can answer, refused once before any view runs.

A URL path segment is an id (a docno, a topic id, a slug, a number), and a
query value is read as one or stored: a NUL in either reached PostgreSQL,
which refuses NUL in text (a 503 "try again" or a 500), and a control
character in a path segment is in no id we store (`id_limits.control_problem`).
A number in a path beyond what a database integer holds (2^63 and more) is no
row of ours: a 404, as for any id that names nothing.

Answers are 400 (404 for the number), JSON under /api/, plain text elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

from workbench.core.id_limits import control_problem

# The largest integer a database column of ours holds (bigint); ids are bigint.
MAX_PATH_INTEGER = 2**63 - 1


def request_problem(request: HttpRequest) -> str | None:
    """Why the request's path or query cannot be read as ids and values, or None."""
    problem = control_problem("the address", request.path)
    if problem:
        return problem
    for name, values in request.GET.lists():
        if "\x00" in name or any("\x00" in value for value in values):
            return f"query parameter {name!r} holds U+0000 (NUL), which no value may hold"
    return None


class RefuseUnreadableRequests:
    """Answers 400 for a control character in the path or a NUL in the query, and
    404 for a path integer past bigint, whatever the route."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = request_problem(request)
        if problem:
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": problem}, status=400)
            return HttpResponseBadRequest(problem, content_type="text/plain; charset=utf-8")
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view: Any, args: tuple, kwargs: dict[str, Any]
    ) -> None:
        for value in (*args, *kwargs.values()):
            if isinstance(value, int) and not 0 <= value <= MAX_PATH_INTEGER:
                raise Http404("no such id")
