"""The re-plan page of an adaptive pool sets its judging budget (as the API does)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from pooling import pool_services
from pooling.core.spec import PoolSpec
from tests.helpers import make_campaign, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    campaign = make_campaign(judgment_budget=100)
    make_run(campaign, "a", {"301": ["d1", "d2", "d3"], "302": ["d4", "d5"]})
    make_run(campaign, "b", {"301": ["d3", "d6"], "302": ["d5", "d7"]})
    return campaign


@pytest.fixture
def adaptive(campaign):
    return pool_services.pool_build(
        campaign=campaign, spec=PoolSpec(depth=3, strategy="mtf", budget=4)
    )


def url(pool) -> str:
    return reverse("pooling:pool_replan", args=[pool.campaign.slug, pool.pk])


def budget_of(pool) -> int:
    pool.refresh_from_db()
    return pool.spec["budget"]


def test_the_page_previews_then_sets_an_adaptive_pools_budget(organiser_client, adaptive):
    page = organiser_client.get(url(adaptive)).content.decode()
    assert "Judging budget" in page
    assert 'name="budget" min="1" value="4"' in page
    assert 'name="depth"' not in page
    preview = organiser_client.get(url(adaptive), {"budget": "6"}).content.decode()
    assert "Budget 4 &rarr; 6 judgments; documents still to judge: +2." in preview
    assert "2 new judgments; budget 100: 0 spent, 100 left." in preview
    assert "forecast-change/?change=2" in preview
    assert budget_of(adaptive) == 4
    response = organiser_client.post(url(adaptive), {"budget": "6"})
    assert response.status_code == 302
    assert response.url == reverse(
        "pooling:pool_detail", args=[adaptive.campaign.slug, adaptive.pk]
    )
    assert budget_of(adaptive) == 6
    lowered = organiser_client.post(url(adaptive), {"budget": "2"}, follow=True)
    assert "judging budget 6 -&gt; 2 judgments" in lowered.content.decode()
    assert budget_of(adaptive) == 2


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("0", "an adaptive pool&#x27;s budget must be 1 or more, not 0"),
        ("-3", "an adaptive pool&#x27;s budget must be 1 or more, not -3"),
        ("many", "budget: Enter a whole number."),
        ("", "budget: This field is required."),
    ],
)
def test_a_bad_budget_is_a_400_with_its_reason_and_changes_nothing(
    organiser_client, adaptive, value, reason
):
    response = organiser_client.post(url(adaptive), {"budget": value})
    assert response.status_code == 400
    assert reason in response.content.decode()
    assert budget_of(adaptive) == 4
    preview = organiser_client.get(url(adaptive), {"budget": value})
    assert preview.status_code == 400
    assert reason in preview.content.decode()


def test_a_raise_past_the_campaigns_budget_asks_to_confirm(organiser_client, adaptive):
    refused = organiser_client.post(url(adaptive), {"budget": "500"})
    assert refused.status_code == 409
    page = refused.content.decode()
    assert "asks for 496 new judgments and the budget 100: 0 spent, 100 left: 396 over." in page
    assert 'name="confirm_over_budget"' in page
    assert budget_of(adaptive) == 4
    confirmed = organiser_client.post(url(adaptive), {"budget": "500", "confirm_over_budget": "on"})
    assert confirmed.status_code == 302
    assert budget_of(adaptive) == 500


def test_a_fixed_pool_offers_no_budget(organiser_client, campaign):
    fixed = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=2))
    page = organiser_client.get(url(fixed)).content.decode()
    assert 'name="depth"' in page
    assert "Judging budget" not in page
    assert 'name="budget"' not in page
    # A budget sent to a fixed pool's page is no budget re-plan: nothing stored.
    response = organiser_client.post(url(fixed), {"budget": "5"})
    assert response.status_code == 200
    assert 'name="budget"' not in response.content.decode()
    fixed.refresh_from_db()
    assert "budget" not in fixed.spec


def test_a_lowered_budget_counts_what_is_drawn_as_staying(organiser_client):
    """Budget 4 over topics 1 and 2 (2 each), topic 1 drawn and judged to its
    share; lowered to 2 (1 each): topic 1 keeps its 2, topic 2 has 1 less to judge."""
    from judging import services as judging
    from tests.helpers import make_user
    from tests.judging.test_adaptive import adaptive_pool, judge_all

    pool = adaptive_pool("mtf", budget=4)
    one, _ = judging.assignments_create(
        pool=pool, topics=list(pool.campaign.topics.all()), assessors=[make_user("ann")]
    )
    assert len(judge_all(one)) == 2
    preview = organiser_client.get(url(pool), {"budget": "2"}).content.decode()
    assert "Budget 4 &rarr; 2 judgments; documents still to judge: -1." in preview
    assert "forecast-change/?change=-1" in preview
    assert budget_of(pool) == 4
