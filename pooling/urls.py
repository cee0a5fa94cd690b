from django.urls import path

from pooling import pool_views, views

app_name = "pooling"
urlpatterns = [
    path("", views.campaign_list, name="campaign_list"),
    path("new/", views.campaign_create, name="campaign_create"),
    path("<slug:slug>/", views.campaign_detail, name="campaign_detail"),
    path("<slug:slug>/edit/", views.campaign_edit, name="campaign_edit"),
    path("<slug:slug>/topics/", views.topics_upload, name="topics_upload"),
    path("<slug:slug>/answers/", views.answers_upload, name="answers_upload"),
    path("<slug:slug>/documents/", views.documents_upload, name="documents_upload"),
    path("<slug:slug>/runs/", views.runs_upload, name="runs_upload"),
    path("<slug:slug>/runs/<int:run_id>/delete/", views.run_delete, name="run_delete"),
    path("<slug:slug>/runs/<int:run_id>/replace/", views.run_replace, name="run_replace"),
    path("<slug:slug>/pools/new/", pool_views.pool_new, name="pool_new"),
    path("<slug:slug>/pools/whatif/", pool_views.pool_whatif, name="pool_whatif"),
    path("<slug:slug>/pools/<int:pool_id>/", pool_views.pool_detail, name="pool_detail"),
    path(
        "<slug:slug>/pools/<int:pool_id>/plots/<str:kind>/",
        pool_views.pool_plot,
        name="pool_plot",
    ),
    path(
        "<slug:slug>/pools/<int:pool_id>/add-runs/",
        pool_views.pool_add_runs,
        name="pool_add_runs",
    ),
    path("<slug:slug>/pools/<int:pool_id>/replan/", pool_views.pool_replan, name="pool_replan"),
    path("<slug:slug>/pools/<int:pool_id>/retire/", pool_views.pool_retire, name="pool_retire"),
    path("<slug:slug>/pools/<int:pool_id>/reopen/", pool_views.pool_reopen, name="pool_reopen"),
    path(
        "<slug:slug>/pools/<int:pool_id>/export/<str:kind>/",
        pool_views.pool_export,
        name="pool_export",
    ),
]
