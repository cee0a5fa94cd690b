"""The admin's account pages: organisers manage assessor accounts and nothing else.

An organiser who is not a superuser (in the `organiser` group, or staff
without superuser rights) may list, add, edit, deactivate and set the
password of assessor accounts only. No form of theirs has is_staff,
is_superuser, groups or user_permissions; another organiser's, a staff
member's or a superuser's account answers 404 and is left as it was.
Groups, API tokens and login lockouts are the superuser's.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.urls import reverse
from rest_framework.authtoken.models import Token

from tests.helpers import PASSWORD, make_user
from workbench.roles import ORGANISER_GROUP

pytestmark = pytest.mark.django_db

PRIVILEGED_FIELDS = ("is_staff", "is_superuser", "groups", "user_permissions")
NEW_PASSWORD = "Quiet-Lantern-Harbour-42"


@pytest.fixture(params=["group", "staff"])
def manager(request):
    """A non-superuser organiser: in the organiser group, or staff."""
    if request.param == "group":
        return make_user("olivia", organiser=True)
    return User.objects.create_user("sam", password=PASSWORD, is_staff=True)


@pytest.fixture
def manager_client(client, manager):
    client.force_login(manager)
    return client


@pytest.fixture
def root(db):
    return User.objects.create_superuser("root", password=PASSWORD)


@pytest.fixture
def others(root):
    """Accounts no organiser may touch, by kind."""
    return {
        "superuser": root,
        "organiser": make_user("oscar", organiser=True),
        "staff": User.objects.create_user("stella", password=PASSWORD, is_staff=True),
    }


def change_url(user: User) -> str:
    return reverse("admin:auth_user_change", args=[user.pk])


def password_url(user: User) -> str:
    return reverse("admin:auth_user_password_change", args=[user.pk])


def escalation(user: User, **fields) -> dict:
    """A change-form post that also asks for every right there is."""
    organisers = Group.objects.get_or_create(name=ORGANISER_GROUP)[0]
    return {
        "username": user.username,
        "first_name": "Changed",
        "last_name": "",
        "email": "",
        "is_active": "on",
        "is_staff": "on",
        "is_superuser": "on",
        "groups": [str(organisers.pk)],
        "user_permissions": [str(Permission.objects.get(codename="change_user").pk)],
        **fields,
    }


def rights(user: User) -> tuple:
    user.refresh_from_db()
    return (
        user.is_staff,
        user.is_superuser,
        sorted(user.groups.values_list("name", flat=True)),
        list(user.user_permissions.all()),
        user.first_name,
        user.password,
    )


# --------------------------------------------------------------------------
# What an organiser may do


def test_the_change_form_has_no_privileged_fields(manager_client, assessor):
    page = manager_client.get(change_url(assessor)).content.decode()
    assert f'name="username" value="{assessor.username}"' in page
    assert 'name="is_active"' in page
    for field in PRIVILEGED_FIELDS:
        assert f'name="{field}"' not in page


def test_a_posted_escalation_changes_only_the_ordinary_fields(manager_client, assessor):
    response = manager_client.post(change_url(assessor), escalation(assessor))
    assert response.status_code == 302
    assessor.refresh_from_db()
    assert assessor.first_name == "Changed"
    assert not assessor.is_staff
    assert not assessor.is_superuser
    assert not assessor.groups.exists()
    assert not assessor.user_permissions.exists()


def test_an_organiser_deactivates_an_assessor(manager_client, assessor):
    data = escalation(assessor)
    del data["is_active"]
    assert manager_client.post(change_url(assessor), data).status_code == 302
    assessor.refresh_from_db()
    assert not assessor.is_active
    # Still theirs to reactivate.
    assert manager_client.get(change_url(assessor)).status_code == 200


def test_an_organiser_sets_an_assessors_password(manager_client, assessor):
    response = manager_client.post(
        password_url(assessor),
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )
    assert response.status_code == 302
    assessor.refresh_from_db()
    assert assessor.check_password(NEW_PASSWORD)


def test_an_organiser_adds_an_assessor_and_cannot_make_them_staff(manager_client):
    response = manager_client.post(
        reverse("admin:auth_user_add"),
        {
            "username": "carol",
            "usable_password": "true",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
            "is_staff": "on",
            "is_superuser": "on",
        },
    )
    assert response.status_code == 302
    carol = User.objects.get(username="carol")
    assert carol.check_password(NEW_PASSWORD)
    assert (carol.is_staff, carol.is_superuser, carol.groups.exists()) == (False, False, False)


def test_the_user_list_shows_assessor_accounts_only(manager_client, manager, assessor, others):
    retired = make_user("retired")
    retired.is_active = False
    retired.save()
    response = manager_client.get(reverse("admin:auth_user_changelist"))
    assert response.status_code == 200
    listed = {user.username for user in response.context["cl"].result_list}
    assert listed == {assessor.username, "retired"}
    # Not even by asking for them.
    manager_client.raise_request_exception = False
    for query in (
        "?q=root",
        "?q=oscar",
        "?is_superuser__exact=1",
        f"?groups__name={ORGANISER_GROUP}",
    ):
        response = manager_client.get(reverse("admin:auth_user_changelist") + query)
        if response.status_code == 200:
            assert {u.username for u in response.context["cl"].result_list} <= listed, query
        else:
            assert response.status_code == 400, query  # a filter organisers are not offered


# --------------------------------------------------------------------------
# What an organiser may not do


def test_an_organiser_cannot_edit_their_own_rights(manager_client, manager):
    before = rights(manager)
    assert manager_client.get(change_url(manager)).status_code == 404
    assert manager_client.post(change_url(manager), escalation(manager)).status_code == 404
    assert rights(manager) == before


@pytest.mark.parametrize("kind", ["superuser", "organiser", "staff"])
def test_an_organiser_cannot_touch_a_privileged_account(manager_client, others, kind):
    account = others[kind]
    before = rights(account)
    assert manager_client.get(change_url(account)).status_code == 404
    assert manager_client.post(change_url(account), escalation(account)).status_code == 404
    assert manager_client.get(password_url(account)).status_code == 404
    response = manager_client.post(
        password_url(account),
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )
    assert response.status_code == 404
    history = reverse("admin:auth_user_history", args=[account.pk])
    assert manager_client.get(history).status_code == 404
    delete = reverse("admin:auth_user_delete", args=[account.pk])
    assert manager_client.post(delete, {"post": "yes"}).status_code in (403, 404)
    assert rights(account) == before
    assert User.objects.filter(pk=account.pk).exists()


def test_an_organiser_cannot_delete_accounts(manager_client, assessor):
    # Deleting an assessor would delete their judgments: deactivate instead.
    delete = reverse("admin:auth_user_delete", args=[assessor.pk])
    assert manager_client.post(delete, {"post": "yes"}).status_code == 403
    response = manager_client.post(
        reverse("admin:auth_user_changelist"),
        {"action": "delete_selected", "_selected_action": [assessor.pk], "post": "yes"},
    )
    assert User.objects.filter(pk=assessor.pk).exists()
    assert response.status_code in (200, 302)


@pytest.fixture
def granted(manager):
    """The manager holds Django's permissions on groups and tokens (say, granted by mistake)."""
    manager.user_permissions.add(
        *Permission.objects.filter(content_type__app_label__in=["auth", "authtoken"]).exclude(
            content_type__model="user"
        )
    )
    return manager


