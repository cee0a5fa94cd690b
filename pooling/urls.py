from django.urls import path

from pooling import views

app_name = "pooling"
urlpatterns = [
    path("", views.campaign_list, name="campaign_list"),
    path("new/", views.campaign_create, name="campaign_create"),
    path("<slug:slug>/", views.campaign_detail, name="campaign_detail"),
    path("<slug:slug>/topics/", views.topics_upload, name="topics_upload"),
    path("<slug:slug>/documents/", views.documents_upload, name="documents_upload"),
    path("<slug:slug>/runs/", views.runs_upload, name="runs_upload"),
]
