"""A participant's pages: their teams, each team's runs (see `pooling.team_views`)."""

from django.urls import path

from pooling import team_views

app_name = "teams"
urlpatterns = [
    path("", team_views.team_home, name="team_home"),
    path("<int:team_id>/", team_views.team_detail, name="team_detail"),
    path("<int:team_id>/runs/", team_views.team_run_upload, name="team_run_upload"),
    path("<int:team_id>/precedence/", team_views.team_precedence, name="team_precedence"),
    path(
        "<int:team_id>/runs/<int:run_id>/withdraw/",
        team_views.team_run_withdraw,
        name="team_run_withdraw",
    ),
]
