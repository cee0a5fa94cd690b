"""Every app's API under /api/."""

from django.urls import include, path

from workbench.job_api import JobCancelView, JobRetryView, JobView
from workbench.token_api import OwnTokenView

urlpatterns = [
    path("", include("pooling.api_urls")),
    path("", include("judging.api_urls")),
    path("", include("scoring.api_urls")),
    path("", include("participation.api_urls")),
    path("jobs/<int:job_id>/", JobView.as_view(), name="api-job"),
    path("jobs/<int:job_id>/cancel/", JobCancelView.as_view(), name="api-job-cancel"),
    path("jobs/<int:job_id>/retry/", JobRetryView.as_view(), name="api-job-retry"),
    path("token/", OwnTokenView.as_view(), name="api-token"),
]
