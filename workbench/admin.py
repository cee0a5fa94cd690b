"""Accounts in the admin.

A superuser keeps Django's full user admin. Other organisers (the
`organiser` group, or staff without superuser rights) list, add, edit,
deactivate and set the password of assessor accounts only, through forms
without is_staff, is_superuser, groups or user_permissions; which accounts
those are is decided once, in `roles.accounts_managed_by`. Groups and API
tokens are the superuser's (organisers manage assessors' tokens on the
token page, under `roles.may_manage_token`).
"""

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from django.db.models import QuerySet
from django.http import Http404, HttpRequest
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from workbench.roles import accounts_managed_by, is_organiser

admin.site.unregister(User)
admin.site.unregister(Group)
admin.site.unregister(TokenProxy)

ASSESSOR_FIELDSETS = (
    (None, {"fields": ("username", "password")}),
    ("Personal info", {"fields": ("first_name", "last_name", "email")}),
    ("Status", {"fields": ("is_active",)}),
    ("Important dates", {"fields": ("last_login", "date_joined")}),
)


def _is_superuser(request: HttpRequest) -> bool:
    return bool(request.user.is_active and request.user.is_superuser)


@admin.register(User)
class AccountAdmin(UserAdmin):
    """Django's user admin, narrowed to assessor accounts for organisers who are not superusers."""

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        managed = accounts_managed_by(request.user).values("pk")
        return super().get_queryset(request).filter(pk__in=managed)

    def get_object(self, request: HttpRequest, object_id: str, from_field: Any = None) -> Any:
        user = super().get_object(request, object_id, from_field)
        if user is None and not _is_superuser(request):
            # Not "does not exist, perhaps deleted" with a redirect: not yours.
            raise Http404("No account you manage has this id.")
        return user

    def _manages(self, request: HttpRequest, obj: Any) -> bool:
        if obj is None:
            return is_organiser(request.user)
        return accounts_managed_by(request.user).filter(pk=obj.pk).exists()

    def has_module_permission(self, request: HttpRequest) -> bool:
        return is_organiser(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._manages(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return is_organiser(request.user)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._manages(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Deleting an assessor deletes their judgments: organisers deactivate instead.
        return _is_superuser(request) and self._manages(request, obj)

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None or _is_superuser(request):
            return super().get_fieldsets(request, obj)
        return ASSESSOR_FIELDSETS

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if _is_superuser(request):
            return super().get_readonly_fields(request, obj)
        return ("last_login", "date_joined")

    def get_list_display(self, request: HttpRequest) -> Any:
        if _is_superuser(request):
            return super().get_list_display(request)
        return ("username", "email", "first_name", "last_name", "is_active", "last_login")

    def get_list_filter(self, request: HttpRequest) -> Any:
        if _is_superuser(request):
            return super().get_list_filter(request)
        return ("is_active",)


class SuperuserOnlyAdmin(admin.ModelAdmin):
    """Superusers only, whatever permissions a staff account was given."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _is_superuser(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _is_superuser(request)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return _is_superuser(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _is_superuser(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _is_superuser(request)


@admin.register(Group)
class SuperuserGroupAdmin(SuperuserOnlyAdmin, GroupAdmin):
    pass


@admin.register(TokenProxy)
class SuperuserTokenAdmin(SuperuserOnlyAdmin, TokenAdmin):
    pass
