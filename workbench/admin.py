"""Organisers create assessor accounts in the admin."""

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User

from workbench.admin_site import OrganiserModelAdmin

admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class OrganiserUserAdmin(OrganiserModelAdmin, UserAdmin):
    pass


@admin.register(Group)
class OrganiserGroupAdmin(OrganiserModelAdmin, GroupAdmin):
    pass
