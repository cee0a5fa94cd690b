from django.urls import path

from pooling import api, team_api

urlpatterns = [
    path("campaigns/", api.CampaignListView.as_view(), name="api-campaigns"),
    path("campaigns/<slug:slug>/runs/", api.CampaignRunsView.as_view(), name="api-campaign-runs"),
    path("teams/", team_api.TeamListView.as_view(), name="api-teams"),
    path("teams/<int:team_id>/runs/", team_api.TeamRunsView.as_view(), name="api-team-runs"),
    path(
        "teams/<int:team_id>/precedence/",
        team_api.TeamPrecedenceView.as_view(),
        name="api-team-precedence",
    ),
]
