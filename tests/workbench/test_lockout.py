"""Failed logins are throttled per account and address together, bad API tokens
per address.

After AXES_FAILURE_LIMIT failures (WORKBENCH_LOGIN_FAILURE_LIMIT) for one
account from one address, that account is refused from that address with 429
until AXES_COOLOFF_TIME (WORKBENCH_LOGIN_COOLOFF_MINUTES) has passed since the
last failure, even with the right password; from elsewhere it logs in, and
the address's other users too. Bad tokens lock out more bad tokens from their
address; a valid token always works.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token

from tests.helpers import PASSWORD

pytestmark = pytest.mark.django_db

LIMIT = settings.AXES_FAILURE_LIMIT
COOLOFF_MINUTES = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)


def log_in(client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def api_get(client, key: str, address: str = "10.0.0.1"):
    return client.get(
        reverse("api-campaigns"), HTTP_AUTHORIZATION=f"Token {key}", REMOTE_ADDR=address
    )


def assert_locked_out(response) -> None:
    assert response.status_code == 429
    text = response.content.decode()
    assert "Too many failed" in text
    assert f"{COOLOFF_MINUTES} minutes" in text


def test_fewer_failures_than_the_limit_still_let_the_right_password_in(client, assessor):
    for _ in range(LIMIT - 1):
        assert log_in(client, "alice", "wrong").status_code == 200
    response = log_in(client, "alice", PASSWORD)
    assert response.status_code == 302
    assert response.url == reverse("home")


def test_guessing_an_accounts_password_is_throttled_from_the_guessing_address(client, assessor):
    for _ in range(LIMIT):
        log_in(client, "alice", "wrong", address="10.0.1.1")
    response = log_in(client, "alice", PASSWORD, address="10.0.1.1")
    assert_locked_out(response)
    assert "_auth_user_id" not in client.session


def test_no_one_locks_an_account_out_for_everyone(client, organiser):
    for _ in range(LIMIT + 2):
        log_in(client, "olivia", "wrong", address="10.0.2.66")
    assert_locked_out(log_in(client, "olivia", PASSWORD, address="10.0.2.66"))
    assert log_in(client, "olivia", PASSWORD, address="10.0.2.1").status_code == 302


def test_failures_of_other_accounts_lock_no_one_out_of_a_shared_address(client, assessor):
    for attempt in range(LIMIT + 2):
        log_in(client, f"guess{attempt}", "wrong", address="10.0.3.1")
    assert log_in(client, "alice", PASSWORD, address="10.0.3.1").status_code == 302


def test_the_lockout_ends_after_the_cool_off(client, assessor):
    for _ in range(LIMIT):
        log_in(client, "alice", "wrong")
    assert_locked_out(log_in(client, "alice", PASSWORD))
    AccessAttempt.objects.update(
        attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    )
    assert log_in(client, "alice", PASSWORD).status_code == 302


def test_the_admin_login_is_throttled_too(client, organiser):
    url = reverse("admin:login")
    for _ in range(LIMIT):
        client.post(url, {"username": "olivia", "password": "wrong"}, REMOTE_ADDR="10.0.4.1")
    response = client.post(
        url, {"username": "olivia", "password": PASSWORD}, REMOTE_ADDR="10.0.4.1"
    )
    assert response.status_code == 429


# --------------------------------------------------------------------------
# API tokens


def test_bad_tokens_lock_out_more_bad_tokens_from_their_address_not_valid_ones(client, organiser):
    good = Token.objects.create(user=organiser).key
    assert api_get(client, good).status_code == 200
    for _ in range(LIMIT):
        assert api_get(client, "not-a-token").status_code in (401, 429)
    locked = api_get(client, "another-guess")
    assert locked.status_code == 429
    assert int(locked["Retry-After"]) > 0
    assert "Too many failed" in locked.json()["detail"]
    assert api_get(client, good).status_code == 200


def test_the_request_that_reaches_the_limit_answers_json(client):
    responses = [api_get(client, "not-a-token", address="10.0.7.1") for _ in range(LIMIT)]
    assert [r.status_code for r in responses[:-1]] == [401] * (LIMIT - 1)
    assert responses[-1].status_code == 429
    assert responses[-1]["Content-Type"] == "application/json"


def test_bad_tokens_from_many_addresses_lock_out_no_one_else(client, organiser):
    # Token failures name no account: they must not add up in one shared bucket.
    for attempt in range(LIMIT + 2):
        assert api_get(client, "not-a-token", address=f"10.1.0.{attempt}").status_code == 401
    good = Token.objects.create(user=organiser).key
    assert api_get(client, good, address="10.1.1.1").status_code == 200
    assert log_in(client, "olivia", PASSWORD, address="10.1.1.2").status_code == 302


def test_bad_tokens_lock_no_password_out_of_their_address(client, assessor):
    for _ in range(LIMIT):
        api_get(client, "not-a-token", address="10.0.8.1")
    assert log_in(client, "alice", PASSWORD, address="10.0.8.1").status_code == 302


# --------------------------------------------------------------------------
# Password rules


@pytest.mark.parametrize("password", ["password123", "1234567890", "qwertyuiop", "84736251907"])
def test_common_and_numeric_passwords_are_refused(password):
    with pytest.raises(ValidationError):
        validate_password(password)


def test_a_long_uncommon_password_is_accepted():
    validate_password("Quiet-Lantern-Harbour-42")


def test_the_admin_refuses_a_common_password_for_an_assessor(client, assessor):
    from django.contrib.auth.models import User

    root = User.objects.create_superuser("root", password=PASSWORD)
    client.force_login(root)
    url = reverse("admin:auth_user_password_change", args=[assessor.pk])
    response = client.post(
        url, {"password1": "password123", "password2": "password123", "usable_password": "true"}
    )
    assert response.status_code == 200
    assert "too common" in response.content.decode()
    assessor.refresh_from_db()
    assert assessor.check_password(PASSWORD)


# --------------------------------------------------------------------------
# Which address counts


def test_the_address_is_the_peer_unless_behind_the_proxy(settings):
    from workbench.lockout import client_address

    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.9", HTTP_X_FORWARDED_FOR="1.2.3.4")
    settings.WORKBENCH_BEHIND_TLS_PROXY = False
    assert client_address(request) == "10.0.0.9"
    settings.WORKBENCH_BEHIND_TLS_PROXY = True
    # The proxy appended the last entry; the ones before it are the client's word.
    forwarded = RequestFactory().get(
        "/", REMOTE_ADDR="10.0.0.9", HTTP_X_FORWARDED_FOR="6.6.6.6, 1.2.3.4"
    )
    assert client_address(forwarded) == "1.2.3.4"
    assert client_address(RequestFactory().get("/", REMOTE_ADDR="10.0.0.9")) == "10.0.0.9"


def test_behind_the_proxy_one_client_is_locked_out_not_everyone(client, settings, assessor):
    settings.WORKBENCH_BEHIND_TLS_PROXY = True
    proxy = "10.9.9.9"
    for attempt in range(LIMIT):
        client.post(
            reverse("login"),
            {"username": "alice", "password": "wrong"},
            REMOTE_ADDR=proxy,
            HTTP_X_FORWARDED_FOR=f"{attempt}.6.6.6, 203.0.113.5",
        )
    locked = client.post(
        reverse("login"),
        {"username": "alice", "password": PASSWORD},
        REMOTE_ADDR=proxy,
        HTTP_X_FORWARDED_FOR="203.0.113.5",
    )
    assert_locked_out(locked)
    other = client.post(
        reverse("login"),
        {"username": "alice", "password": PASSWORD},
        REMOTE_ADDR=proxy,
        HTTP_X_FORWARDED_FOR="203.0.113.6",
    )
    assert other.status_code == 302
