from django.urls import path

from pooling import api, pool_api, run_api

urlpatterns = [
    path("campaigns/", api.CampaignListView.as_view(), name="api-campaigns"),
    path("campaigns/<slug:slug>/", api.CampaignView.as_view(), name="api-campaign"),
    path("campaigns/<slug:slug>/topics/", api.CampaignTopicsView.as_view(), name="api-topics"),
    path(
        "campaigns/<slug:slug>/topics/<path:topic_id>/",
        api.TopicView.as_view(),
        name="api-topic",
    ),
    path("campaigns/<slug:slug>/answers/", api.CampaignAnswersView.as_view(), name="api-answers"),
    path(
        "campaigns/<slug:slug>/documents/",
        api.CampaignDocumentsView.as_view(),
        name="api-documents",
    ),
    path(
        "campaigns/<slug:slug>/documents/<path:docno>/",
        api.DocumentView.as_view(),
        name="api-document",
    ),
    path(
        "campaigns/<slug:slug>/runs/", run_api.CampaignRunsView.as_view(), name="api-campaign-runs"
    ),
    path("campaigns/<slug:slug>/runs/<int:run_id>/", run_api.RunView.as_view(), name="api-run"),
    path(
        "campaigns/<slug:slug>/runs/<int:run_id>/replace/",
        run_api.RunReplaceView.as_view(),
        name="api-run-replace",
    ),
    path("campaigns/<slug:slug>/pools/", pool_api.CampaignPoolsView.as_view(), name="api-pools"),
    path(
        "campaigns/<slug:slug>/pools/whatif/",
        pool_api.PoolWhatIfView.as_view(),
        name="api-pool-whatif",
    ),
    path("pools/<int:pool_id>/", pool_api.PoolView.as_view(), name="api-pool"),
    path(
        "pools/<int:pool_id>/entries/", pool_api.PoolEntriesView.as_view(), name="api-pool-entries"
    ),
    path("pools/<int:pool_id>/runs/", pool_api.PoolRunsView.as_view(), name="api-pool-runs"),
    path("pools/<int:pool_id>/replan/", pool_api.PoolReplanView.as_view(), name="api-pool-replan"),
    path("pools/<int:pool_id>/budget/", pool_api.PoolBudgetView.as_view(), name="api-pool-budget"),
    path("pools/<int:pool_id>/retire/", pool_api.PoolRetireView.as_view(), name="api-pool-retire"),
    path("pools/<int:pool_id>/reopen/", pool_api.PoolReopenView.as_view(), name="api-pool-reopen"),
]
