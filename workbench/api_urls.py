"""Every app's API under /api/."""

from django.urls import include, path

urlpatterns = [
    path("", include("pooling.api_urls")),
    path("", include("judging.api_urls")),
    path("", include("scoring.api_urls")),
]
