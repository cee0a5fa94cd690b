"""A participant's API: teams, their runs and precedence, and the releases they were given."""

from django.urls import path

from participation import api as team_api
from participation import scores_api

urlpatterns = [
    path("teams/", team_api.TeamListView.as_view(), name="api-teams"),
    path(
        "campaigns/<slug:slug>/teams/",
        team_api.CampaignTeamsView.as_view(),
        name="api-campaign-teams",
    ),
    path(
        "campaigns/<slug:slug>/team-settings/",
        team_api.CampaignSubmissionsView.as_view(),
        name="api-campaign-submissions",
    ),
    path("teams/<int:team_id>/runs/", team_api.TeamRunsView.as_view(), name="api-team-runs"),
    path(
        "teams/<int:team_id>/runs/<int:run_id>/",
        team_api.TeamRunView.as_view(),
        name="api-team-run",
    ),
    path(
        "teams/<int:team_id>/precedence/",
        team_api.TeamPrecedenceView.as_view(),
        name="api-team-precedence",
    ),
    path(
        "teams/<int:team_id>/releases/",
        scores_api.TeamReleasesView.as_view(),
        name="api-team-releases",
    ),
    path(
        "teams/<int:team_id>/scores/", scores_api.TeamScoresView.as_view(), name="api-team-scores"
    ),
    path(
        "teams/<int:team_id>/leaderboard/",
        scores_api.TeamLeaderboardView.as_view(),
        name="api-team-leaderboard",
    ),
]
