from django.urls import path, register_converter

from judging import (
    answer_organiser_views,
    answer_views,
    dashboard_views,
    machine_views,
    organiser_views,
    views,
)
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
        "answers/a/<int:assignment_id>/", answer_views.answer_judge_next, name="answer_judge_next"
    ),
    path(
        "answers/a/<int:assignment_id>/<int:position>/",
        answer_views.answer_judge,
        name="answer_judge",
    ),
    path(
        "answers/a/<int:assignment_id>/<int:position>/cannot/",
        answer_views.answer_cannot,
        name="answer_cannot",
    ),
    path("answers/a/<int:assignment_id>/undo/", answer_views.answer_undo, name="answer_undo"),
    path(
        "campaigns/<slug:slug>/answers/",
        answer_organiser_views.answers_campaign,
        name="answers_campaign",
    ),
    path(
        "campaigns/<slug:slug>/answers/upload/",
        answer_organiser_views.answers_upload,
        name="answers_upload",
    ),
    path(
        "campaigns/<slug:slug>/answers/runs/<int:run_id>/delete/",
        answer_organiser_views.answer_run_delete,
        name="answer_run_delete",
    ),
    path(
        "campaigns/<slug:slug>/answers/agreement/",
        answer_organiser_views.answers_agreement,
        name="answers_agreement",
    ),
    path(
        "campaigns/<slug:slug>/answers/adjudication/",
        answer_organiser_views.answers_adjudication,
        name="answers_adjudication",
    ),
    path(
        "campaigns/<slug:slug>/answers/adjudicate/<int:answer_id>/",
        answer_organiser_views.answer_adjudicate,
        name="answer_adjudicate",
    ),
    path(
        "campaigns/<slug:slug>/answers/assign/",
        answer_organiser_views.answer_assign,
        name="answer_assign",
    ),
    path(
        "campaigns/<slug:slug>/nuggets/<int:topic_id>/propose/",
        answer_organiser_views.nuggets_propose,
        name="nuggets_propose",
    ),
    path(
        "campaigns/<slug:slug>/answers/machine/",
        answer_organiser_views.answers_machine,
        name="answers_machine",
    ),
    path(
        "campaigns/<slug:slug>/nuggets/import/",
        answer_organiser_views.nuggets_import,
        name="nuggets_import",
    ),
    path(
        "campaigns/<slug:slug>/nuggets/export/",
        answer_organiser_views.nuggets_export,
        name="nuggets_export",
    ),
    path(
        "campaigns/<slug:slug>/nuggets/<int:topic_id>/",
        answer_organiser_views.nuggets_edit,
        name="nuggets_edit",
    ),
    path(
        "pools/<int:pool_id>/assignments/",
        organiser_views.pool_assignments,
        name="pool_assignments",
    ),
    path("pools/<int:pool_id>/overlap/", organiser_views.pool_overlap, name="pool_overlap"),
    path("pools/<int:pool_id>/machines/", machine_views.pool_machines, name="pool_machines"),
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
