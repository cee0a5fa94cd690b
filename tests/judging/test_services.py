"""Recording judgments: idempotent, transactional, audited, undoable."""

from __future__ import annotations

import itertools
import threading

import pytest
from django.db import connection

from judging import services
from judging.models import Assignment, Judgment, JudgmentEvent
from tests.helpers import make_campaign, make_pool, make_user
from workbench.core.label_schema import LabelError

pytestmark = pytest.mark.django_db

RELEVANT = {"effectiveness": 3, "credibility": 1}
NOT_ASKED = {"effectiveness": -1, "credibility": -1}


@pytest.fixture
def assignment(assessor) -> Assignment:
    campaign = make_campaign()
    pool = make_pool(campaign, {"301": ["d1", "d2", "d3"], "302": ["d9"]})
    [assignment] = services.assignments_create(
        pool=pool, topics=campaign.topics.filter(topic_id="301"), assessors=[assessor]
    )
    return assignment


def submit(assignment: Assignment, docno: str, relevance, aspects=None, seconds=1.0):
    return services.judgment_submit(
        assignment=assignment,
        docno=docno,
        relevance=relevance,
        aspects=aspects or {},
        seconds=seconds,
    )


def events(assignment: Assignment) -> list[tuple]:
    return list(
        JudgmentEvent.objects.filter(assessor=assignment.assessor)
        .order_by("id")
        .values_list("docno", "action", "old", "new")
    )


def test_first_judgment_creates_a_row_and_an_event(assignment):
    judgment = submit(assignment, "d1", 2, RELEVANT, seconds=12.5)
    assert (judgment.relevance, judgment.aspects, judgment.seconds) == (2, RELEVANT, 12.5)
    assert events(assignment) == [("d1", "create", None, {"relevance": 2, **RELEVANT})]


def test_not_relevant_stores_aspects_as_not_asked(assignment):
    judgment = submit(assignment, "d1", "0", {"effectiveness": "3"})
    assert judgment.aspects == NOT_ASKED


def test_a_repeated_identical_save_adds_no_seconds_and_no_event(assignment):
    first = submit(assignment, "d1", 1, RELEVANT, seconds=5)
    for seconds in (3, 5, 1800):
        submit(assignment, "d1", "1", {k: str(v) for k, v in RELEVANT.items()}, seconds=seconds)
    judgment = Judgment.objects.get()
    assert (judgment.seconds, judgment.updated_at) == (5, first.updated_at)
    assert [e[1] for e in events(assignment)] == ["create"]


def test_a_revision_adds_its_visits_seconds(assignment):
    submit(assignment, "d1", 1, RELEVANT, seconds=5)
    submit(assignment, "d1", 0, seconds=3)
    assert Judgment.objects.get().seconds == 8
    assert JudgmentEvent.objects.get(action="update").seconds == 3


def test_revision_updates_the_row_and_logs_old_and_new(assignment):
    submit(assignment, "d1", 1, RELEVANT)
    submit(assignment, "d1", 0)
    assert Judgment.objects.get().relevance == 0
    assert events(assignment)[-1] == (
        "d1",
        "update",
        {"relevance": 1, **RELEVANT},
        {"relevance": 0, **NOT_ASKED},
    )


@pytest.mark.parametrize(
    ("relevance", "aspects", "message"),
    [
        (5, {}, "Relevance must be one of"),
        (1, {"effectiveness": 1}, "Credibility is required when Relevance is 1"),
        (2, {"effectiveness": 9, "credibility": 1}, "Effectiveness must be one of"),
        ("x", {}, "Relevance must be a whole number"),
    ],
)
def test_rejected_labels_leave_stored_data_unchanged(assignment, relevance, aspects, message):
    submit(assignment, "d1", 2, RELEVANT)
    before = (list(Judgment.objects.values()), events(assignment))
    with pytest.raises(LabelError, match=message):
        submit(assignment, "d1", relevance, aspects)
    assert (list(Judgment.objects.values()), events(assignment)) == before


def test_document_outside_the_assignment_is_refused(assignment):
    with pytest.raises(services.JudgmentError, match="document 'd9' is not in this assignment"):
        submit(assignment, "d9", 1, RELEVANT)
    assert not Judgment.objects.exists()


