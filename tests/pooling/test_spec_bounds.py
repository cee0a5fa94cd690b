"""Depths, strata and seeds past what a database integer holds are refused with the
reason, on the pages and the API alike (they were an OverflowError 500)."""

from __future__ import annotations

import pytest

from pooling import pool_services
from pooling.core.spec import PoolSpec
from tests.helpers import make_campaign, make_documents, make_run

pytestmark = pytest.mark.django_db

HUGE = "99999999999999999999"


@pytest.fixture
def pool():
    campaign = make_campaign(topics=("1", "2"))
    make_documents(campaign, ["d1", "d2", "d3"])
    make_run(campaign, "r", {"1": ["d1", "d2", "d3"], "2": ["d1"]})
    return pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=2))


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"depth": HUGE}, "depth must be at most 9,223,372,036,854,775,807"),
        ({"depth": "9" * 10_000}, "is not an integer"),
        ({"depth": "10", "strata": f"11-{HUGE}:0.5"}, "ranks end at 9,223,372,036,854,775,807"),
        ({"depth": "10", "seed": HUGE}, "the seed must be at most"),
    ],
)
def test_a_depth_stratum_or_seed_past_its_range_is_refused(organiser_client, pool, params, reason):
    slug = pool.campaign.slug
    for url in (
        f"/campaigns/{slug}/pools/whatif/",
        f"/api/campaigns/{slug}/pools/whatif/",
        f"/campaigns/{slug}/pools/new/",
        f"/api/pools/{pool.pk}/replan/",
    ):
        if "seed" in params and "replan" in url:
            continue  # a re-plan keeps the pool's seed
        response = organiser_client.get(url, params)
        assert response.status_code in (200, 400), url  # a page shows its form's errors
        assert reason in response.content.decode().replace("&#x27;", "'"), url
