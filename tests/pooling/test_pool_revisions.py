"""Re-planning a pool being judged, stored: queues in place, judgments kept, revisions
in the manifest; the pool_replan command."""

from __future__ import annotations

import io
import json
import re
import zipfile

import pytest
from django.core.management import CommandError, call_command

from judging import services as judging
from judging.models import Assignment, Judgment
from pooling import pool_services, selectors
from pooling.core.spec import PoolSpec
from pooling.errors import OverBudget
from pooling.models import PoolRevision
from scoring import export_selectors
from tests.helpers import make_campaign, make_run, make_sampled_pool, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def pool(organiser):
    """Topic 1 finished, topic 2 half judged; depth 4, docno order."""
    campaign = make_campaign(topics=("1", "2"), judgment_budget=100)
    make_run(campaign, "r", {"1": ["a", "b", "c", "d"], "2": ["w", "x", "y", "z"]})
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=4, order="docno"))
    ann, ben = make_user("ann"), make_user("ben")
    one, two = judging.assignments_create(
        pool=pool, topics=list(campaign.topics.all()), assessors=[ann, ben]
    )
    for assignment, docnos in ((one, "abcd"), (two, "wy")):
        for docno in docnos:
            judging.judgment_submit(assignment=assignment, docno=docno, relevance=0, aspects={})
    return pool


def queue(pool, topic_id: str) -> list[tuple[int, str]]:
    assignment = Assignment.objects.get(pool=pool, topic__topic_id=topic_id)
    return list(assignment.queue().values_list("position", "docno"))


def test_the_unfinished_topics_are_those_with_documents_nobody_judged(pool):
    assert selectors.unfinished_topics(pool) == ["2"]


def test_shrinking_the_unfinished_topics_changes_their_queue_in_place(pool, organiser):
    before = Judgment.objects.count()
    revision = pool_services.pool_revise(
        pool=pool,
        spec=PoolSpec(depth=2, order="docno"),
        topics=["2"],
        reason="budget ran out",
        created_by=organiser,
    )
    assert (revision.number, revision.topics, revision.reason) == (2, ["2"], "budget ran out")
    assert queue(pool, "1") == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]  # finished: untouched
    assert queue(pool, "2") == [(1, "w"), (2, "x")]  # z (unjudged) left; y judged, kept
    assert Judgment.objects.count() == before
    # w and y judged (y, out of the plan now, still counts as ann's), x left to judge.
    assert Assignment.objects.get(pool=pool, topic__topic_id="2").progress() == (2, 3)
    qrels = export_selectors.qrels_export(pool=pool, fmt="qrels")[0].text
    assert "2 0 y 0" in qrels  # judged before the cut: still in the qrels
    stratified = export_selectors.qrels_export(pool=pool, fmt="stratified")[0].text
    assert " y " not in stratified  # outside the plan
    assert " z " not in stratified
    assert selectors.topic_specs(pool)["2"].depth == 2
    assert selectors.topic_specs(pool)["1"].depth == 4
    manifest = json.loads(
        zipfile.ZipFile(
            io.BytesIO(export_selectors.qrels_bundle(pool=pool, formats=["qrels"]))
        ).read("manifest.json")
    )
    [listed] = manifest["pool"]["revisions"]
    assert (listed["number"], listed["topics"], listed["spec"]["depth"], listed["by"]) == (
        2,
        ["2"],
        2,
        "olivia",
    )


def test_extending_asks_the_budget_and_appends_to_the_queue(pool, organiser):
    pool.campaign.judgment_budget = 6  # 6 judged: nothing left
    pool.campaign.save()
    make_run(pool.campaign, "deeper", {"2": ["w", "x", "y", "z", "zz"]})
    pool.runs.add(pool.campaign.runs.get(tag="deeper"))
    with pytest.raises(OverBudget, match="asks for 1 new judgments"):
        pool_services.pool_revise(pool=pool, spec=PoolSpec(depth=5, order="docno"), topics=["2"])
    assert not PoolRevision.objects.exists()
    pool_services.pool_revise(
        pool=pool,
        spec=PoolSpec(depth=5, order="docno"),
        topics=["2"],
        confirm_over_budget=True,
        created_by=organiser,
    )
    assert queue(pool, "2") == [(1, "w"), (2, "x"), (3, "y"), (4, "z"), (5, "zz")]


