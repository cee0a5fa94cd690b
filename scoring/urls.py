from django.urls import path

from scoring import (
    answer_leaderboard_views,
    answer_views,
    calibration_views,
    leaderboard_views,
    release_views,
    replay_views,
    reusability_views,
    task_views,
    views,
)

app_name = "scoring"
urlpatterns = [
    path("answers/<slug:slug>/", answer_views.answer_scores, name="answer_scores"),
    path(
        "answers/<slug:slug>/leaderboard/",
        answer_leaderboard_views.answer_leaderboard,
        name="answer_leaderboard",
    ),
    path(
        "answers/<slug:slug>/leaderboard/plots/<str:kind>/",
        answer_leaderboard_views.answer_leaderboard_plot,
        name="answer_leaderboard_plot",
    ),
    path(
        "answers/<slug:slug>/release/",
        answer_views.answer_scores_release,
        name="answer_scores_release",
    ),
    path(
        "answers/<slug:slug>/export/<str:fmt>/",
        answer_views.answer_scores_export,
        name="answer_scores_export",
    ),
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
    path(
        "pools/<int:pool_id>/strategies/",
        replay_views.pool_strategy_replay,
        name="pool_strategy_replay",
    ),
    path(
        "pools/<int:pool_id>/strategies/<int:job_id>.<str:fmt>",
        replay_views.pool_strategy_replay_plot,
        name="pool_strategy_replay_plot",
    ),
    path(
        "pools/<int:pool_id>/reusability/",
        reusability_views.pool_reusability,
        name="pool_reusability",
    ),
    path("pools/<int:pool_id>/stability/", views.pool_stability, name="pool_stability"),
    path("pools/<int:pool_id>/qrels/", views.pool_qrels, name="pool_qrels"),
    path(
        "pools/<int:pool_id>/calibration/",
        calibration_views.pool_calibration,
        name="pool_calibration",
    ),
    path("pools/<int:pool_id>/qrels/<str:fmt>/", views.qrels_download, name="qrels_download"),
    path("pools/<int:pool_id>/bundle/", views.bundle_download, name="bundle_download"),
    path("pools/<int:pool_id>/bundle/job/", views.bundle_job, name="bundle_job"),
    path("pools/<int:pool_id>/releases/", release_views.pool_releases, name="pool_releases"),
    path(
        "pools/<int:pool_id>/releases/<int:version>/",
        release_views.release_detail,
        name="release_detail",
    ),
    path(
        "pools/<int:pool_id>/releases/<int:version>/withdraw/",
        release_views.release_withdraw,
        name="release_withdraw",
    ),
    path(
        "pools/<int:pool_id>/releases/<int:version>/bundle/",
        release_views.release_bundle,
        name="release_bundle",
    ),
    path(
        "pools/<int:pool_id>/releases/<int:version>/files/<str:name>",
        release_views.release_file,
        name="release_file",
    ),
    path("tasks/<slug:slug>/", task_views.task_campaign, name="task_campaign"),
    path("tasks/<slug:slug>/gold/", task_views.task_gold_upload, name="task_gold_upload"),
    path(
        "tasks/<slug:slug>/submissions/",
        task_views.task_submission_upload,
        name="task_submission_upload",
    ),
    path(
        "tasks/<slug:slug>/submissions/<int:submission_id>/",
        task_views.task_submission,
        name="task_submission",
    ),
    path(
        "tasks/<slug:slug>/submissions/<int:submission_id>/replace/",
        task_views.task_submission_replace,
        name="task_submission_replace",
    ),
    path(
        "tasks/<slug:slug>/submissions/<int:submission_id>/delete/",
        task_views.task_submission_delete,
        name="task_submission_delete",
    ),
    path("tasks/<slug:slug>/scores/<str:subtask>/", task_views.task_scores, name="task_scores"),
]
