"""Your own API token over the API: state, a new key (the old one dies), revoke."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def client_with(token: Token) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def test_an_assessor_renews_their_own_token(assessor):
    old = Token.objects.create(user=assessor)
    client = client_with(old)
    state = client.get("/api/token/").json()
    assert (state["username"], state["has_token"]) == ("alice", True)
    response = client.post("/api/token/")
    assert response.status_code == 201
    assert "no-cache" in response["Cache-Control"]
    key = response.json()["key"]
    assert key != old.key
    assert client.get("/api/token/").status_code == 401  # the old key died
    assert client_with(Token.objects.get(key=key)).get("/api/token/").status_code == 200


def test_revoke_your_token(organiser_client, organiser):
    Token.objects.create(user=organiser)
    assert organiser_client.delete("/api/token/").status_code == 204
    assert not Token.objects.exists()
    assert organiser_client.get("/api/token/").json()["has_token"] is False


def test_anonymous_callers_get_401():
    assert APIClient().post("/api/token/").status_code == 401
