from django.urls import path, register_converter

from judging import dashboard_views, organiser_views, views
from workbench.converters import DocnoConverter

register_converter(DocnoConverter, "docno")

app_name = "judging"
urlpatterns = [
    path("", views.assessor_home, name="assessor_home"),
    path("a/<int:assignment_id>/", views.judge_next, name="judge_next"),
    path("a/<int:assignment_id>/<int:position>/", views.judge, name="judge"),
    path("a/<int:assignment_id>/<int:position>/cannot/", views.judge_cannot, name="judge_cannot"),
    path("a/<int:assignment_id>/undo/", views.judge_undo, name="judge_undo"),
    path("a/<int:assignment_id>/judged/", views.judged_list, name="judged_list"),
    path(
        "a/<int:assignment_id>/judged/<path:docno>/",
        views.judge_document,
        name="judge_document",
    ),
    path(
        "pools/<int:pool_id>/assignments/",
        organiser_views.pool_assignments,
        name="pool_assignments",
    ),
    path("pools/<int:pool_id>/overlap/", organiser_views.pool_overlap, name="pool_overlap"),
    path("pools/<int:pool_id>/agreement/", organiser_views.pool_agreement, name="pool_agreement"),
    path(
        "pools/<int:pool_id>/adjudication/",
        organiser_views.pool_adjudication,
        name="pool_adjudication",
    ),
    path(
        "pools/<int:pool_id>/adjudicate/<int:topic_id>/<docno:docno>/",
        organiser_views.adjudicate,
        name="adjudicate",
    ),
    path(
        "campaigns/<slug:slug>/dashboard/",
        dashboard_views.campaign_dashboard,
        name="campaign_dashboard",
    ),
    path(
        "campaigns/<slug:slug>/forecast-change/",
        dashboard_views.forecast_change,
        name="forecast_change",
    ),
    path(
        "campaigns/<slug:slug>/cannot-judge/<int:note_id>/give-back/",
        dashboard_views.note_give_back,
        name="note_give_back",
    ),
    path("history/", organiser_views.document_history_lookup, name="document_history_lookup"),
    path(
        "history/<int:topic_id>/<docno:docno>/",
        organiser_views.document_history,
        name="document_history",
    ),
]
