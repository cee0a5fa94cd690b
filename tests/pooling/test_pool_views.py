"""The organiser's pool pages: strategy and cost, build, statistics, exports."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest
from django.conf import settings
from django.urls import reverse

from judging import services as judging_services
from pooling import pool_services, selectors
from pooling.core.spec import PoolSpec, Stratum
from pooling.core.strategies import write_pool_tsv
from pooling.errors import PoolBuildError
from pooling.models import BudgetOverrun, Pool
from tests.helpers import make_campaign, make_documents, make_pool, make_run
from workbench.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    campaign = make_campaign(topics=("1", "2"), judgment_budget=100)
    make_run(campaign, "a", {"1": ["d1", "d2", "d3", "d4"], "2": ["e1", "e2"]})
    make_run(campaign, "b", {"1": ["d3", "d5", "d6"], "2": ["e2", "e3", "e4"]})
    return campaign


def with_budget(campaign, budget: int):
    campaign.judgment_budget = budget
    campaign.save(update_fields=["judgment_budget"])
    return campaign


def judge(campaign, assessor, topic: str, *docnos: str) -> None:
    for docno in docnos:
        judging_services.judgment_record(
            assessor=assessor,
            topic=campaign.topics.get(topic_id=topic),
            docno=docno,
            relevance=0,
            aspects={},
        )


def new_url(campaign) -> str:
    return reverse("pooling:pool_new", args=[campaign.slug])


def test_new_pool_page_shows_the_cost_of_a_preset(organiser_client, campaign):
    with_budget(campaign, 6)
    page = organiser_client.get(new_url(campaign), {"preset": "depth-10"}).content.decode()
    assert 'name="depth" min="1" value="10"' in page
    assert "This strategy asks for <strong>10</strong> judgments" in page
    assert "Budget 6: 0 judgments made, <strong>6</strong> left." in page
    assert "10 still to make is 4 over what is left." in page
    assert "<svg" in page


def test_whatif_compares_what_is_still_to_make_with_what_the_budget_has_left(
    organiser_client, campaign, assessor, assessor2
):
    """The issue's case: after judgments were made, 'still to make' must be
    compared with what is left, not with the whole budget."""
    with_budget(campaign, 10)
    judge(campaign, assessor, "1", "d1", "d3")  # in the depth-10 pool
    judge(campaign, assessor2, "1", "d1")  # the same document again: spent, not needed
    judge(campaign, assessor, "2", "zz")  # outside any pool: still spent
    page = organiser_client.get(new_url(campaign), {"preset": "depth-10"}).content.decode()
    assert "<strong>8</strong> still to make, 2 already judged." in page
    assert "Budget 10: 4 judgments made, <strong>6</strong> left." in page
    assert "8 still to make is 2 over what is left." in page
    with_budget(campaign, 12)
    page = organiser_client.get(new_url(campaign), {"preset": "depth-10"}).content.decode()
    assert "Fits, leaving 0." in page


def test_building_past_the_budget_asks_for_confirmation_and_records_it(
    organiser_client, campaign, organiser, django_capture_on_commit_callbacks
):
    with_budget(campaign, 6)
    fields = {"depth": "10", "strata": "", "seed": "0", "order": "shuffled", "name": "deep"}
    response = organiser_client.post(new_url(campaign), fields)
    page = response.content.decode()
    assert response.status_code == 409
    assert (
        "building pool deep asks for 10 new judgments and the budget 6: 0 spent, 6 left: "
        "4 over. Confirm to go past the budget." in page
    )
    assert 'name="confirm_over_budget"' in page
    assert 'value="deep"' in page
    assert not Pool.objects.exists()
    assert not BudgetOverrun.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        organiser_client.post(new_url(campaign), {**fields, "confirm_over_budget": "on"})
    Pool.objects.get()
    overrun = BudgetOverrun.objects.get()
    assert (overrun.action, overrun.cost, overrun.remaining, overrun.confirmed_by) == (
        "building pool deep",
        10,
        6,
        organiser,
    )


def test_the_whatif_request_does_not_send_the_csrf_token():
    page = (Path(settings.BASE_DIR) / "templates/pooling/pool_new.html").read_text()
    form = page[page.index('<form method="post" class="stacked" id="pool-form"') :]
    form_tag = form[: form.index(">")]
    assert 'hx-params="not csrfmiddlewaretoken,confirm_over_budget,name"' in form_tag
    # The build button posts everything, the token included.
    assert 'hx-post="{% url \'pooling:pool_new\' campaign.slug %}" hx-params="*"' in form


def test_cost_chart_stops_at_the_runs_deepest_rank(organiser_client, campaign):
    page = organiser_client.get(new_url(campaign), {"preset": "depth-10"}).content.decode()
    # The runs retrieve at most 4 documents per topic: one depth, 4, on the axis.
    assert "<td>depth 4</td>" in page
    assert "<td>depth 10</td>" not in page


def test_whatif_panel_follows_the_fields(organiser_client, campaign):
    with_budget(campaign, 6)
    url = reverse("pooling:pool_whatif", args=[campaign.slug])
    response = organiser_client.get(
        url, {"depth": "1", "strata": "2-3:0.5", "seed": "0"}, headers={"HX-Request": "true"}
    )
    page = response.content.decode()
    assert page.lstrip().startswith('<section class="card" id="whatif">')
    assert "This strategy asks for <strong>7</strong> judgments (9 documents pooled)" in page
    assert "Largest depth within the budget: <strong>1</strong>" in page


def test_a_gap_between_depth_and_strata_is_explained_unless_allowed(
    organiser_client, campaign, django_capture_on_commit_callbacks
):
    url = reverse("pooling:pool_whatif", args=[campaign.slug])
    page = organiser_client.get(url, {"depth": "1", "strata": "3-4:0.5"}).content.decode()
    assert "depth 1 and stratum 3-4:0.5 leave rank 2 out of the pool" in page
    page = organiser_client.get(
        url, {"depth": "1", "strata": "3-4:0.5", "allow_gaps": "on"}
    ).content.decode()
    assert "This strategy asks for" in page
    with django_capture_on_commit_callbacks(execute=True):
        organiser_client.post(
            new_url(campaign),
            {"depth": "1", "strata": "3-4:0.5", "allow_gaps": "on", "seed": "0"},
        )
    assert Pool.objects.get().spec["allow_gaps"] is True


def test_whatif_explains_a_bad_spec(organiser_client, campaign):
    url = reverse("pooling:pool_whatif", args=[campaign.slug])
    page = organiser_client.get(url, {"depth": "5", "strata": "3-9:0.5"}).content.decode()
    assert 'class="errors"' in page
    assert "3-9" in page


def test_whatif_without_runs_says_to_upload_them(organiser_client):
    campaign = make_campaign("empty")
    page = organiser_client.get(new_url(campaign)).content.decode()
    assert "Upload runs first" in page


def test_build_from_the_page_is_a_job_that_links_the_pool(
    organiser_client, campaign, organiser, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = organiser_client.post(
            new_url(campaign),
            {"depth": "2", "strata": "", "seed": "4", "order": "docno", "name": "main"},
        )
    job = Job.objects.get()
    assert response.url == reverse("job_detail", args=[job.pk])
    pool = Pool.objects.get()
    assert (pool.name, pool.created_by, pool.spec["seed"], pool.spec["order"]) == (
        "main",
        organiser,
        4,
        "docno",
    )
    assert (job.state, job.done, job.total, job.result["pool"]) == ("done", 2, 2, pool.pk)
    page = organiser_client.get(response.url).content.decode()
    assert f'href="{reverse("pooling:pool_detail", args=[campaign.slug, pool.pk])}"' in page
    assert f"pool {pool.pk} (main): 7 entries" in page
    with django_capture_on_commit_callbacks(execute=True):
        htmx = organiser_client.post(
            new_url(campaign), {"depth": "1"}, headers={"HX-Request": "true"}
        )
    assert htmx.status_code == 204
    assert htmx.headers["HX-Redirect"].startswith("/jobs/")


def test_documents_to_judge_without_text_are_said_before_anyone_is_assigned(
    organiser_client, campaign, django_capture_on_commit_callbacks
):
    make_documents(campaign, ["d1", "d2"])
    campaign.documents.create(docno="d3", title="Only a title", text="")
    with django_capture_on_commit_callbacks(execute=True):
        response = organiser_client.post(new_url(campaign), {"depth": "2", "order": "docno"})
    # Depth 2 draws d1 d2 d3 d5 for topic 1 and e1 e2 e3 for topic 2.
    job = Job.objects.get()
    assert job.result["without_text"] == 5
    job_page = organiser_client.get(response.url).content.decode()
    assert "5 documents to judge without text: load their texts before assigning" in job_page

    pool = Pool.objects.get()
    page = organiser_client.get(reverse("pooling:pool_detail", args=[campaign.slug, pool.pk]))
    assert "5 of the 7 distinct documents to judge have no text loaded" in page.content.decode()
    download = reverse("pooling:pool_export", args=[campaign.slug, pool.pk, "without-text"])
    assert download in page.content.decode()
    listed = b"".join(organiser_client.get(download).streaming_content).decode().split()
    assert listed == ["d3", "d5", "e1", "e2", "e3"]
    assign = organiser_client.get(reverse("judging:pool_assignments", args=[pool.pk]))
    assert "5 documents to judge in this pool have no text loaded" in assign.content.decode()
    detail = organiser_client.get(f"/api/pools/{pool.pk}/").json()
    assert detail["without_text"] == listed

    make_documents(campaign, listed)
    page = organiser_client.get(reverse("pooling:pool_detail", args=[campaign.slug, pool.pk]))
    assert "no text loaded" not in page.content.decode()


def test_a_large_pool_writes_its_counts_with_thousands_separators(organiser_client, campaign):
    """A depth-1000 pool's page read "ranks 1-1000: 2421 → 2421" and "1,175 of the
    19,930 documents to judge" beside 104,713 to judge: the count is of distinct
    documents (a document pooled for several topics counts once), and says so."""
    pool = make_pool(campaign, {"1": [f"x{k}" for k in range(1200)], "2": ["x1", "x2"]})
    page = organiser_client.get(reverse("pooling:pool_detail", args=[campaign.slug, pool.pk]))
    page = page.content.decode()
    assert ": 1,200 → 1,200 (1.000)" in page
    assert "1,200 of the 1,200 distinct documents to judge have no text loaded" in page
    assign = organiser_client.get(reverse("judging:pool_assignments", args=[pool.pk]))
    assert "1,200 documents to judge in this pool have no text" in assign.content.decode()


def test_a_bad_spec_builds_nothing(organiser_client, campaign):
    response = organiser_client.post(new_url(campaign), {"depth": "0"})
    assert response.status_code == 200
    assert "depth must be at least 1" in response.content.decode()
    assert not Pool.objects.exists()


def test_pool_page_shows_topics_strata_and_run_contributions(organiser_client, campaign):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1, strata=(), seed=0))
    page = organiser_client.get(
        reverse("pooling:pool_detail", args=[campaign.slug, pool.pk])
    ).content.decode()
    assert "ranks 1-1: 2 → 2 (1.000)" in page
    assert "build_pool --campaign trec-x --depth 1" in page
    assert '<td class="mono">a</td><td class="num">2</td><td class="num">2</td>' in page


def test_exports_are_the_pool_tsv_and_the_order_list(organiser_client, campaign):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=2))
    response = organiser_client.get(
        reverse("pooling:pool_export", args=[campaign.slug, pool.pk, "tsv"])
    )
    expected = io.StringIO()
    write_pool_tsv(selectors.pool_entries_frame(pool), expected)
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


def test_adding_late_runs_past_the_budget_needs_the_tick(organiser_client, campaign):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    with_budget(campaign, 0)
    late = make_run(campaign, "late", {"1": ["d9"]})
    url = reverse("pooling:pool_add_runs", args=[campaign.slug, pool.pk])
    page = organiser_client.post(url, {"runs": [late.pk]}, follow=True).content.decode()
    assert "adding late to pool" in page
    assert "1 over. Confirm to go past the budget." in page
    assert not pool.entries.filter(docno="d9").exists()
    organiser_client.post(url, {"runs": [late.pk], "confirm_over_budget": "on"})
    assert pool.entries.filter(docno="d9").exists()
    assert BudgetOverrun.objects.get().cost == 1


def test_add_late_runs_from_the_page(organiser_client, campaign):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    late = make_run(campaign, "late", {"1": ["d9"]})
    response = organiser_client.post(
        reverse("pooling:pool_add_runs", args=[campaign.slug, pool.pk]),
        {"runs": [late.pk]},
        follow=True,
    )
    assert "Added 1 entries from 1 run(s)." in response.content.decode()
    assert pool.entries.filter(docno="d9").exists()


def test_campaign_page_lists_pools(organiser_client, campaign):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    page = organiser_client.get(
        reverse("pooling:campaign_detail", args=[campaign.slug])
    ).content.decode()
    assert f"Pool {pool.pk}" in page
    assert reverse("pooling:pool_new", args=[campaign.slug]) in page


@pytest.mark.parametrize("name", ["pool_new", "pool_whatif"])
def test_assessors_cannot_open_pool_pages(assessor_client, campaign, name):
    assert assessor_client.get(reverse(f"pooling:{name}", args=[campaign.slug])).status_code == 403


def test_assessors_cannot_see_or_export_a_pool(assessor_client, campaign):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
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


def test_pool_page_labels_each_stratum_with_its_ranks(organiser_client, campaign):
    spec = PoolSpec(depth=1, strata=(Stratum(2, 3, 0.5),), topic_depths={"2": 1})
    pool = pool_services.pool_build(campaign=campaign, spec=spec)
    page = organiser_client.get(
        reverse("pooling:pool_detail", args=[campaign.slug, pool.pk])
    ).content.decode()
    # Topic 1: d1 d3 best at rank 1; d2 d5 at rank 2, d6 at 3; d4 at 4 (out of the pool).
    assert (
        '<span class="stratum">ranks 1-1: 2 → 2 (1.000)</span>'
        '<span class="stratum">ranks 2-3: 3 → 2 (0.667)</span>' in page
    )
    assert "#1" not in page


@pytest.mark.parametrize("step", range(11))
def test_heatmap_cells_contrast_at_least_4_5_to_1(step):
    css = (Path(settings.BASE_DIR) / "static/css/app.css").read_text()
    rule = re.search(rf"td\.heat-{step} {{ background: #(\w{{6}}); color: #(\w{{3}}); }}", css)
    background, text = rule.groups()
    assert contrast(background, text * 2 if len(text) == 3 else text) >= 4.5
    # The cell's colour follows the value: each step darker than the one before.
    if step:
        before = re.search(rf"td\.heat-{step - 1} {{ background: #(\w{{6}})", css).group(1)
        assert luminance(background) < luminance(before)


def luminance(hex_colour: str) -> float:
    """WCAG 2 relative luminance."""
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_heat_step_rounds_values_to_tenths():
    from pooling.templatetags.pooling_extras import heat_step

    assert [heat_step(v) for v in (0.0, 0.04, 0.05, 0.222, 0.96, 1.0, float("nan"))] == [
        0,
        0,
        1,
        2,
        10,
        10,
        0,
    ]


def test_pool_page_shows_the_overlap_between_runs(organiser_client, campaign):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=3))
    page = organiser_client.get(
        reverse("pooling:pool_detail", args=[campaign.slug, pool.pk])
    ).content.decode()
    # a's top 3: d1 d2 d3, e1 e2; b's: d3 d5 d6, e2 e3 e4: 2 shared of 9 in the union.
    assert page.count('<td class="num heat-2" title="0.222">0.22</td>') == 2
    assert page.count('<td class="num heat-10" title="1.000">1.00</td>') == 2


def test_organiser_retires_and_reopens_a_pool_from_its_page(organiser_client, campaign, organiser):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    detail = reverse("pooling:pool_detail", args=[campaign.slug, pool.pk])
    retire = reverse("pooling:pool_retire", args=[campaign.slug, pool.pk])
    assert organiser_client.get(retire).status_code == 405
    page = organiser_client.post(retire, follow=True).content.decode()
    pool.refresh_from_db()
    assert (pool.is_retired, pool.retired_by) == (True, organiser)
    assert "its judgments stay" in page
    assert "Reopen</button>" in page
    listing = organiser_client.get(
        reverse("pooling:campaign_detail", args=[campaign.slug])
    ).content.decode()
    assert '<span class="badge">retired</span>' in listing
    organiser_client.post(reverse("pooling:pool_reopen", args=[campaign.slug, pool.pk]))
    pool.refresh_from_db()
    assert not pool.is_retired
    assert "Retire</button>" in organiser_client.get(detail).content.decode()


def test_a_pool_of_imported_judgments_shows_where_it_came_from(organiser_client, campaign):
    pairs = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["d2", "d1", "e9"]})
    pool = pool_services.pool_from_judged(
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
    with pytest.raises(PoolBuildError, match="holds imported judgments"):
        pool_services.pool_add_runs(pool=pool, runs=list(campaign.runs.all()))
    with pytest.raises(PoolBuildError, match="already has a pool named 'nist'"):
        pool_services.pool_from_judged(campaign=campaign, pairs=pairs, name="nist", source="again")


@pytest.mark.parametrize(
    "fields", [{"depth": "1000000000000"}, {"depth": "4", "strata": "5-1000000000000:0.5"}]
)
def test_a_depth_far_past_the_runs_is_costed_from_what_the_runs_hold(
    organiser_client, campaign, fields
):
    url = reverse("pooling:pool_whatif", args=[campaign.slug])
    page = organiser_client.get(url, {**fields, "seed": "0"}).content.decode()
    # The runs retrieve 10 distinct (topic, docno) pairs, down to rank 4.
    assert "This strategy asks for <strong>10</strong> judgments (10 documents pooled)" in page


def test_the_page_builds_an_adaptive_pool_and_says_what_is_wrong_with_one(
    organiser_client, campaign, django_capture_on_commit_callbacks
):
    page = organiser_client.get(new_url(campaign)).content.decode()
    assert '<option value="mtf">adaptive: mtf</option>' in page
    refused = organiser_client.post(new_url(campaign), {"depth": "2", "strategy": "mtf"})
    assert "budget must be 1 or more" in refused.content.decode()
    assert not Pool.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        organiser_client.post(
            new_url(campaign), {"depth": "2", "strategy": "active", "budget": "3", "seed": "1"}
        )
    pool = Pool.objects.get()
    assert (pool.spec["strategy"], pool.spec["budget"], pool.spec["seed"]) == ("active", 3, 1)
