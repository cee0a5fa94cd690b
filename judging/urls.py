from django.urls import path

from judging import views

app_name = "judging"
urlpatterns = [
    path("", views.assessor_home, name="assessor_home"),
    path("a/<int:assignment_id>/", views.judge_next, name="judge_next"),
    path("a/<int:assignment_id>/<int:position>/", views.judge, name="judge"),
    path("a/<int:assignment_id>/undo/", views.judge_undo, name="judge_undo"),
    path("a/<int:assignment_id>/judged/", views.judged_list, name="judged_list"),
    path("pools/<int:pool_id>/assignments/", views.pool_assignments, name="pool_assignments"),
    path("history/<int:topic_id>/<str:docno>/", views.document_history, name="document_history"),
]
