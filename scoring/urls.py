from django.urls import path

from scoring import leaderboard_views, views

app_name = "scoring"
urlpatterns = [
    path("pools/<int:pool_id>/", views.pool_scores, name="pool_scores"),
    path(
        "pools/<int:pool_id>/leaderboard/",
        leaderboard_views.pool_leaderboard,
        name="pool_leaderboard",
    ),
    path(
        "pools/<int:pool_id>/leaderboard/plots/<str:kind>/",
        leaderboard_views.leaderboard_plot,
        name="leaderboard_plot",
    ),
    path("pools/<int:pool_id>/stability/", views.pool_stability, name="pool_stability"),
    path("pools/<int:pool_id>/qrels/", views.pool_qrels, name="pool_qrels"),
    path("pools/<int:pool_id>/qrels/<str:fmt>/", views.qrels_download, name="qrels_download"),
    path("pools/<int:pool_id>/bundle/", views.bundle_download, name="bundle_download"),
    path("pools/<int:pool_id>/bundle/job/", views.bundle_job, name="bundle_job"),
]
