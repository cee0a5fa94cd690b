from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from workbench import views

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/tokens/", views.api_tokens, name="api_tokens"),
    path("accounts/tokens/<int:user_id>/create/", views.api_token_create, name="api_token_create"),
    path("accounts/tokens/<int:user_id>/revoke/", views.api_token_revoke, name="api_token_revoke"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("jobs/<int:job_id>/", views.job_detail, name="job_detail"),
    path("jobs/<int:job_id>/file/", views.job_file, name="job_file"),
    path("jobs/<int:job_id>/cancel/", views.cancel_job, name="job_cancel"),
    path("jobs/<int:job_id>/retry/", views.retry_job, name="job_retry"),
    path("admin/", admin.site.urls),
    path("campaigns/", include("pooling.urls")),
    path("judge/", include("judging.urls")),
    path("teams/", include("pooling.team_urls")),
    path("scores/", include("scoring.urls")),
    path("api/", include("workbench.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # People are sent to log in; the schema itself answers 401 (SPECTACULAR_SETTINGS).
    path(
        "api/docs/",
        login_required(SpectacularSwaggerView.as_view(url_name="api-schema")),
        name="api-docs",
    ),
]

handler404 = "workbench.api.not_found"
handler500 = "workbench.api.server_error"
