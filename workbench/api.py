"""What every app's API shares: how request bodies are parsed, errors answered
and lists paged and filtered.

Machine clients get JSON back whatever goes wrong: a body nested too deeply
is a 400, a database that cannot answer now (a lock timeout, a dropped
connection) a 503 to retry, and an unexpected error a 500 in JSON.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DatabaseError
from django.db.models import QuerySet
from django.http import HttpRequest, JsonResponse
from rest_framework import parsers, serializers, status
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.filters import BaseFilterBackend
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import exception_handler

log = logging.getLogger(__name__)


class JSONParser(parsers.JSONParser):
    """DRF's parser, with a body nested too deeply for the decoder a 400 like any bad
    JSON, and a NUL in any string of it (PostgreSQL stores no NUL in text) a 400 too."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None
        if _holds_nul(data):
            raise ParseError("JSON parse error - a string holds U+0000 (NUL), which none may hold")
        return data


def _holds_nul(data: Any) -> bool:
    """Whether a NUL is in any key or string of parsed JSON (walked without recursion)."""
    pending = [data]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


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


def not_found(request: HttpRequest, exception: Exception | None = None) -> Any:
    """Django's 404 page, in JSON for the API's clients (an address no route matches)."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> Any:
    """Django's 400 page, in JSON for the API's clients: what Django refuses before
    any view (too many files or fields in one request, a body past the limit)."""
    if request.path.startswith("/api/"):
        reason = str(exception) if exception is not None else ""
        return JsonResponse({"detail": reason or "Bad request."}, status=400)
    from django.views.defaults import bad_request as page

    return page(request, exception)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> Any:
    """Django's 403 page, in JSON for the API's clients (a CSRF failure answers its own)."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": str(exception or "") or "Forbidden."}, status=403)
    from django.views.defaults import permission_denied as page

    return page(request, exception)


def server_error(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
    """Django's 500 page, in JSON for the API's clients."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Server error."}, status=500)
    from django.views.defaults import server_error as page

    return page(request, *args, **kwargs)


# --------------------------------------------------------------------------
# Lists: pages, filters, errors


class Pagination(LimitOffsetPagination):
    """Lists come a page at a time: `?limit=` (default 100, at most 1000) and `?offset=`."""

    default_limit: int | None = 100
    max_limit = 1000


class OptionalPagination(Pagination):
    """Pages only when asked (`?limit=`, `?offset=`): the lists that answered a plain
    array before lists were paged keep answering one, for the clients written then."""

    default_limit = None

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return {"oneOf": [schema, super().get_paginated_response_schema(schema)]}


@dataclass(frozen=True)
class Filter:
    """A query parameter that narrows a list: `lookup` on the queryset, of an OpenAPI `type`."""

    lookup: str
    description: str
    type: str = "string"


class QueryFilter(BaseFilterBackend):
    """Filters a list by the query parameters its view declares in `filters`
    ({name: Filter}); an empty parameter filters nothing, a value the field
    cannot hold is a 400."""

    def filter_queryset(self, request: Request, queryset: QuerySet, view: Any) -> QuerySet:
        for name, spec in getattr(view, "filters", {}).items():
            value = request.query_params.get(name)
            if value in (None, ""):
                continue
            try:
                queryset = queryset.filter(**{spec.lookup: value})
            except (ValueError, TypeError, DjangoValidationError):
                raise ValidationError({name: [f"not a valid {spec.type}: {value!r}"]}) from None
        return queryset

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        return [
            {
                "name": name,
                "required": False,
                "in": "query",
                "description": spec.description,
                "schema": {"type": spec.type},
            }
            for name, spec in getattr(view, "filters", {}).items()
        ]


class DetailSerializer(serializers.Serializer):
    """The body of an error or a refusal: what went wrong, in a sentence."""

    detail = serializers.CharField()


def form_errors(form: Any) -> ValidationError:
    """A Django form's errors as DRF's 400 body: {field: [messages]}, the form-wide
    ones under `non_field_errors`, worded as the page words them."""
    return ValidationError(
        {
            ("non_field_errors" if field == "__all__" else field): [str(m) for m in messages]
            for field, messages in form.errors.items()
        }
    )


# --------------------------------------------------------------------------
# The schema: the errors every operation can answer

_DETAIL: dict[str, Any] = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
_INVALID: dict[str, Any] = {
    "type": "object",
    "description": "{field: [messages]} (non_field_errors for the whole input), or a "
    "`detail`; a rejected file adds `errors` [{file, line, reason}] and `total`.",
    "additionalProperties": True,
}
_QUERY_OR_BODY = ("query",)


def document_errors(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular post-processing: every operation says the errors DRF answers
    for it, so that a client (and Schemathesis) finds each status it can get:
    401 without credentials, 403 without the right role, 404 for what its path
    names that does not exist, 400 for input it refuses. Answers an operation
    documents itself are kept."""
    for path, item in result.get("paths", {}).items():
        for method, operation in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            responses = operation.setdefault("responses", {})
            errors: dict[str, tuple[str, dict[str, Any]]] = {
                "401": ("No valid credentials: a token or a session.", _DETAIL),
                "403": ("Not allowed to you: organisers only, or a CSRF failure.", _DETAIL),
            }
            if "{" in path:
                errors["404"] = ("Nothing of that id (or not yours).", _DETAIL)
            takes_input = "requestBody" in operation or any(
                parameter.get("in") in _QUERY_OR_BODY
                for parameter in operation.get("parameters", [])
            )
            # A path parameter may hold what no id may (a control character):
            # the middleware refuses that address with a 400.
            if takes_input or "{" in path:
                errors["400"] = ("Input refused, with the reasons.", _INVALID)
            for code, (description, schema) in errors.items():
                responses.setdefault(
                    code,
                    {
                        "description": description,
                        "content": {"application/json": {"schema": schema}},
                    },
                )
    return result
