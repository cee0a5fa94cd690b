"""Pages send a Content-Security-Policy of our own origin, and keep to it.

No inline script or style runs unless it carries the response's nonce; no
page has an inline event handler or style attribute (the policy would
block them, and the page would quietly break).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from tests.workbench.test_offline import assessor_pages, organiser_pages, site  # noqa: F401

pytestmark = pytest.mark.django_db


def policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    directives = (part.split() for part in header.split(";") if part.strip())
    return {name: values for name, *values in directives}


def nonce_of(response) -> str:
    (nonce,) = re.findall(r"'nonce-([^']+)'", response["Content-Security-Policy"])[:1]
    return nonce


class _InlineCode(HTMLParser):
    """Inline scripts and styles with their nonces, event-handler and style attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.inline: list[tuple[str, str | None]] = []
        self.attributes: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        if tag == "script" and "src" not in names and names.get("type") != "application/json":
            self.inline.append((tag, names.get("nonce")))
        if tag == "style":
            self.inline.append((tag, names.get("nonce")))
        self.attributes += [
            f"<{tag} {name}>" for name in names if name.startswith("on") or name == "style"
        ]


def assert_keeps_to_its_policy(response, where: str) -> None:
    parser = _InlineCode()
    parser.feed(response.content.decode())
    if parser.inline:
        nonce = nonce_of(response)
        for tag, given in parser.inline:
            assert given == nonce, f"{where}: an inline <{tag}> without the response's nonce"
    assert not parser.attributes, f"{where}: {parser.attributes} are blocked by the policy"


def test_the_policy_allows_our_origin_only(client):
    response = client.get(reverse("login"))
    rules = policy(response)
    assert rules["default-src"] == ["'self'"]
    assert rules["script-src"][0] == "'self'"
    assert rules["script-src"][1].startswith("'nonce-")
    assert rules["style-src"][0] == "'self'"
    for directive, values in rules.items():
        for value in values:
            assert value not in ("'unsafe-inline'", "'unsafe-eval'", "*"), directive
            assert "://" not in value, f"{directive} allows {value}"
    assert rules["object-src"] == ["'none'"]
    assert rules["frame-ancestors"] == ["'none'"]
    assert rules["base-uri"] == ["'none'"]
    assert rules["form-action"] == ["'self'"]


def test_each_response_has_its_own_nonce(client):
    first, second = (client.get(reverse("login")) for _ in range(2))
    assert nonce_of(first) != nonce_of(second)
    assert f'nonce="{nonce_of(first)}"' in first.content.decode()


def test_the_checker_finds_what_the_policy_blocks(rf):
    from django.http import HttpResponse

    page = '<script>x()</script><a onclick="x()">a</a><p style="color: red">p</p>'
    response = HttpResponse(page)
    response["Content-Security-Policy"] = "script-src 'self' 'nonce-abc'"
    with pytest.raises(AssertionError, match="without the response's nonce"):
        assert_keeps_to_its_policy(response, "test")
    response.content = page.replace("<script>", '<script nonce="abc">').encode()
    with pytest.raises(AssertionError, match=r"<a onclick>.*<p style>"):
        assert_keeps_to_its_policy(response, "test")


def test_every_page_keeps_to_the_policy(client, organiser, assessor, site):  # noqa: F811
    client.force_login(organiser)
    pages = [(organiser, url) for url in organiser_pages(site)]
    pages += [(organiser, reverse("admin:auth_user_change", args=[assessor.pk]))]
    pages += [(organiser, reverse("admin:auth_user_password_change", args=[assessor.pk]))]
    pages += [(assessor, url) for url in assessor_pages(site)]
    pages += [(None, reverse("login"))]
    for user, url in pages:
        if user is None:
            client.logout()
        else:
            client.force_login(user)
        response = client.get(url)
        assert response.status_code == 200, f"{url} answered {response.status_code}"
        assert "Content-Security-Policy" in response, url
        assert_keeps_to_its_policy(response, url)