def test_failure_mid_write_keeps_the_previous_state(assignment, monkeypatch):
    submit(assignment, "d1", 1, RELEVANT)

    def broken_log(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(services, "_log", broken_log)
    with pytest.raises(RuntimeError):
        submit(assignment, "d1", 2, RELEVANT)
    assert Judgment.objects.get().relevance == 1


def test_undo_removes_a_first_judgment_and_restores_a_revision(assignment):
    submit(assignment, "d1", 1, RELEVANT)
    submit(assignment, "d2", 2, RELEVANT)
    submit(assignment, "d1", 0)
    reverted = services.judgment_undo(assignment=assignment)
    assert (reverted.docno, reverted.action) == ("d1", "update")
    assert Judgment.objects.get(docno="d1").relevance == 1
    assert services.judgment_undo(assignment=assignment).docno == "d2"
    assert not Judgment.objects.filter(docno="d2").exists()
    assert services.judgment_undo(assignment=assignment).docno == "d1"
    assert not Judgment.objects.exists()
    assert services.judgment_undo(assignment=assignment) is None
    actions = [e[1] for e in events(assignment)]
    assert actions == ["create", "create", "update", "undo", "undo", "undo"]


def test_undo_event_records_what_it_replaced(assignment):
    submit(assignment, "d1", 1, RELEVANT)
    submit(assignment, "d1", 2, RELEVANT)
    services.judgment_undo(assignment=assignment)
    undo = JudgmentEvent.objects.get(action="undo")
    assert undo.old == {"relevance": 2, **RELEVANT}
    assert undo.new == {"relevance": 1, **RELEVANT}
    assert undo.reverts.action == "update"


def test_undo_only_touches_this_assessors_topic(assignment, assessor2):
    other = services.assignments_create(
        pool=assignment.pool,
        topics=assignment.pool.campaign.topics.filter(topic_id="302"),
        assessors=[assessor2],
    )[0]
    submit(assignment, "d1", 1, RELEVANT)
    submit(other, "d9", 1, RELEVANT)
    services.judgment_undo(assignment=assignment)
    assert list(Judgment.objects.values_list("docno", flat=True)) == ["d9"]


# --------------------------------------------------------------------------
# Assignments


def test_assign_deals_topics_to_assessors_and_keeps_existing(assessor, assessor2):
    campaign = make_campaign(topics=("1", "2", "3"))
    pool = make_pool(campaign, {"1": ["a"], "2": ["b"], "3": ["c"]})
    created = services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[assessor, assessor2]
    )
    assert sorted((a.topic.topic_id, a.assessor.username) for a in created) == [
        ("1", "alice"),
        ("2", "bob"),
        ("3", "alice"),
    ]
    again = services.assignments_create(
        pool=pool, topics=campaign.topics.filter(topic_id="1"), assessors=[assessor]
    )
    assert [a.id for a in again] == [created[0].id]
    assert Assignment.objects.count() == 3


def test_a_topic_has_one_primary_assessor(assessor, assessor2):
    campaign = make_campaign(topics=("1", "2"))
    pool = make_pool(campaign, {"1": ["a"], "2": ["b"]})
    services.assignments_create(
        pool=pool, topics=campaign.topics.filter(topic_id="1"), assessors=[assessor]
    )
    with pytest.raises(
        services.AssignmentError, match="topic 1 already has primary assessor alice"
    ):
        services.assignments_create(pool=pool, topics=campaign.topics.all(), assessors=[assessor2])
    assert Assignment.objects.count() == 1
    with pytest.raises(
        services.AssignmentError, match="topic 1 can have one primary assessor, not alice, bob"
    ):
        services.assignments_create(
            pool=pool, topics=campaign.topics.filter(topic_id="1"), assessors=[assessor, assessor2]
        )


def test_topics_of_another_campaign_cannot_be_assigned(assessor):
    pool = make_pool(make_campaign("a", topics=("1",)), {"1": ["x"]})
    foreign = make_campaign("b", topics=("1",)).topics.all()
    with pytest.raises(services.AssignmentError, match="not topics of this pool's campaign: 1"):
        services.assignments_create(pool=pool, topics=foreign, assessors=[assessor])


def test_primary_queue_follows_presentation_order_and_skips_unsampled(assessor):
    campaign = make_campaign(topics=("1",))
    pool = make_pool(campaign, {"1": ["a", "b", "c"]})
    pool.entries.filter(docno="a").update(order=3)
    pool.entries.filter(docno="c").update(order=1)
    pool.entries.filter(docno="b").update(sampled=False, order=None)
    [assignment] = services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[assessor]
    )
    assert list(assignment.queue().values_list("docno", flat=True)) == ["c", "a"]


# --------------------------------------------------------------------------
# Concurrency: real threads, real transactions


@pytest.mark.django_db(transaction=True)
def test_concurrent_first_submissions_make_one_row_and_keep_a_value():
    user = make_user("carol")
    campaign = make_campaign(topics=("1",))
    pool = make_pool(campaign, {"1": ["d1"]})
    [assignment] = services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[user]
    )
    values = [0, 1, 2, 1, 2, 0, 2, 1]
    barrier = threading.Barrier(len(values))
    errors: list[BaseException] = []

    def judge(relevance: int) -> None:
        try:
            barrier.wait()
            aspects = RELEVANT if relevance else {}
            services.judgment_submit(
                assignment=assignment, docno="d1", relevance=relevance, aspects=aspects
            )
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=judge, args=(v,)) for v in values]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    judgment = Judgment.objects.get()
    log = list(JudgmentEvent.objects.order_by("id"))
    assert log[0].action == "create"
    # The event log replays to the stored value: no change was lost.
    assert log[-1].new["relevance"] == judgment.relevance
    for before, after in itertools.pairwise(log):
        assert after.old == before.new


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("nan", 0.0),
        ("inf", 0.0),
        ("-inf", 0.0),
        (-4, 0.0),
        (1e308, 1800.0),
        ("x", 0.0),
        (12.5, 12.5),
    ],
)
def test_a_visits_time_is_a_finite_positive_number_of_seconds(assignment, sent, stored):
    judgment = services.judgment_submit(
        assignment=assignment, docno="d1", relevance=0, aspects={}, seconds=sent
    )
    assert judgment.seconds == stored
    assert JudgmentEvent.objects.get().seconds == stored
