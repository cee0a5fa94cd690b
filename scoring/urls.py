from django.urls import path

from scoring import views

app_name = "scoring"
urlpatterns = [
    path("pools/<int:pool_id>/", views.pool_scores, name="pool_scores"),
    path("pools/<int:pool_id>/stability/", views.pool_stability, name="pool_stability"),
    path("pools/<int:pool_id>/qrels/", views.pool_qrels, name="pool_qrels"),
    path("pools/<int:pool_id>/qrels/<str:fmt>/", views.qrels_download, name="qrels_download"),
    path("pools/<int:pool_id>/bundle/", views.bundle_download, name="bundle_download"),
    path("pools/<int:pool_id>/bundle/job/", views.bundle_job, name="bundle_job"),
]
