from django.urls import path

from judging import api, dashboard_views

urlpatterns = [
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
]
