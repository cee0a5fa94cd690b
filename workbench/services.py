"""Writes for accounts: API tokens (DRF's `Token`, one per user).

Who may call these for whom is decided in `roles.may_manage_token`; the
callers check it before calling.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from rest_framework.authtoken.models import Token


def token_create(*, user: Any) -> Token:
    """A new API token for the user; the one they had stops working at once."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)


def token_revoke(*, user: Any) -> bool:
    """Delete the user's API token; False if they had none."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return deleted > 0
