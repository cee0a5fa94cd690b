"""API tokens: created, regenerated and revoked; what each does to API calls."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from workbench import services

pytestmark = pytest.mark.django_db


def api_status(key: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get(reverse("api-assignments")).status_code


def test_a_created_token_authenticates_api_calls(assessor):
    token = services.token_create(user=assessor)
    assert token.user == assessor
    assert len(token.key) == 40
    assert api_status(token.key) == 200


def test_regenerating_replaces_the_old_token(assessor):
    old = services.token_create(user=assessor)
    new = services.token_create(user=assessor)
    assert new.key != old.key
    assert list(Token.objects.filter(user=assessor)) == [new]
    assert api_status(old.key) == 401
    assert api_status(new.key) == 200


def test_a_revoked_token_gets_401(assessor):
    token = services.token_create(user=assessor)
    assert services.token_revoke(user=assessor) is True
    assert not Token.objects.exists()
    assert api_status(token.key) == 401


def test_revoking_without_a_token_changes_nothing(assessor, assessor2):
    other = services.token_create(user=assessor2)
    assert services.token_revoke(user=assessor) is False
    assert list(Token.objects.all()) == [other]
