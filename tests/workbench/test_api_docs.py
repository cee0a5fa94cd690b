"""The API's schema and its Swagger UI are for logged-in users."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_anonymous_users_are_sent_from_the_api_docs_to_login(client):
    response = client.get(reverse("api-docs"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_anonymous_users_get_no_schema(client):
    assert client.get(reverse("api-schema")).status_code in (401, 403)


def test_logged_in_users_read_the_schema_and_docs(assessor_client):
    assert assessor_client.get(reverse("api-docs")).status_code == 200
    schema = assessor_client.get(reverse("api-schema"))
    assert schema.status_code == 200
    assert b"/api/campaigns/" in schema.content
