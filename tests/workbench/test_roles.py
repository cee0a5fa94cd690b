"""Who may manage whose API token, and which accounts are assessor accounts."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, User

from tests.helpers import make_user
from workbench.roles import accounts_managed_by, assessor_accounts, may_manage_token

pytestmark = pytest.mark.django_db


def test_assessor_accounts_leave_out_everyone_with_organiser_rights(assessor, organiser):
    staff = User.objects.create_user("sam", is_staff=True)
    root = User.objects.create_superuser("root")
    retired = make_user("old-organiser", organiser=True)
    retired.is_active = False
    retired.save()
    accounts = set(assessor_accounts())
    assert assessor in accounts
    assert not accounts & {organiser, staff, root, retired}


def test_everyone_manages_their_own_token(assessor, organiser):
    assert may_manage_token(assessor, assessor)
    assert may_manage_token(organiser, organiser)


def test_organisers_manage_assessors_tokens_only(organiser, assessor):
    other_organiser = make_user("oscar", organiser=True)
    staff = User.objects.create_user("sam", is_staff=True)
    root = User.objects.create_superuser("root")
    assert may_manage_token(organiser, assessor)
    for owner in (other_organiser, staff, root):
        assert not may_manage_token(organiser, owner), owner.username


def test_assessors_and_anonymous_users_manage_no_one_elses_token(assessor, assessor2):
    assert not may_manage_token(assessor, assessor2)
    assert not may_manage_token(AnonymousUser(), assessor)


def test_inactive_users_manage_nothing(assessor):
    assessor.is_active = False
    assert not may_manage_token(assessor, assessor)


def test_organisers_manage_assessor_accounts_and_superusers_every_account(organiser, assessor):
    other_organiser = make_user("oscar", organiser=True)
    staff = User.objects.create_user("sam", is_staff=True)
    root = User.objects.create_superuser("root")
    everyone = {organiser, assessor, other_organiser, staff, root}
    assert set(accounts_managed_by(organiser)) == {assessor}
    assert set(accounts_managed_by(staff)) == {assessor}
    assert set(accounts_managed_by(root)) == everyone
    assert not accounts_managed_by(assessor).exists()
    assert not accounts_managed_by(AnonymousUser()).exists()


def test_participants_are_neither_assessors_nor_organisers(participant, assessor, organiser):
    from tests.helpers import make_campaign, make_team
    from workbench.roles import is_organiser, is_participant

    assert not is_participant(participant)  # an account like any other until in a team
    make_team(make_campaign(), "Alpha", [participant])
    del participant._is_participant
    assert is_participant(participant)
    assert not is_organiser(participant)
    assert not is_participant(assessor)
    assert set(assessor_accounts()) == {assessor}


def test_organisers_manage_participant_accounts_and_tokens(organiser, participant):
    from tests.helpers import make_campaign, make_team

    make_team(make_campaign(), "Alpha", [participant])
    assert participant in set(accounts_managed_by(organiser))
    assert may_manage_token(organiser, participant)
    assert may_manage_token(participant, participant)
    assert not may_manage_token(participant, organiser)
