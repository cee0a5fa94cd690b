"""Database helpers that depend on which database runs under Django."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection, transaction
from django.db.models import Model


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


def bulk_insert(model: type[Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
    """Insert `rows` (values in the order of `fields`, attribute names such as
    `topic_id`) into `model`'s table; every other column but the primary key gets
    its field's default. Returns the number of rows.

    For many rows at once, where `bulk_create` spends its time building model
    instances and SQL in Python (60,000 pool entries: 21 s on SQLite, 12 s on
    PostgreSQL): PostgreSQL reads them with COPY, the others with `executemany`
    (2-4 s). No signals, no `save()`; values go in as given, so pass Python
    values (`tolist()`, not NumPy scalars). Runs in the caller's transaction.
    """
    columns = [f for f in model._meta.concrete_fields if not f.primary_key]
    by_name = {name: f.column for f in columns for name in (f.name, f.attname)}
    unknown = [name for name in fields if name not in by_name]
    if unknown:
        raise ValueError(f"not columns of {model.__name__}: {', '.join(unknown)}")
    named = {by_name[name]: i for i, name in enumerate(fields)}
    stamped = [
        f.name
        for f in columns
        if f.column not in named and any(getattr(f, a, False) for a in ("auto_now", "auto_now_add"))
    ]
    if stamped:  # set by save(), which this skips: the caller names them
        raise ValueError(f"give the values of {', '.join(stamped)}")
    defaults = [None if f.column in named else f.get_default() for f in columns]
    positions = [named.get(f.column) for f in columns]

    def full(row: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(
            row[position] if position is not None else default
            for position, default in zip(positions, defaults, strict=True)
        )

    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    names = ", ".join(quote(f.column) for f in columns)
    count = 0
    with connection.cursor() as cursor:
        raw = cursor.cursor
        if connection.vendor == "postgresql" and hasattr(raw, "copy"):
            with raw.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(full(row))
                    count += 1
            return count
        sql = f"INSERT INTO {table} ({names}) VALUES ({', '.join(['%s'] * len(columns))})"
        batch: list[tuple[Any, ...]] = []
        for row in rows:
            batch.append(full(row))
            if len(batch) == 5000:
                cursor.executemany(sql, batch)
                count, batch = count + len(batch), []
        if batch:
            cursor.executemany(sql, batch)
            count += len(batch)
    return count
