"""Building, storing and extending pools from a campaign's runs."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from pooling import pool_services, run_services, selectors
from pooling.core.spec import PoolSpec, Stratum
from pooling.core.strategies import build_pool, write_pool_tsv
from pooling.errors import OverBudget, PoolBuildError
from pooling.models import PoolEntry
from tests.helpers import make_campaign, make_pool, make_run
from workbench.core.run_files import read_run_cache

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    campaign = make_campaign(topics=("1", "2"))
    make_run(campaign, "a", {"1": ["d1", "d2", "d3", "d4"], "2": ["e1", "e2"]})
    make_run(campaign, "b", {"1": ["d3", "d5", "d6"], "2": ["e2", "e3", "e4"]})
    return campaign


def stored(pool) -> dict[tuple[str, str], tuple]:
    return {
        (e.topic.topic_id, e.docno): (e.best_rank, e.n_runs, e.stratum, e.sampled)
        for e in pool.entries.select_related("topic")
    }


def test_depth_pool_is_stored_with_its_spec_and_runs(campaign, organiser):
    pool = pool_services.pool_build(
        campaign=campaign, spec=PoolSpec(depth=2, seed=5), created_by=organiser
    )
    assert stored(pool) == {
        ("1", "d1"): (1, 1, 1, True),
        ("1", "d2"): (2, 1, 1, True),
        ("1", "d3"): (1, 1, 1, True),
        ("1", "d5"): (2, 1, 1, True),
        ("2", "e1"): (1, 1, 1, True),
        ("2", "e2"): (1, 2, 1, True),
        ("2", "e3"): (2, 1, 1, True),
    }
    assert pool.spec == PoolSpec(depth=2, seed=5).to_dict()
    assert pool.name == "1-2:1.0"
    assert sorted(pool.runs.values_list("tag", flat=True)) == ["a", "b"]
    orders = sorted(pool.entries.filter(topic__topic_id="1").values_list("order", flat=True))
    assert orders == [1, 2, 3, 4]


def test_stored_pool_equals_the_core_pool_byte_for_byte(campaign):
    spec = PoolSpec(depth=1, strata=(Stratum(2, 4, 0.5),), seed=11)
    pool = pool_services.pool_build(campaign=campaign, spec=spec)
    runs = [read_run_cache(run.cache_file.path).to_pandas() for run in campaign.runs.all()]
    expected, got = io.StringIO(), io.StringIO()
    write_pool_tsv(build_pool(pd.concat(runs), spec), expected)
    write_pool_tsv(selectors.pool_entries_frame(pool), got)
    assert got.getvalue() == expected.getvalue()
    assert PoolEntry.objects.filter(pool=pool, sampled=False).exists()


def test_a_build_reports_each_topic_outside_its_transaction(campaign):
    from django.db import connection

    outside = len(connection.atomic_blocks)  # the test's own transaction
    calls = []

    def record(done: int, total: int) -> None:
        calls.append((done, total, len(connection.atomic_blocks)))

    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=2), progress=record)
    # Not inside the build's transaction: a job's progress is seen while it builds.
    assert calls == [(0, 2, outside), (1, 2, outside), (2, 2, outside)]
    assert pool.entries.count() == 7


def test_campaign_without_runs_builds_nothing():
    campaign = make_campaign()
    with pytest.raises(PoolBuildError, match="campaign trec-x has no runs to pool"):
        pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=10))
    assert not campaign.pools.exists()


def test_late_run_adds_only_its_new_documents(campaign):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=2))
    before = {e.pk: (e.docno, e.order, e.best_rank, e.n_runs) for e in pool.entries.all()}
    late = make_run(campaign, "late", {"1": ["d9", "d1"], "2": ["e7"]})
    addition = pool_services.pool_add_runs(pool=pool, runs=[late])
    after = {e.pk: (e.docno, e.order, e.best_rank, e.n_runs) for e in pool.entries.all()}
    assert {pk: after[pk] for pk in before} == before
    added = pool.entries.filter(addition=addition).select_related("topic")
    assert sorted((e.topic.topic_id, e.docno, e.order) for e in added) == [
        ("1", "d9", 5),
        ("2", "e7", 4),
    ]
    assert "late" in pool.runs.values_list("tag", flat=True)


def test_adding_a_run_twice_or_to_a_sampled_pool_is_refused(campaign):
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=2))
    with pytest.raises(PoolBuildError, match="already in the pool: a"):
        pool_services.pool_add_runs(pool=pool, runs=[campaign.runs.get(tag="a")])
    sampled = pool_services.pool_build(
        campaign=campaign, spec=PoolSpec(depth=1, strata=(Stratum(2, 3, 0.5),))
    )
    late = make_run(campaign, "late", {"1": ["d9"]})
    count = sampled.entries.count()
    with pytest.raises(PoolBuildError, match="rebuild a sampled pool instead"):
        pool_services.pool_add_runs(pool=sampled, runs=[late])
    assert sampled.entries.count() == count
    assert not sampled.additions.exists()


def test_judged_pairs_lists_judged_documents_once(campaign, assessor, assessor2):
    from judging import services as judging

    topic = campaign.topics.get(topic_id="1")
    for user in (assessor, assessor2):
        judging.judgment_record(assessor=user, topic=topic, docno="d1", relevance=0, aspects={})
    judging.judgment_record(assessor=assessor, topic=topic, docno="d2", relevance=0, aspects={})
    pairs = selectors.judged_pairs(campaign)
    assert sorted(map(tuple, pairs.to_numpy().tolist())) == [("1", "d1"), ("1", "d2")]


def test_cached_ranking_is_not_reused_for_a_new_run_with_an_old_id(campaign):
    ranked = selectors.ranked_runs_cached(campaign, max_depth=10)
    run = campaign.runs.get(tag="b")
    run_id = run.pk
    run_services.run_delete(run=run)
    replacement = make_run(campaign, "c", {"1": ["x1"]})
    type(replacement).objects.filter(pk=replacement.pk).update(id=run_id)
    again = selectors.ranked_runs_cached(campaign, max_depth=10)
    assert again is not ranked
    assert set(again.table.column("run_id").to_pylist()) == {"a", "c"}


# --------------------------------------------------------------------------
# The budget ledger


def test_spent_is_derived_from_the_stored_judgments_and_adjudications(
    campaign, assessor, assessor2
):
    from judging import services as judging

    topic = campaign.topics.get(topic_id="1")
    campaign.judgment_budget = 10
    campaign.save()

    def judge(user, docno, relevance=0):
        aspects = {"effectiveness": 3, "credibility": 1} if relevance else {}
        return judging.judgment_record(
            assessor=user, topic=topic, docno=docno, relevance=relevance, aspects=aspects
        )

    judge(assessor, "d1")
    judge(assessor, "d1")  # a double submit is one judgment
    judge(assessor2, "d1")  # an overlap judgment counts
    judge(assessor, "d2")
    assert selectors.campaign_budget(campaign).spent == 3
    judge(assessor, "d2", relevance=2)  # revising is the same judgment
    assert selectors.campaign_budget(campaign).spent == 3
    judging.adjudication_record(
        pool=make_pool(campaign, {"1": ["d1"]}),
        topic=topic,
        docno="d1",
        relevance=0,
        aspects={},
        reason="",
        decided_by=assessor,
    )
    state = selectors.campaign_budget(campaign)
    assert (state.judgments, state.adjudications, state.spent, state.remaining) == (3, 1, 4, 6)
    campaign.budget_counts_adjudications = False
    campaign.save()
    assert selectors.campaign_budget(campaign).spent == 3
    other = make_campaign("other", topics=("1",))
    judging.judgment_record(
        assessor=assessor, topic=other.topics.get(), docno="d1", relevance=0, aspects={}
    )
    assert selectors.campaign_budget(campaign).spent == 3, "another campaign's judgments"


def test_an_undone_judgment_is_no_longer_spent(campaign, assessor):
    from judging import services as judging

    topic = campaign.topics.get(topic_id="1")
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    [assignment] = judging.assignments_create(pool=pool, topics=[topic], assessors=[assessor])
    judging.judgment_submit(assignment=assignment, docno="d1", relevance=0, aspects={})
    assert selectors.campaign_budget(campaign).spent == 1
    judging.judgment_undo(assignment=assignment)
    assert selectors.campaign_budget(campaign).spent == 0


def test_pool_build_over_the_budget_stores_nothing_unless_confirmed(campaign, organiser):
    campaign.judgment_budget = 3
    campaign.save()
    with pytest.raises(OverBudget, match="asks for 4 new judgments"):
        pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    assert not campaign.pools.exists()
    pool_services.pool_build(
        campaign=campaign, spec=PoolSpec(depth=1), confirm_over_budget=True, created_by=organiser
    )
    assert campaign.pools.count() == 1
    [overrun] = campaign.overruns.all()
    assert (overrun.cost, overrun.remaining, overrun.confirmed_by) == (4, 3, organiser)
