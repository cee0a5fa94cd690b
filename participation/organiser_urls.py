"""An organiser's pages for a campaign's teams: settings, members, late runs."""

from django.urls import path

from participation import views as team_views

app_name = "participation"
urlpatterns = [
    path("<slug:slug>/teams/", team_views.campaign_teams, name="campaign_teams"),
    path(
        "<slug:slug>/teams/settings/",
        team_views.submission_settings,
        name="submission_settings",
    ),
    path("<slug:slug>/teams/new/", team_views.team_create, name="team_create"),
    path(
        "<slug:slug>/teams/<int:team_id>/members/",
        team_views.team_members,
        name="team_members",
    ),
    path(
        "<slug:slug>/teams/<int:team_id>/accept-late/",
        team_views.team_accept_late,
        name="team_accept_late",
    ),
]
