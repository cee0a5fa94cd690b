"""Assignments' progress, counted for a whole list in one query, and what an assessor
judged in one, whatever a re-plan did to the sample."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from judging import services
from judging.core.overlap import OverlapSpec
from judging.models import Assignment
from tests.helpers import make_campaign, make_pool, make_replanned_assignments, make_user

pytestmark = pytest.mark.django_db


def judge(assignment: Assignment, *docnos: str) -> None:
    for docno in docnos:
        services.judgment_submit(assignment=assignment, docno=docno, relevance=0, aspects={})


@pytest.fixture
def pool():
    make_user("ann"), make_user("ben"), make_user("cat")
    campaign = make_campaign(topics=("1", "2"))
    return make_pool(campaign, {"1": [f"a{i}" for i in range(6)], "2": [f"b{i}" for i in range(4)]})


def test_progress_counts_each_queue_primary_and_overlap(pool):
    from django.contrib.auth.models import User

    ann, ben, cat = (User.objects.get(username=n) for n in ("ann", "ben", "cat"))
    topics = list(pool.campaign.topics.all())
    one, two = services.assignments_create(pool=pool, topics=topics, assessors=[ann, ben])
    services.overlap_assign(pool=pool, spec=OverlapSpec(k=2, fraction=0.5, seed=1), assessors=[cat])
    judge(one, "a0", "a1", "a2")
    judge(two, "b3")
    overlap = Assignment.objects.filter(assessor=cat)
    # A judgment of a document outside the queue does not count.
    services.judgment_record(assessor=ann, topic=topics[0], docno="zz", relevance=0, aspects={})
    for assignment in overlap:
        judge(assignment, assignment.queue().first().docno)
    rows = {
        (a.assessor.username, a.topic.topic_id): (a.judged, a.total)
        for a in Assignment.objects.select_related("assessor", "topic").list_with_progress()
    }
    assert rows == {
        ("ann", "1"): (3, 6),
        ("ben", "2"): (1, 4),
        ("cat", "1"): (1, 3),
        ("cat", "2"): (1, 2),
    }
    # The counts are those of the assignments listed, whatever the filter.
    [cats] = Assignment.objects.filter(assessor=cat, topic=topics[1]).list_with_progress()
    assert (cats.judged, cats.total) == (1, 2)
    assert Assignment.objects.none().list_with_progress() == []
    for assignment in Assignment.objects.all():
        queue = set(assignment.queue().values_list("docno", flat=True))
        judged = assignment.assessor.judgments.filter(topic=assignment.topic, docno__in=queue)
        assert assignment.progress() == (judged.count(), len(queue))


def test_lists_of_assignments_cost_the_same_queries_whatever_their_number(client, pool):
    from django.contrib.auth.models import User

    ann = User.objects.get(username="ann")
    client.force_login(ann)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse("judging:assessor_home")).status_code == 200
        return len(captured)

    services.assignments_create(
        pool=pool, topics=pool.campaign.topics.filter(topic_id="1"), assessors=[ann]
    )
    one = queries()
    second_pool = make_pool(pool.campaign, {"1": ["c1"], "2": ["c2", "c3"]}, name="again")
    services.assignments_create(
        pool=second_pool, topics=pool.campaign.topics.all(), assessors=[ann]
    )
    assert Assignment.objects.filter(assessor=ann).count() == 3
    assert queries() == one


def test_the_organisers_assignment_page_costs_the_same_queries_whatever_their_number(
    organiser_client, pool
):
    from django.contrib.auth.models import User

    ann, ben = User.objects.get(username="ann"), User.objects.get(username="ben")
    url = reverse("judging:pool_assignments", args=[pool.pk])

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert organiser_client.get(url).status_code == 200
        return len(captured)

    topics = list(pool.campaign.topics.all())
    services.assignments_create(pool=pool, topics=topics[:1], assessors=[ann])
    one = queries()
    services.assignments_create(pool=pool, topics=topics[1:], assessors=[ben])
    services.overlap_assign(pool=pool, spec=OverlapSpec(k=2, fraction=0.5), assessors=[ann, ben])
    assert Assignment.objects.filter(pool=pool).count() == 4
    assert queries() == one


def test_what_an_assessor_judged_stays_hers_whatever_a_replan_does_to_the_sample(assessor):
    """Topic 1's re-plan drew fewer documents, topic 2's pooled fewer: judged
    documents left the queue in both, and still count as hers."""
    replanned = make_replanned_assignments(assessor)
    for topic_id, mine in replanned.items():
        assignment = mine["assignment"]
        assert mine["out"], f"topic {topic_id}: the re-plan took no judged document out"
        queue = set(assignment.queue().values_list("docno", flat=True))
        assert set(assignment.judgments().values_list("docno", flat=True)) == mine["judged"]
        assert assignment.progress() == (len(mine["judged"]), len(queue | mine["judged"]))
        [listed] = Assignment.objects.filter(pk=assignment.pk).list_with_progress()
        assert (listed.judged, listed.total) == assignment.progress()
        for docno in mine["out"]:
            entry = assignment.entry_of(docno)
            assert (entry.docno, entry.position) == (docno, None)
        assert {n.docno for n in assignment.notes()} >= mine["judged"] | {mine["set_aside"]}
    # A document of the topic never in her queue, and never judged by her, is not hers.
    first = replanned["1"]["assignment"]
    never = first.entries().filter(sampled=False).exclude(docno__in=replanned["1"]["judged"])
    assert first.entry_of(never.first().docno) is None