def test_pool_replan_prints_a_dry_run_then_applies(pool):
    out = io.StringIO()
    call_command("pool_replan", "--pool", str(pool.pk), "--depth", "2", "--dry-run", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == [
        "query_id",
        "to_judge_before",
        "to_judge_after",
        "leaving",
        "joining",
        "judged_kept",
        "judged_out_of_sample",
        "new_judgments",
    ]
    assert lines[1].split() == ["2", "4", "2", "1", "0", "2", "1", "0"]
    assert lines[2] == "0 new judgments; budget 100: 6 spent, 94 left"
    # The cut takes the one unjudged document that leaves out of the work left.
    assert lines[3].startswith("forecast now: 2 judgments left at 0.9 a day: finished ")
    assert lines[4].startswith("with this revision: 1 judgments left at 0.9 a day: finished ")
    assert lines[4].endswith("; the budget covers it")
    assert not PoolRevision.objects.exists()
    out = io.StringIO()
    call_command("pool_replan", "--pool", str(pool.pk), "--depth", "2", stdout=out)
    assert out.getvalue().splitlines()[-1] == f"pool {pool.pk}: revision 2 applied"
    assert queue(pool, "2") == [(1, "w"), (2, "x")]
    with pytest.raises(CommandError, match="not topics of this campaign: 9"):
        call_command("pool_replan", "--pool", str(pool.pk), "--depth", "2", "--topics", "9")


def test_the_replan_page_previews_then_applies_as_a_job(
    organiser_client, pool, django_capture_on_commit_callbacks
):
    from django.urls import reverse

    from workbench.models import Job

    url = reverse("pooling:pool_replan", args=[pool.campaign.slug, pool.pk])
    page = organiser_client.get(url).content.decode()
    assert "The unfinished topics (1: 2)" in page
    assert 'name="depth" min="1" value="4"' in page
    fields = {"depth": "2", "which": "unfinished", "reason": "budget ran out"}
    preview = organiser_client.get(url, fields).content.decode()
    assert '<td class="mono">2</td><td class="num">4</td><td class="num">2</td>' in preview
    assert "0 new judgments; budget 100: 6 spent, 94 left." in preview
    # The new forecast is loaded with the plan's change: z, unjudged, leaves (y is kept).
    assert "forecast-change/?change=-1" in preview
    assert '<input type="hidden" name="reason" value="budget ran out">' in preview
    assert not PoolRevision.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        response = organiser_client.post(url, fields)
    job = Job.objects.get()
    assert response.url == reverse("job_detail", args=[job.pk])
    assert (job.state, job.result["revision"]) == ("done", 2)
    assert PoolRevision.objects.get().reason == "budget ran out"
    assert queue(pool, "2") == [(1, "w"), (2, "x")]
    detail = organiser_client.get(
        reverse("pooling:pool_detail", args=[pool.campaign.slug, pool.pk])
    ).content.decode()
    assert "<td>budget ran out</td>" in detail
    assert '<td class="mono">1-2:1.0</td>' in detail


def test_the_replan_page_explains_bad_requests(organiser_client, pool):
    from django.urls import reverse

    url = reverse("pooling:pool_replan", args=[pool.campaign.slug, pool.pk])
    page = organiser_client.get(url, {"depth": "0", "which": "unfinished"}).content.decode()
    assert "depth must be at least 1, not 0" in page
    page = organiser_client.get(url, {"depth": "2", "which": "chosen"}).content.decode()
    assert "choose at least one topic" in page
    response = organiser_client.post(url, {"depth": "2", "which": "chosen", "topics": ["9"]})
    assert response.status_code == 400
    assert "topics: Select a valid choice. 9 is not one of the available choices." in (
        response.content.decode()
    )
    assert not PoolRevision.objects.exists()


def sampled_pool(slug: str, documents: int):
    """Three topics, one run of `documents` per topic; 1-2 in full, the rest at 50%."""
    campaign = make_campaign(slug, topics=("1", "2", "3"), judgment_budget=10_000)
    docnos = [f"{slug}-{n}" for n in range(documents)]
    make_run(campaign, "r", dict.fromkeys(("1", "2", "3"), docnos))
    spec = PoolSpec.from_dict({"depth": 2, "strata": [f"3-{documents}:0.5"], "order": "docno"})
    return pool_services.pool_build(campaign=campaign, spec=spec)


def revise_capturing_queries(pool, documents: int) -> list[str]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    spec = PoolSpec.from_dict({"depth": 2, "strata": [f"3-{documents}:0.25"], "order": "docno"})
    with CaptureQueriesContext(connection) as captured:
        pool_services.pool_revise(pool=pool, spec=spec, topics=["1", "2", "3"])
    return [query["sql"] for query in captured.captured_queries]


def test_a_replan_issues_as_many_queries_for_a_large_pool_as_for_a_small_one():
    small, large = sampled_pool("small", 20), sampled_pool("large", 300)
    assert len(revise_capturing_queries(small, 20)) == len(revise_capturing_queries(large, 300))


def test_a_replan_updates_its_entries_by_a_join_not_by_a_case_per_field_and_entry():
    # bulk_update's CASE WHEN pk = ... THEN ... per field made 20,000 entries take 50 s.
    pool = sampled_pool("cases", 40)
    updates = [sql for sql in revise_capturing_queries(pool, 40) if sql.startswith("UPDATE")]
    entry_updates = [sql for sql in updates if "pooling_poolentry" in sql]
    assert len(entry_updates) == 1
    assert "CASE" not in entry_updates[0]
    stored = pool.entries.filter(revision=2)
    assert stored.count() == pool.entries.count() == 3 * 40
    [drawn] = set(stored.filter(stratum=2).values_list("inclusion_probability", flat=True))
    assert 0.25 <= drawn < 0.3  # was about 0.5


@pytest.fixture
def sampled(organiser):
    return make_sampled_pool()


def test_the_replan_form_says_that_new_bounds_draw_a_stratum_again(organiser_client, sampled):
    from django.urls import reverse

    url = reverse("pooling:pool_replan", args=[sampled.campaign.slug, sampled.pk])
    page = organiser_client.get(url).content.decode()
    assert "To cut a sampled stratum, keep its bounds and lower its rate" in page
    assert 'New bounds (<span class="mono">11-40:0.5</span>) draw the stratum again' in page


def test_the_replan_preview_warns_of_a_redraw_and_offers_the_plan_that_keeps_the_sample(
    organiser_client, sampled
):
    from django.urls import reverse

    url = reverse("pooling:pool_replan", args=[sampled.campaign.slug, sampled.pk])
    fields = {"depth": "10", "strata": "11-40:0.5", "which": "all", "reason": "cut"}
    preview = selectors.pool_revision_preview(
        sampled, spec=PoolSpec.from_dict({"depth": 10, "strata": ["11-40:0.5"]}), topics=["1", "2"]
    )
    assert preview.cost > 0  # the "cut" asks for new judgments ...
    assert preview.judged_out_of_sample > 0  # ... and puts judged documents out of the sample
    page = organiser_client.get(url, fields).content.decode()
    assert '<span class="mono">11-40:0.5</span> is a new draw.</strong>' in page
    assert 'The current plan samples <span class="mono">11-100:0.5</span>' in page
    assert (
        f"{preview.joining} documents join the queues ({preview.cost} new judgments) and "
        f"{preview.judged_out_of_sample} judged documents leave the sample"
    ) in page
    [offered] = re.findall(r'href="\?(depth=10&amp;strata=11-100%3A0\.\d+[^"]*)"', page)
    assert "which=all" in offered
    assert "reason=cut" in offered
    kept = organiser_client.get(f"{url}?{offered.replace('&amp;', '&')}").content.decode()
    assert "is a new draw" not in kept  # the same bounds: nothing drawn again
    assert '<p class="budget-line">0 new judgments;' in kept


def test_the_replan_preview_of_a_lower_rate_warns_of_nothing(organiser_client, sampled):
    from django.urls import reverse

    url = reverse("pooling:pool_replan", args=[sampled.campaign.slug, sampled.pk])
    page = organiser_client.get(
        url, {"depth": "10", "strata": "11-100:0.25", "which": "all"}
    ).content.decode()
    assert "What this revision does" in page
    assert "is a new draw" not in page
    assert "keep the bounds and lower the rate" not in page


def test_pool_replan_warns_of_a_redraw_and_prints_the_arguments_that_keep_the_sample(sampled):
    out = io.StringIO()
    call_command(
        "pool_replan",
        *("--pool", str(sampled.pk), "--topics", "all", "--depth", "10"),
        *("--stratum", "11-40:0.5", "--dry-run"),
        stdout=out,
    )
    lines = out.getvalue().splitlines()
    [warning] = [line for line in lines if line.startswith("warning: ")]
    assert warning.startswith("warning: 11-40:0.5 is a new draw (other bounds than 11-100:0.5): ")
    [advice] = [line for line in lines if line.startswith("to keep the sample")]
    assert re.match(
        r"to keep the sample, lower the rate instead: --depth 10 --stratum 11-100:0\.\d+ "
        r"\(0 new judgments; judgments left change by -\d+, [-+]\d+ with this plan\)$",
        advice,
    )
    assert not PoolRevision.objects.exists()
