"""The API token page: each user's own token, and organisers' view of assessors' tokens."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from tests.helpers import make_user
from workbench import services

pytestmark = pytest.mark.django_db
PAGE = reverse("api_tokens")


def create_url(user: User) -> str:
    return reverse("api_token_create", args=[user.pk])


def revoke_url(user: User) -> str:
    return reverse("api_token_revoke", args=[user.pk])


def test_the_top_bar_links_to_the_token_page_for_every_role(assessor_client, organiser):
    assert (
        f'href="{PAGE}"' in assessor_client.get(reverse("judging:assessor_home")).content.decode()
    )
    assessor_client.force_login(organiser)
    assert (
        f'href="{PAGE}"' in assessor_client.get(reverse("pooling:campaign_list")).content.decode()
    )


def test_the_page_says_when_there_is_no_token_and_creates_none(assessor_client):
    page = assessor_client.get(PAGE).content.decode()
    assert "No token" in page
    assert "Create token" in page
    assert not Token.objects.exists()


def test_an_assessor_creates_a_token_and_sees_the_key_once(assessor_client, assessor):
    response = assessor_client.post(create_url(assessor))
    token = Token.objects.get(user=assessor)
    assert response.status_code == 200
    assert token.key in response.content.decode()
    assert "not shown again" in response.content.decode()
    assert "no-store" in response["Cache-Control"]
    page = assessor_client.get(PAGE).content.decode()
    assert token.key not in page
    assert f"{token.key[:6]}…" in page
    assert token.created.strftime("%Y-%m-%d") in page
    assert "Regenerate" in page


def test_regenerating_from_the_page_replaces_the_key(assessor_client, assessor):
    old = services.token_create(user=assessor)
    response = assessor_client.post(create_url(assessor))
    new = Token.objects.get(user=assessor)
    assert new.key != old.key
    assert new.key in response.content.decode()


def test_an_assessor_revokes_their_token(assessor_client, assessor):
    services.token_create(user=assessor)
    response = assessor_client.post(revoke_url(assessor), follow=True)
    assert not Token.objects.exists()
    assert "Token revoked" in response.content.decode()
    assert "No token" in response.content.decode()


def test_htmx_gets_only_the_row_back(assessor_client, assessor):
    response = assessor_client.post(create_url(assessor), headers={"HX-Request": "true"})
    body = response.content.decode()
    assert body.lstrip().startswith(f'<tr id="token-{assessor.pk}"')
    assert Token.objects.get(user=assessor).key in body
    response = assessor_client.post(revoke_url(assessor), headers={"HX-Request": "true"})
    assert "No token" in response.content.decode()
    assert not Token.objects.exists()


@pytest.mark.parametrize("url", [create_url, revoke_url])
def test_a_get_never_writes(assessor_client, assessor, url):
    token = services.token_create(user=assessor)
    assert assessor_client.get(url(assessor)).status_code == 405
    assert list(Token.objects.all()) == [token]


def test_writes_need_the_csrf_token(assessor):
    client = Client(enforce_csrf_checks=True)
    client.force_login(assessor)
    assert client.post(create_url(assessor)).status_code == 403
    assert not Token.objects.exists()


def test_an_assessor_cannot_touch_another_users_token(assessor_client, assessor2, organiser):
    token = services.token_create(user=assessor2)
    assert assessor_client.post(create_url(assessor2)).status_code == 404
    assert assessor_client.post(revoke_url(assessor2)).status_code == 404
    assert assessor_client.post(create_url(organiser)).status_code == 404
    assert list(Token.objects.all()) == [token]
    assert "bob" not in assessor_client.get(PAGE).content.decode()


def test_organisers_see_assessors_tokens_but_not_their_keys(organiser_client, assessor, assessor2):
    token = services.token_create(user=assessor)
    make_user("oscar", organiser=True)
    page = organiser_client.get(PAGE).content.decode()
    assert "alice" in page
    assert f"{token.key[:6]}…" in page
    assert token.key not in page
    assert "bob" in page
    assert "oscar" not in page


def test_organisers_create_and_revoke_assessors_tokens(organiser_client, assessor):
    response = organiser_client.post(create_url(assessor))
    token = Token.objects.get(user=assessor)
    assert token.key in response.content.decode()
    organiser_client.post(revoke_url(assessor))
    assert not Token.objects.exists()


def _organiser() -> User:
    return make_user("oscar", organiser=True)


def _staff() -> User:
    return User.objects.create_user("sam", is_staff=True)


def _superuser() -> User:
    return User.objects.create_superuser("root")


@pytest.mark.parametrize("make_owner", [_organiser, _staff, _superuser])
def test_organisers_cannot_touch_organisers_staff_or_superusers(organiser_client, make_owner):
    owner = make_owner()
    token = services.token_create(user=owner)
    assert organiser_client.post(create_url(owner)).status_code == 404
    assert organiser_client.post(revoke_url(owner)).status_code == 404
    assert list(Token.objects.all()) == [token]


def test_an_unknown_account_is_404(organiser_client):
    assert organiser_client.post(reverse("api_token_create", args=[999999])).status_code == 404
    assert not Token.objects.exists()


@pytest.mark.parametrize("method", ["get", "post"])
def test_anonymous_users_are_sent_to_login(client, assessor, method):
    for url in (PAGE, create_url(assessor)):
        response = getattr(client, method)(url)
        assert response.status_code == 302
        assert response.url.startswith(reverse("login"))
    assert not Token.objects.exists()
