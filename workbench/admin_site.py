"""The Django admin, opened to organisers (staff or the `organiser` group)."""

from typing import Any

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest

from workbench.roles import is_organiser


class OrganiserAdminSite(admin.AdminSite):
    site_header = "Judging workbench administration"
    site_title = "Workbench admin"

    def has_permission(self, request: HttpRequest) -> bool:
        return is_organiser(request.user)


class WorkbenchAdminConfig(AdminConfig):
    default_site = "workbench.admin_site.OrganiserAdminSite"


class OrganiserModelAdmin(admin.ModelAdmin):
    """Organisers manage campaign data without per-model permissions."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return is_organiser(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_organiser(request.user)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return is_organiser(request.user)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_organiser(request.user)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_organiser(request.user)
