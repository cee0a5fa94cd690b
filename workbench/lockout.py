"""Throttled logins: django-axes on the login pages, and on DRF's token authentication.

Failures count per account and address together: after AXES_FAILURE_LIMIT
of them within AXES_COOLOFF_TIME (settings.py reads both from the
environment), that account is refused from that address with 429 until the
cool-off has passed since the last failure, even with the right password. So
guessing one account's password is throttled, and no one can lock an
account (`organiser`) for everyone by failing it from elsewhere, nor lock
out every user behind one address.

A bad API token names no account: bad tokens count for their address, and
at the limit more bad tokens from it get 429; a valid token always works (a
token is 40 random hex digits: there is no guessing it, and a valid one from
a locked address is its owner). Settings point axes at the functions here.
"""

from __future__ import annotations

from typing import Any

from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_client_username
from axes.models import AccessBase
from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from rest_framework.authentication import TokenAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.request import Request

LOCKED_OUT_PAGE = "registration/locked_out.html"
# What a failed token authentication tells axes: no account, so the address alone counts.
_TOKEN_CREDENTIALS = {"username": None}


def cool_off_seconds() -> int:
    return int(settings.AXES_COOLOFF_TIME.total_seconds())


def lockout_message() -> str:
    minutes = cool_off_seconds() // 60
    return (
        "Too many failed logins for this account from this address. "
        f"Try again in {minutes} minutes."
    )


def client_address(request: HttpRequest) -> str | None:
    """The client's address, as axes counts it.

    Behind the TLS proxy (WORKBENCH_BEHIND_TLS_PROXY) every request comes
    from the proxy, which appends the client's address to X-Forwarded-For:
    the last entry is the one it added (earlier ones are the client's word).
    """
    if settings.WORKBENCH_BEHIND_TLS_PROXY:
        hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        if hops[-1]:
            return hops[-1]
    return request.META.get("REMOTE_ADDR")


def lockout_parameters(request_or_attempt: Any, credentials: dict | None = None) -> list[Any]:
    """The account and the address together; the address alone for a bad token."""
    if isinstance(request_or_attempt, AccessBase):
        username = request_or_attempt.username
    else:
        username = get_client_username(request_or_attempt, credentials)
    return [["username", "ip_address"]] if username else ["ip_address"]


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: Any = None
) -> HttpResponse:
    """429: JSON for the API, a page for people; Retry-After is the whole cool-off."""
    response: HttpResponse
    if request.path_info.startswith("/api/"):
        response = JsonResponse({"detail": lockout_message()}, status=429)
    else:
        response = render(request, LOCKED_OUT_PAGE, {"message": lockout_message()}, status=429)
    response["Retry-After"] = str(cool_off_seconds())
    return response


class LockoutTokenAuthentication(TokenAuthentication):
    """DRF's token authentication whose failures count as failed logins of their
    address; a valid token works from a locked address too."""

    def authenticate(self, request: Request) -> Any:
        header = get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None  # no token: another authentication's business
        http_request = request._request
        try:
            return super().authenticate(request)
        except AuthenticationFailed:
            if not AxesProxyHandler.is_allowed(http_request, _TOKEN_CREDENTIALS):
                raise Throttled(wait=cool_off_seconds(), detail=lockout_message()) from None
            # axes records it; at the limit its middleware answers lockout_response.
            user_login_failed.send(
                sender=type(self), credentials=dict(_TOKEN_CREDENTIALS), request=http_request
            )
            raise
