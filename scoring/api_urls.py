from django.urls import path

from scoring import answer_api, api, calibration_api, release_api, task_api

urlpatterns = [
    path(
        "pools/<int:pool_id>/qrels/", api.QrelsFormatsView.as_view(), name="api-pool-qrels-formats"
    ),
    path("pools/<int:pool_id>/qrels/<str:fmt>/", api.QrelsView.as_view(), name="api-pool-qrels"),
    path("pools/<int:pool_id>/bundle/", api.BundleView.as_view(), name="api-pool-bundle"),
    path("pools/<int:pool_id>/scores/", api.ScoresView.as_view(), name="api-pool-scores"),
    path(
        "pools/<int:pool_id>/calibration/",
        calibration_api.CalibrationView.as_view(),
        name="api-pool-calibration",
    ),
    path(
        "pools/<int:pool_id>/leaderboard/",
        api.LeaderboardView.as_view(),
        name="api-pool-leaderboard",
    ),
    path(
        "pools/<int:pool_id>/strategies/",
        api.StrategyReplayView.as_view(),
        name="api-pool-strategy-replay",
    ),
    path(
        "pools/<int:pool_id>/reusability/",
        api.ReusabilityView.as_view(),
        name="api-pool-reusability",
    ),
    path(
        "pools/<int:pool_id>/releases/",
        release_api.PoolReleasesView.as_view(),
        name="api-pool-releases",
    ),
    path(
        "pools/<int:pool_id>/releases/compare/",
        release_api.PoolReleaseCompareView.as_view(),
        name="api-pool-releases-compare",
    ),
    path(
        "pools/<int:pool_id>/releases/<int:version>/",
        release_api.PoolReleaseView.as_view(),
        name="api-pool-release",
    ),
    path(
        "pools/<int:pool_id>/releases/<int:version>/withdraw/",
        release_api.PoolReleaseWithdrawView.as_view(),
        name="api-pool-release-withdraw",
    ),
    path(
        "pools/<int:pool_id>/releases/<int:version>/bundle/",
        release_api.PoolReleaseBundleView.as_view(),
        name="api-pool-release-bundle",
    ),
    path(
        "pools/<int:pool_id>/releases/<int:version>/files/<str:name>",
        release_api.PoolReleaseFileView.as_view(),
        name="api-pool-release-file",
    ),
    path(
        "campaigns/<slug:slug>/nugget-scores/",
        answer_api.NuggetScoresView.as_view(),
        name="api-nugget-scores",
    ),
    path(
        "campaigns/<slug:slug>/citation-scores/",
        answer_api.CitationScoresView.as_view(),
        name="api-citation-scores",
    ),
    path("campaigns/<slug:slug>/gold/", task_api.TaskGoldView.as_view(), name="api-task-gold"),
    path(
        "campaigns/<slug:slug>/submissions/",
        task_api.TaskSubmissionsView.as_view(),
        name="api-task-submissions",
    ),
    path(
        "campaigns/<slug:slug>/submissions/<int:submission_id>/",
        task_api.TaskSubmissionView.as_view(),
        name="api-task-submission",
    ),
    path(
        "campaigns/<slug:slug>/submissions/<int:submission_id>/replace/",
        task_api.TaskSubmissionReplaceView.as_view(),
        name="api-task-submission-replace",
    ),
    path(
        "campaigns/<slug:slug>/scores/<str:subtask>/",
        task_api.TaskScoresView.as_view(),
        name="api-task-scores",
    ),
]
