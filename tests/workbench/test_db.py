"""read_snapshot: one moment for every query on PostgreSQL; never the write lock on SQLite."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from pooling.models import Campaign
from tests.helpers import make_campaign
from workbench.db import read_snapshot

pytestmark = pytest.mark.django_db(transaction=True)


def create_elsewhere(slug: str) -> None:
    """A campaign committed by another connection (another request, say)."""

    def create() -> None:
        try:
            make_campaign(slug, topics=())
        finally:
            connection.close()

    thread = threading.Thread(target=create)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "the other connection had to wait"


def test_queries_inside_read_one_moment_on_postgresql_and_do_not_lock_sqlite():
    make_campaign("first", topics=())
    with read_snapshot():
        before = Campaign.objects.count()
        create_elsewhere("second")  # committed while the snapshot is open
        during = Campaign.objects.count()
    after = Campaign.objects.count()
    assert (before, after) == (1, 2)
    if connection.vendor == "postgresql":
        assert during == 1, "the snapshot does not see a commit made after it began"
    else:
        assert during == 2, "SQLite reads without a transaction: it sees the commit"


def test_inside_a_transaction_already_open_the_callers_isolation_stands():
    from django.db import transaction

    with transaction.atomic(), read_snapshot():
        assert Campaign.objects.count() == 0  # no SET TRANSACTION error after a query


# --------------------------------------------------------------------------
# bulk_insert


def test_bulk_insert_stores_the_values_as_given_and_the_defaults_for_the_rest():
    from pooling.models import Pool, PoolEntry
    from workbench.db import bulk_insert

    campaign = make_campaign("bulk", topics=("1",))
    pool = Pool.objects.create(campaign=campaign, name="p", spec={})
    topic = campaign.topics.get()
    fields = ("pool_id", "topic_id", "docno", "best_rank", "n_runs", "stratum")
    rows = [
        (pool.pk, topic.pk, "d1", 1, 2, 1, 2 / 3, True, 1),
        (pool.pk, topic.pk, "é/../\\x", 7, 1, 2, 1e-300, False, None),
    ]
    count = bulk_insert(PoolEntry, (*fields, "inclusion_probability", "sampled", "order"), rows)
    assert count == 2
    stored = list(
        PoolEntry.objects.order_by("docno").values_list(
            "docno", "best_rank", "inclusion_probability", "sampled", "order", "retired", "revision"
        )
    )
    assert stored == [
        ("d1", 1, 2 / 3, True, 1, False, 1),
        ("é/../\\x", 7, 1e-300, False, None, False, 1),
    ]


def test_bulk_insert_refuses_unknown_fields_and_unset_timestamps():
    from judging.models import Judgment
    from pooling.models import PoolEntry
    from workbench.db import bulk_insert

    with pytest.raises(ValueError, match="not columns of PoolEntry: nonsense"):
        bulk_insert(PoolEntry, ("nonsense",), [])
    with pytest.raises(ValueError, match="give the values of created_at, updated_at"):
        bulk_insert(Judgment, ("assessor_id", "topic_id", "docno", "relevance"), [])


def test_update_by_pk_gives_each_named_row_its_values_nulls_included():
    from pooling.models import PoolEntry
    from tests.helpers import make_pool
    from workbench.db import update_by_pk

    pool = make_pool(make_campaign(topics=("1",)), {"1": ["a", "b", "c"]})
    a, _, c = pool.entries.order_by("order")
    given = update_by_pk(
        PoolEntry,
        [(a.pk, None, False, 0.25, 7), (c.pk, 9, True, 0.5, 1)],
        ["order", "sampled", "inclusion_probability", "stratum"],
    )
    assert given == 2
    rows = PoolEntry.objects.order_by("docno").values_list(
        "docno", "order", "sampled", "inclusion_probability", "stratum"
    )
    assert list(rows) == [
        ("a", None, False, 0.25, 7),
        ("b", 2, True, 1.0, 1),  # not named: unchanged
        ("c", 9, True, 0.5, 1),
    ]
    assert update_by_pk(PoolEntry, [], ["order"]) == 0
