"""The roles: organisers (staff or the `organiser` group), participants (members of a
team, `pooling.models.Team`) and assessors (every other account)."""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from rest_framework.permissions import BasePermission

ORGANISER_GROUP = "organiser"


def is_organiser(user: Any) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_staff or user.is_superuser:
        return True
    # Asked several times per request (view, template, menu): query once.
    if not hasattr(user, "_is_organiser"):
        user._is_organiser = user.groups.filter(name=ORGANISER_GROUP).exists()
    return user._is_organiser


def is_participant(user: Any) -> bool:
    """A member of a team: submits runs and sees only their team's; never an assessor."""
    if not user.is_authenticated or not user.is_active:
        return False
    if not hasattr(user, "_is_participant"):
        user._is_participant = user.teams.exists()
    return user._is_participant


def _non_organiser_accounts() -> QuerySet[Any]:
    """Accounts with no organiser rights (not staff, superuser or organiser), active or not."""
    return (
        get_user_model()
        .objects.filter(is_staff=False, is_superuser=False)
        .exclude(groups__name=ORGANISER_GROUP)
    )


def assessor_accounts() -> QuerySet[Any]:
    """Accounts with no organiser rights that are in no team (participants never
    judge), active or not."""
    return _non_organiser_accounts().exclude(teams__isnull=False)


def accounts_managed_by(actor: Any) -> QuerySet[Any]:
    """Accounts the actor may edit, deactivate and set passwords of in the admin.

    A superuser: every account. Another organiser (group or staff): assessor
    and participant accounts only, never their own, another organiser's, staff or
    a superuser's. Anyone else: none.
    """
    users = get_user_model().objects
    if not is_organiser(actor):
        return users.none()
    if actor.is_superuser:
        return users.all()
    return _non_organiser_accounts()


def may_manage_token(actor: Any, owner: Any) -> bool:
    """Everyone manages their own API token; organisers also assessors' and
    participants', never an organiser's."""
    if not actor.is_authenticated or not actor.is_active:
        return False
    if actor.pk == owner.pk:
        return True
    return is_organiser(actor) and _non_organiser_accounts().filter(pk=owner.pk).exists()


def organiser_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Login first; then 403 for anyone who is not an organiser."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_organiser(request.user):
            raise PermissionDenied("Organisers only.")
        return view(request, *args, **kwargs)

    return login_required(wrapper)


class IsOrganiser(BasePermission):
    message = "Organisers only."

    def has_permission(self, request: Any, view: Any) -> bool:
        return is_organiser(request.user)


def roles_context(request: HttpRequest) -> dict[str, Callable[[], bool]]:
    # Callables: templates call them only where they ask, so partial pages
    # (the judging panel swapped in by htmx) spend no query on them.
    return {
        "is_organiser": lambda: is_organiser(request.user),
        "is_participant": lambda: is_participant(request.user),
    }
