"""Database helpers that depend on which database runs under Django."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction


@contextmanager
def read_snapshot() -> Iterator[None]:
    """Every query inside reads the database as of one moment, so that numbers read
    by several queries agree (a dashboard's spent and left to judge, while
    assessors commit judgments between its queries).

    PostgreSQL: a REPEATABLE READ, READ ONLY transaction; READ COMMITTED, its
    default, gives each statement the commits made since the last. Inside a
    transaction already open (a test's, a caller's) that transaction's isolation
    stands. SQLite: nothing, since its transactions here begin IMMEDIATE, taking
    the write lock, and a dashboard must not make assessors wait; its reads may
    then disagree by the judgments committed meanwhile, as before."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield
