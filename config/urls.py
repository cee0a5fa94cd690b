from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularSwaggerView

from workbench import views
from workbench.schema import SchemaView

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
    path("campaigns/", include("participation.organiser_urls")),
    path("judge/", include("judging.urls")),
    path("teams/", include("participation.urls")),
    path("scores/", include("scoring.urls")),
    # Where a team's scores were before they joined the team's pages.
    path(
        "scores/teams/<int:team_id>/",
        RedirectView.as_view(pattern_name="teams:team_scores", permanent=True, query_string=True),
    ),
    path(
        "scores/teams/<int:team_id>/leaderboard/",
        RedirectView.as_view(
            pattern_name="teams:team_leaderboard", permanent=True, query_string=True
        ),
    ),
    path("api/", include("config.api_urls")),
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    # People are sent to log in; the schema itself answers 401 (SPECTACULAR_SETTINGS).
    path(
        "api/docs/",
        login_required(SpectacularSwaggerView.as_view(url_name="api-schema")),
        name="api-docs",
    ),
]

handler400 = "workbench.api.bad_request"
handler403 = "workbench.api.permission_denied"
handler404 = "workbench.api.not_found"
handler500 = "workbench.api.server_error"
