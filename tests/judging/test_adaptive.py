"""Live adaptive pools: the next document drawn when asked, from the judgments so far."""

from __future__ import annotations

import pytest

from judging import adaptive, services
from judging.models import Assignment
from pooling import pool_services
from pooling.core.adaptive import make_strategy
from pooling.core.adaptive_base import Candidates
from pooling.core.adaptive_live import LiveTopic
from pooling.core.spec import PoolSpec
from pooling.errors import PoolBuildError
from pooling.models import PoolEntry
from pooling.selectors import ranked_runs
from tests.helpers import make_campaign, make_run, make_user
from workbench.core.label_schema import SCHEMA_PRESETS

pytestmark = pytest.mark.django_db

# Two runs that agree on nothing below rank 1, so that the strategy's choice matters.
RUNS = {
    "good": {"1": [f"g{i}" for i in range(8)], "2": [f"h{i}" for i in range(8)]},
    "poor": {"1": ["g0", *(f"p{i}" for i in range(7))], "2": [f"q{i}" for i in range(8)]},
}


def relevant(docno: str) -> int:
    return int(docno[0] in "gh")


def adaptive_pool(strategy: str = "mtf", budget: int = 10, seed: int = 3):
    campaign = make_campaign(topics=("1", "2"), label_schema=SCHEMA_PRESETS["binary"].schema())
    for tag, rows in RUNS.items():
        make_run(campaign, tag, rows)
    spec = PoolSpec(depth=8, strategy=strategy, budget=budget, seed=seed)
    return pool_services.pool_build(campaign=campaign, spec=spec)


def judge_all(assignment: Assignment, *, stop: int | None = None) -> list[str]:
    """Judge what the assignment is given, by `relevant`, until it is given nothing."""
    seen = []
    while len(seen) != stop and (entry := assignment.next_unjudged()) is not None:
        seen.append(entry.docno)
        services.judgment_submit(
            assignment=assignment, docno=entry.docno, relevance=relevant(entry.docno), aspects={}
        )
    return seen


def reference_order(pool, topic: str, budget: int) -> list[str]:
    """The strategy run by hand on the topic's candidates: what the pool must draw."""
    ranked = ranked_runs(pool.campaign, max_depth=8, runs=list(pool.runs.all()))
    candidates = Candidates.from_ranked(ranked, depth=8, topics=[topic])
    strategy = make_strategy(pool.spec["strategy"], candidates, seed=pool.spec["seed"])
    order = []
    while len(order) < budget and (doc := strategy.next_document()) is not None:
        order.append(doc[1])
        strategy.observe(topic, doc[1], relevant(doc[1]))
    return order


@pytest.fixture(autouse=True)
def _fresh_state():
    adaptive.forget_state()


def test_an_adaptive_pool_is_built_with_nothing_drawn_and_says_so():
    pool = adaptive_pool()
    assert pool.entries.count() == 8 + 7 + 16  # the union of the runs' documents
    assert not pool.entries.filter(sampled=True).exists()
    assert pool.spec["strategy"] == "mtf"
    assert pool.spec["budget"] == 10
    assert "adaptive mtf" in pool.name


@pytest.mark.parametrize("strategy", ["mtf", "hedge", "bandit", "thompson", "active"])
def test_each_document_is_the_strategys_choice_from_the_judgments_so_far(strategy):
    pool = adaptive_pool(strategy)
    ann = make_user("ann")
    one, two = services.assignments_create(
        pool=pool, topics=list(pool.campaign.topics.all()), assessors=[ann]
    )
    assert judge_all(one) == reference_order(pool, "1", 5)  # budget 10 over 2 topics
    assert judge_all(two) == reference_order(pool, "2", 5)
    drawn = pool.entries.filter(sampled=True).order_by("topic__topic_id", "order")
    # Each judgment's position in the order is its entry's.
    assert [e.order for e in drawn] == [1, 2, 3, 4, 5] * 2


def test_the_state_is_rebuilt_when_a_label_changes_or_is_undone():
    pool = adaptive_pool("mtf", budget=16)
    ann = make_user("ann")
    [one, _] = services.assignments_create(
        pool=pool, topics=list(pool.campaign.topics.all()), assessors=[ann]
    )
    judge_all(one, stop=3)
    live = adaptive.live_topic(pool, "1")
    first = one.queue().first()
    assert relevant(first.docno)
    services.judgment_submit(assignment=one, docno=first.docno, relevance=0, aspects={})
    drawn = one.next_unjudged()
    assert live.rebuilds == 1
    # What replaying the judgments as they stand now proposes.
    fresh = LiveTopic(live.candidates, "mtf", seed=3)
    fresh.advance([(e.docno, bool(relevant(e.docno)) and e != first) for e in one.queue()][:3])
    assert drawn.docno == fresh.next_docno()
    # Undone, the judgment leaves the strategy until the document is judged again.
    services.judgment_submit(assignment=one, docno=drawn.docno, relevance=1, aspects={})
    services.judgment_undo(assignment=one)
    assert one.next_unjudged().docno == drawn.docno
    assert pool.entries.filter(sampled=True).count() == 4


