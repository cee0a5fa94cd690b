"""A participant's pages: their teams, each team's runs and, once released, their scores."""

from django.urls import path

from participation import scores_views
from participation import views as team_views

app_name = "teams"
urlpatterns = [
    path("", team_views.team_home, name="team_home"),
    path("<int:team_id>/", team_views.team_detail, name="team_detail"),
    path("<int:team_id>/runs/", team_views.team_run_upload, name="team_run_upload"),
    path("<int:team_id>/answers/", team_views.team_answers_upload, name="team_answers_upload"),
    path("<int:team_id>/precedence/", team_views.team_precedence, name="team_precedence"),
    path(
        "<int:team_id>/runs/<int:run_id>/withdraw/",
        team_views.team_run_withdraw,
        name="team_run_withdraw",
    ),
    path(
        "<int:team_id>/answer-scores/",
        scores_views.team_answer_scores_page,
        name="team_answer_scores",
    ),
    path("<int:team_id>/scores/", scores_views.team_scores_page, name="team_scores"),
    path(
        "<int:team_id>/leaderboard/",
        scores_views.team_leaderboard_page,
        name="team_leaderboard",
    ),
]
