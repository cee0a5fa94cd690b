from django.urls import path

from pooling import api

urlpatterns = [
    path("campaigns/", api.CampaignListView.as_view(), name="api-campaigns"),
    path("campaigns/<slug:slug>/runs/", api.CampaignRunsView.as_view(), name="api-campaign-runs"),
]
