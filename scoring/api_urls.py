from django.urls import path

from scoring import api

urlpatterns = [
    path(
        "pools/<int:pool_id>/qrels/", api.QrelsFormatsView.as_view(), name="api-pool-qrels-formats"
    ),
    path("pools/<int:pool_id>/qrels/<str:fmt>/", api.QrelsView.as_view(), name="api-pool-qrels"),
    path("pools/<int:pool_id>/bundle/", api.BundleView.as_view(), name="api-pool-bundle"),
    path("pools/<int:pool_id>/scores/", api.ScoresView.as_view(), name="api-pool-scores"),
    path(
        "pools/<int:pool_id>/leaderboard/",
        api.LeaderboardView.as_view(),
        name="api-pool-leaderboard",
    ),
]