def test_a_topic_stops_at_its_share_of_the_budget():
    pool = adaptive_pool("bandit", budget=3)
    ann = make_user("ann")
    one, two = services.assignments_create(
        pool=pool, topics=list(pool.campaign.topics.all()), assessors=[ann]
    )
    assert len(judge_all(one)) == 2
    assert len(judge_all(two)) == 1


def test_two_assessors_never_get_the_same_document(django_user_model):
    pool = adaptive_pool("mtf", budget=16)
    ann, ben = make_user("ann"), make_user("ben")
    topics = list(pool.campaign.topics.all())
    [one] = services.assignments_create(pool=pool, topics=topics[:1], assessors=[ann])
    first = one.next_unjudged()
    # Asked again before judging it, the same document, not a second draw.
    assert one.next_unjudged().docno == first.docno
    assert PoolEntry.objects.filter(pool=pool, sampled=True).count() == 1
    # A second assessor of the pool on the other topic draws from that topic only.
    [two] = services.assignments_create(pool=pool, topics=topics[1:], assessors=[ben])
    assert two.next_unjudged().docno.startswith(("h", "q"))


def test_build_pool_makes_an_adaptive_pool_and_refuses_a_bad_one(capsys):
    from django.core.management import CommandError, call_command

    campaign = make_campaign(topics=("1", "2"))
    for tag, rows in RUNS.items():
        make_run(campaign, tag, rows)
    call_command(
        "build_pool",
        "--campaign",
        campaign.slug,
        "--depth",
        "8",
        "--strategy",
        "hedge",
        "--budget",
        "6",
    )
    assert "0 to judge" in capsys.readouterr().out
    assert campaign.pools.get().spec["strategy"] == "hedge"
    for args, reason in [
        (["--strategy", "greedy", "--budget", "6"], "unknown strategy 'greedy'"),
        (["--strategy", "mtf", "--budget", "0"], "budget must be 1 or more"),
        (["--strategy", "mtf"], "budget must be 1 or more"),
        (["--budget", "5"], "give --strategy too"),
    ]:
        with pytest.raises(CommandError, match=reason):
            call_command("build_pool", "--campaign", campaign.slug, "--depth", "8", *args)
    assert campaign.pools.count() == 1


def test_the_budget_is_raised_or_lowered_and_the_forecast_follows(capsys):
    from django.core.management import CommandError, call_command

    from judging.status import campaign_status

    pool = adaptive_pool("mtf", budget=4)
    ann = make_user("ann")
    one, two = services.assignments_create(
        pool=pool, topics=list(pool.campaign.topics.all()), assessors=[ann]
    )
    judge_all(one)
    topics = {t.topic_id: t for t in campaign_status(pool.campaign).topics}
    # Topic 2 has drawn nothing yet, and still has its share of the budget to judge.
    assert (topics["1"].to_judge, topics["1"].judged) == (2, 2)
    assert (topics["2"].to_judge, topics["2"].judged) == (2, 0)
    assert two.progress() == (0, 2)
    call_command("pool_replan", "--pool", str(pool.pk), "--budget", "10")
    assert "budget 10" in capsys.readouterr().out
    assert len(judge_all(one)) == 3
    assert one.progress() == (5, 5)
    pool_services.pool_budget_set(pool=pool, budget=2)
    pool.refresh_from_db()
    assert two.next_unjudged() is not None
    assert two.next_unjudged() is not None
    judge_all(two)
    assert pool.entries.filter(topic__topic_id="2", sampled=True).count() == 1
    with pytest.raises(CommandError, match="give its new budget"):
        call_command("pool_replan", "--pool", str(pool.pk))
    with pytest.raises(PoolBuildError, match="re-planned by its budget"):
        pool_services.pool_revise(pool=pool, spec=PoolSpec(depth=2), topics=["1"])
    with pytest.raises(PoolBuildError, match="budget must be 1 or more"):
        pool_services.pool_budget_set(pool=pool, budget=0)
    assert pool.spec["budget"] == 2


def test_overlap_and_agreement_work_on_the_documents_drawn():
    from judging.core.overlap import OverlapSpec
    from judging.selectors import agreement_report

    pool = adaptive_pool("hedge", budget=8)
    ann, ben = make_user("ann"), make_user("ben")
    topics = list(pool.campaign.topics.all())
    [one, _] = services.assignments_create(pool=pool, topics=topics, assessors=[ann])
    drawn = judge_all(one)
    services.overlap_assign(
        pool=pool, spec=OverlapSpec(k=2, topics=frozenset({"1"})), assessors=[ben]
    )
    overlap = Assignment.objects.get(assessor=ben)
    # The overlap assessor judges what was drawn, and draws nothing herself.
    assert sorted(judge_all(overlap)) == sorted(drawn)
    assert pool.entries.filter(sampled=True).count() == len(drawn)
    report = agreement_report(pool)
    pairs = report.pairs[report.pairs["scope"] == "topic"]
    assert set(zip(pairs["assessor_a"], pairs["assessor_b"], strict=True)) == {("ann", "ben")}
    assert set(pairs["n_items"]) == {len(drawn)}