def test_groups_are_the_superusers(manager_client, granted):
    organisers = Group.objects.get_or_create(name=ORGANISER_GROUP)[0]
    change_user = Permission.objects.get(codename="change_user")
    assert manager_client.get(reverse("admin:auth_group_changelist")).status_code == 403
    assert manager_client.get(reverse("admin:auth_group_add")).status_code == 403
    url = reverse("admin:auth_group_change", args=[organisers.pk])
    response = manager_client.post(
        url, {"name": ORGANISER_GROUP, "permissions": [str(change_user.pk)]}
    )
    assert response.status_code == 403
    assert not organisers.permissions.exists()
    response = manager_client.post(
        reverse("admin:auth_group_add"), {"name": "root-ish", "permissions": [change_user.pk]}
    )
    assert response.status_code == 403
    assert not Group.objects.filter(name="root-ish").exists()


def test_api_tokens_in_the_admin_are_the_superusers(manager_client, granted, root):
    token = Token.objects.create(user=root)
    assert manager_client.get(reverse("admin:authtoken_tokenproxy_changelist")).status_code == 403
    assert manager_client.get(reverse("admin:authtoken_tokenproxy_add")).status_code == 403
    response = manager_client.post(reverse("admin:authtoken_tokenproxy_add"), {"user": root.pk})
    assert response.status_code == 403
    change = reverse("admin:authtoken_tokenproxy_change", args=[root.pk])
    assert manager_client.get(change).status_code == 403
    assert list(Token.objects.values_list("key", flat=True)) == [token.key]


def test_the_admin_index_offers_only_what_organisers_may_use(manager_client, granted):
    page = manager_client.get(reverse("admin:index")).content.decode()
    assert reverse("admin:auth_user_changelist") in page
    assert reverse("admin:pooling_campaign_changelist") in page
    assert reverse("admin:auth_group_changelist") not in page
    assert reverse("admin:authtoken_tokenproxy_changelist") not in page
    assert "axes" not in page.lower()


def test_assessors_get_no_admin(assessor_client, assessor):
    response = assessor_client.get(change_url(assessor))
    assert response.status_code == 302
    assert "/login/" in response["Location"]


# --------------------------------------------------------------------------
# A superuser keeps Django's full admin


def test_a_superuser_grants_rights(client, root, assessor, others):
    client.force_login(root)
    page = client.get(change_url(assessor)).content.decode()
    for field in PRIVILEGED_FIELDS:
        assert f'name="{field}"' in page
    listed = {
        u.username
        for u in client.get(reverse("admin:auth_user_changelist")).context["cl"].result_list
    }
    assert listed >= {"root", "oscar", "stella", assessor.username}
    data = escalation(assessor)
    data.update(
        {
            "date_joined_0": "2025-01-01",
            "date_joined_1": "00:00:00",
            "initial-date_joined_0": "2025-01-01",
            "initial-date_joined_1": "00:00:00",
        }
    )
    assert client.post(change_url(assessor), data).status_code == 302
    assessor.refresh_from_db()
    assert assessor.is_staff
    assert assessor.is_superuser


def test_a_superuser_sets_an_organisers_password(client, root, others):
    client.force_login(root)
    oscar = others["organiser"]
    response = client.post(
        password_url(oscar),
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )
    assert response.status_code == 302
    oscar.refresh_from_db()
    assert oscar.check_password(NEW_PASSWORD)


def test_a_superuser_manages_groups_and_tokens(client, root):
    client.force_login(root)
    assert client.get(reverse("admin:auth_group_changelist")).status_code == 200
    assert client.get(reverse("admin:authtoken_tokenproxy_changelist")).status_code == 200
