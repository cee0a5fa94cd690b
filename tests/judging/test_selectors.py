"""Who may be given work, frames read from the ORM, overlap assignment, and adjudications."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from judging import selectors, services
from judging.core.overlap import OverlapPlanError, OverlapSpec
from judging.models import Adjudication, Assignment, OverlapItem, PoolPolicy
from tests.helpers import make_campaign, make_pool, make_pool_with_outsiders, make_user
from workbench.core.label_schema import LabelError

pytestmark = pytest.mark.django_db
RELEVANT = {"effectiveness": 3, "credibility": 1}


@pytest.fixture
def setup():
    users = [make_user(name) for name in ("ann", "ben", "cat", "dan")]
    campaign = make_campaign(topics=("1", "2"))
    pool = make_pool(
        campaign, {"1": [f"a{i}" for i in range(10)], "2": [f"b{i}" for i in range(10)]}
    )
    topics = list(campaign.topics.all())
    services.assignments_create(pool=pool, topics=topics[:1], assessors=[users[0]])
    services.assignments_create(pool=pool, topics=topics[1:], assessors=[users[1]])
    return pool, users


def test_work_goes_to_assessors_who_can_log_in_and_every_assessor_means_the_pools(tmp_path):
    pool = make_pool_with_outsiders(tmp_path)
    eligible = selectors.eligible_assessors(pool.campaign)
    assert [user.username for user in eligible] == ["ann", "ben", "cat", "dora"]
    assert [user.username for user in selectors.pool_assessors(pool)] == ["ann", "ben"]
    make_user("olivia", organiser=True)
    outsiders = list(User.objects.filter(username__in=["nist", "olivia"]))
    assert selectors.assessor_refusals(pool.campaign, outsiders) == {
        "nist": "the account cannot log in (no password: set one in the admin first)",
        "olivia": "an organiser, not an assessor",
    }
    for outsider in outsiders:
        with pytest.raises(services.AssignmentError, match=outsider.username):
            services.overlap_assign(pool=pool, spec=OverlapSpec(k=2), assessors=[outsider])
    topic = pool.campaign.topics.get(topic_id="1")
    with pytest.raises(services.AssignmentError, match="nist: the account cannot log in"):
        services.assignments_create(
            pool=make_pool(pool.campaign, {"1": ["d1"]}, name="again"),
            topics=[topic],
            assessors=User.objects.filter(username="nist"),
        )
    assert not Assignment.objects.filter(assessor__username="nist", pool=pool)


def test_judgments_frame_spreads_aspects_and_marks_primaries(setup):
    pool, users = setup
    primary = Assignment.objects.get(assessor=users[0])
    services.judgment_submit(assignment=primary, docno="a1", relevance=2, aspects=RELEVANT)
    services.judgment_record(
        assessor=users[2], topic=primary.topic, docno="a1", relevance=0, aspects={}
    )
    services.judgment_record(
        assessor=users[2], topic=primary.topic, docno="not-pooled", relevance=1, aspects=RELEVANT
    )
    frame = selectors.judgments_frame(pool)
    assert frame.to_dict(orient="records") == [
        {
            "assessor": "ann",
            "query_id": "1",
            "doc_id": "a1",
            "relevance": 2,
            "is_primary": True,
            "effectiveness": 3,
            "credibility": 1,
        },
        {
            "assessor": "cat",
            "query_id": "1",
            "doc_id": "a1",
            "relevance": 0,
            "is_primary": False,
            "effectiveness": -1,
            "credibility": -1,
        },
    ]


def test_empty_frames_have_their_columns(setup):
    pool, _ = setup
    assert list(selectors.judgments_frame(pool).columns) == [
        "assessor",
        "query_id",
        "doc_id",
        "relevance",
        "is_primary",
        "effectiveness",
        "credibility",
    ]
    assert selectors.adjudications_frame(pool).empty
    assert selectors.primary_assessors(pool) == {"1": "ann", "2": "ben"}


def test_overlap_gives_each_item_exactly_k_assessors_and_balances_load(setup):
    pool, users = setup
    plan = services.overlap_assign(
        pool=pool, spec=OverlapSpec(k=3, fraction=0.5, seed=7), assessors=users
    )
    assert plan.cost.total == 2 * 5 * 2
    judges: dict[tuple[str, str], set[str]] = {}
    for assignment in Assignment.objects.select_related("assessor", "topic"):
        for entry in assignment.queue():
            judges.setdefault((assignment.topic.topic_id, entry.docno), set()).add(
                assignment.assessor.username
            )
    overlap = {item: who for item, who in judges.items() if len(who) > 1}
    assert len(overlap) == 10
    assert all(len(who) == 3 for who in overlap.values())
    loads = [OverlapItem.objects.filter(assignment__assessor=u).count() for u in users]
    assert max(loads) - min(loads) <= 1
    assert sum(loads) == 20
    assert PoolPolicy.objects.get(pool=pool).overlap_spec == {
        "k": 3,
        "fraction": 0.5,
        "topics": None,
        "seed": 7,
    }


def test_overlap_queue_follows_the_pool_order(setup):
    pool, users = setup
    services.overlap_assign(
        pool=pool,
        spec=OverlapSpec(k=2, fraction=0.3, topics=frozenset({"1"}), seed=1),
        assessors=users[1:],
    )
    for assignment in Assignment.objects.filter(kind=Assignment.OVERLAP):
        orders = [e.order for e in assignment.queue()]
        assert orders == sorted(orders)
        assert [e.position for e in assignment.queue()] == list(range(1, len(orders) + 1))


def test_overlap_preview_assigns_nothing(setup):
    pool, users = setup
    plan = services.overlap_plan(pool=pool, spec=OverlapSpec(k=2, fraction=1.0), assessors=users)
    assert plan.cost.total == 20
    assert not Assignment.objects.filter(kind=Assignment.OVERLAP).exists()


def test_overlap_with_too_few_assessors_is_refused(setup):
    pool, users = setup
    with pytest.raises(OverlapPlanError):
        services.overlap_assign(pool=pool, spec=OverlapSpec(k=4), assessors=users[:2])
    assert not OverlapItem.objects.exists()


def test_adjudication_is_checked_against_the_schema_and_updated(setup, organiser):
    pool, _ = setup
    topic = pool.campaign.topics.get(topic_id="1")
    with pytest.raises(LabelError, match="Credibility is required"):
        services.adjudication_record(
            pool=pool,
            topic=topic,
            docno="a1",
            relevance=1,
            aspects={"effectiveness": 1},
            reason="",
            decided_by=organiser,
        )
    services.adjudication_record(
        pool=pool,
        topic=topic,
        docno="a1",
        relevance=1,
        aspects=RELEVANT,
        reason=" both plausible ",
        decided_by=organiser,
    )
    services.adjudication_record(
        pool=pool,
        topic=topic,
        docno="a1",
        relevance=0,
        aspects={},
        reason="off topic",
        decided_by=organiser,
    )
    adjudication = Adjudication.objects.get()
    assert (adjudication.relevance, adjudication.aspects, adjudication.reason) == (
        0,
        {"effectiveness": -1, "credibility": -1},
        "off topic",
    )
    assert selectors.adjudications_frame(pool).to_dict(orient="records") == [
        {
            "query_id": "1",
            "doc_id": "a1",
            "relevance": 0,
            "reason": "off topic",
            "decided_by": "olivia",
            "decided_at": adjudication.decided_at.isoformat(timespec="seconds"),
            "effectiveness": -1,
            "credibility": -1,
        }
    ]
