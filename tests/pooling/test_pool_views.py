"""The organiser's pool pages: strategy and cost, build, statistics, exports."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from django.urls import reverse

from pooling import services
from pooling.models import Pool
from pooling.strategies import PoolSpec, write_pool_tsv
from tests.helpers import make_campaign, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    campaign = make_campaign(topics=("1", "2"), judgment_budget=6)
    make_run(campaign, "a", {"1": ["d1", "d2", "d3", "d4"], "2": ["e1", "e2"]})
    make_run(campaign, "b", {"1": ["d3", "d5", "d6"], "2": ["e2", "e3", "e4"]})
    return campaign


def new_url(campaign) -> str:
    return reverse("pooling:pool_new", args=[campaign.slug])


def test_new_pool_page_shows_the_cost_of_a_preset(organiser_client, campaign):
    page = organiser_client.get(new_url(campaign), {"preset": "depth-10"}).content.decode()
    assert 'name="depth" min="1" value="10"' in page
    assert "This strategy asks for <strong>10</strong> judgments" in page
    assert "Budget: 6" in page
    assert "over budget" in page
    assert "<svg" in page


def test_whatif_panel_follows_the_fields(organiser_client, campaign):
    url = reverse("pooling:pool_whatif", args=[campaign.slug])
    response = organiser_client.get(
        url, {"depth": "1", "strata": "2-3:0.5", "seed": "0"}, headers={"HX-Request": "true"}
    )
    page = response.content.decode()
    assert page.lstrip().startswith('<section class="card" id="whatif">')
    assert "This strategy asks for <strong>7</strong> judgments (9 documents pooled)" in page
    assert "Largest depth within the budget: <strong>1</strong>" in page


def test_whatif_explains_a_bad_spec(organiser_client, campaign):
    url = reverse("pooling:pool_whatif", args=[campaign.slug])
    page = organiser_client.get(url, {"depth": "5", "strata": "3-9:0.5"}).content.decode()
    assert 'class="errors"' in page
    assert "3-9" in page


def test_whatif_without_runs_says_to_upload_them(organiser_client):
    campaign = make_campaign("empty")
    page = organiser_client.get(new_url(campaign)).content.decode()
    assert "Upload runs first" in page


def test_build_from_the_page(organiser_client, campaign, organiser):
    response = organiser_client.post(
        new_url(campaign),
        {"depth": "2", "strata": "", "seed": "4", "order": "docno", "name": "main"},
    )
    pool = Pool.objects.get()
    assert response.url == reverse("pooling:pool_detail", args=[campaign.slug, pool.pk])
    assert (pool.name, pool.created_by, pool.spec["seed"], pool.spec["order"]) == (
        "main",
        organiser,
        4,
        "docno",
    )
    htmx = organiser_client.post(new_url(campaign), {"depth": "1"}, headers={"HX-Request": "true"})
    assert htmx.status_code == 204
    assert htmx.headers["HX-Redirect"].startswith(f"/campaigns/{campaign.slug}/pools/")


def test_a_bad_spec_builds_nothing(organiser_client, campaign):
    response = organiser_client.post(new_url(campaign), {"depth": "0"})
    assert response.status_code == 200
    assert "depth must be at least 1" in response.content.decode()
    assert not Pool.objects.exists()


def test_pool_page_shows_topics_strata_and_run_contributions(organiser_client, campaign):
    pool = services.pool_build(campaign=campaign, spec=PoolSpec(depth=1, strata=(), seed=0))
    page = organiser_client.get(
        reverse("pooling:pool_detail", args=[campaign.slug, pool.pk])
    ).content.decode()
    assert "#1: 2 → 2 (1.000)" in page
    assert "build_pool --campaign trec-x --depth 1" in page
    assert '<td class="mono">a</td><td class="num">2</td><td class="num">2</td>' in page


def test_exports_are_the_pool_tsv_and_the_order_list(organiser_client, campaign):
    pool = services.pool_build(campaign=campaign, spec=PoolSpec(depth=2))
    response = organiser_client.get(
        reverse("pooling:pool_export", args=[campaign.slug, pool.pk, "tsv"])
    )
    expected = io.StringIO()
    write_pool_tsv(services.pool_entries_frame(pool), expected)
    assert b"".join(response.streaming_content).decode() == expected.getvalue()
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="trec-x-pool-{pool.pk}-entries.tsv"'
    )
    order = organiser_client.get(
        reverse("pooling:pool_export", args=[campaign.slug, pool.pk, "order"]), {"topic": "2"}
    )
    lines = b"".join(order.streaming_content).decode().splitlines()
    assert lines[0] == "topic\torder\tdocno"
    assert [line.split("\t")[:2] for line in lines[1:]] == [["2", "1"], ["2", "2"], ["2", "3"]]
    assert (
        organiser_client.get(
            reverse("pooling:pool_export", args=[campaign.slug, pool.pk, "xml"])
        ).status_code
        == 404
    )


def test_add_late_runs_from_the_page(organiser_client, campaign):
    pool = services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    late = make_run(campaign, "late", {"1": ["d9"]})
    response = organiser_client.post(
        reverse("pooling:pool_add_runs", args=[campaign.slug, pool.pk]),
        {"runs": [late.pk]},
        follow=True,
    )
    assert "Added 1 entries from 1 run(s)." in response.content.decode()
    assert pool.entries.filter(docno="d9").exists()


def test_campaign_page_lists_pools(organiser_client, campaign):
    pool = services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    page = organiser_client.get(
        reverse("pooling:campaign_detail", args=[campaign.slug])
    ).content.decode()
    assert f"Pool {pool.pk}" in page
    assert reverse("pooling:pool_new", args=[campaign.slug]) in page


@pytest.mark.parametrize("name", ["pool_new", "pool_whatif"])
def test_assessors_cannot_open_pool_pages(assessor_client, campaign, name):
    assert assessor_client.get(reverse(f"pooling:{name}", args=[campaign.slug])).status_code == 403


def test_assessors_cannot_see_or_export_a_pool(assessor_client, campaign):
    pool = services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    assert (
        assessor_client.get(
            reverse("pooling:pool_detail", args=[campaign.slug, pool.pk])
        ).status_code
        == 403
    )
    assert (
        assessor_client.get(
            reverse("pooling:pool_export", args=[campaign.slug, pool.pk, "tsv"])
        ).status_code
        == 403
    )


def test_pool_page_shows_the_overlap_between_runs(organiser_client, campaign):
    pool = services.pool_build(campaign=campaign, spec=PoolSpec(depth=3))
    page = organiser_client.get(
        reverse("pooling:pool_detail", args=[campaign.slug, pool.pk])
    ).content.decode()
    # a's top 3: d1 d2 d3, e1 e2; b's: d3 d5 d6, e2 e3 e4: 2 shared of 9 in the union.
    assert page.count('title="0.222">0.22</td>') == 2
    assert page.count('title="1.000">1.00</td>') == 2


def test_a_pool_of_imported_judgments_shows_where_it_came_from(organiser_client, campaign):
    pairs = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["d2", "d1", "e9"]})
    pool = services.pool_from_judged(
        campaign=campaign, pairs=pairs, name="nist", source="qrels file nist.qrels"
    )
    page = organiser_client.get(
        reverse("pooling:pool_detail", args=[campaign.slug, pool.pk])
    ).content.decode()
    assert "of the documents judged in the qrels file nist.qrels" in page
    assert "build_pool" not in page
    assert "Add their new documents" not in page  # the campaign's runs are not late runs here
    assert (
        organiser_client.get(reverse("judging:pool_assignments", args=[pool.pk])).status_code == 200
    )
    with pytest.raises(services.PoolBuildError, match="holds imported judgments"):
        services.pool_add_runs(pool=pool, runs=list(campaign.runs.all()))
    with pytest.raises(services.PoolBuildError, match="already has a pool named 'nist'"):
        services.pool_from_judged(campaign=campaign, pairs=pairs, name="nist", source="again")
