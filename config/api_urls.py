"""Every app's API under /api/."""

from django.urls import include, path

from workbench.job_api import JobView
from workbench.token_api import OwnTokenView

urlpatterns = [
    path("", include("pooling.api_urls")),
    path("", include("judging.api_urls")),
    path("", include("scoring.api_urls")),
    path("", include("participation.api_urls")),
    path("jobs/<int:job_id>/", JobView.as_view(), name="api-job"),
    path("token/", OwnTokenView.as_view(), name="api-token"),
]
