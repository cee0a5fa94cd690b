from django.urls import path

from judging import answer_api, api, dashboard_views, organiser_api

urlpatterns = [
    path(
        "campaigns/<slug:slug>/answer-runs/",
        answer_api.AnswerRunsView.as_view(),
        name="api-answer-runs",
    ),
    path("campaigns/<slug:slug>/nuggets/", answer_api.NuggetsView.as_view(), name="api-nuggets"),
    path(
        "campaigns/<slug:slug>/status/",
        dashboard_views.CampaignStatusView.as_view(),
        name="api-campaign-status",
    ),
    path("assignments/", api.AssignmentListView.as_view(), name="api-assignments"),
    path(
        "assignments/<int:assignment_id>/next/",
        api.NextDocumentView.as_view(),
        name="api-assignment-next",
    ),
    path(
        "assignments/<int:assignment_id>/judgments/",
        api.AssignmentJudgmentsView.as_view(),
        name="api-assignment-judgments",
    ),
    path(
        "assignments/<int:assignment_id>/judgments/<path:docno>/",
        api.JudgmentView.as_view(),
        name="api-judgment",
    ),
    path(
        "assignments/<int:assignment_id>/notes/",
        api.AssignmentNotesView.as_view(),
        name="api-assignment-notes",
    ),
    path(
        "assignments/<int:assignment_id>/notes/<path:docno>/",
        api.NoteView.as_view(),
        name="api-note",
    ),
    path(
        "pools/<int:pool_id>/judgments/", api.PoolJudgmentsView.as_view(), name="api-pool-judgments"
    ),
    path(
        "campaigns/<slug:slug>/judgments/",
        organiser_api.CampaignJudgmentsImportView.as_view(),
        name="api-judgments-import",
    ),
    path(
        "pools/<int:pool_id>/assignments/",
        organiser_api.PoolAssignmentsView.as_view(),
        name="api-pool-assignments",
    ),
    path(
        "pools/<int:pool_id>/assignments/<int:assignment_id>/",
        organiser_api.PoolAssignmentView.as_view(),
        name="api-pool-assignment",
    ),
    path(
        "pools/<int:pool_id>/overlap/",
        organiser_api.PoolOverlapView.as_view(),
        name="api-pool-overlap",
    ),
    path(
        "pools/<int:pool_id>/agreement/",
        organiser_api.PoolAgreementView.as_view(),
        name="api-pool-agreement",
    ),
    path(
        "pools/<int:pool_id>/adjudication/",
        organiser_api.PoolAdjudicationView.as_view(),
        name="api-pool-adjudication",
    ),
    path(
        "pools/<int:pool_id>/policy/",
        organiser_api.PoolPolicyView.as_view(),
        name="api-pool-policy",
    ),
]
