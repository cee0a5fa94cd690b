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
