"""Database helpers that depend on which database runs under Django."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection, models, transaction
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


def update_by_pk(
    model: type[models.Model],
    rows: Iterable[Sequence[Any]],
    fields: Sequence[str],
    *,
    batch_size: int = 2000,
) -> int:
    """Give each row of `model` whose primary key is a row's first value the row's
    other values, for `fields` in that order; return how many rows were given.

    Each row is named once, in a join: `QuerySet.bulk_update` builds a CASE over the
    whole batch for every field instead, whose cost (in Python and in the database)
    grows with rows x batch: the 20,000 entries of a pool re-plan took it 50 s.
    PostgreSQL: one `UPDATE ... FROM unnest(arrays)`, a parameter per field (a
    statement with a placeholder per value takes psycopg seconds to prepare).
    SQLite: an `UPDATE ... FROM (VALUES ...)` per batch; bulk_update on a SQLite
    older than 3.33, which has no UPDATE ... FROM."""
    import sqlite3

    rows = [tuple(row) for row in rows]
    if not rows:
        return 0
    if connection.vendor == "sqlite" and sqlite3.sqlite_version_info < (3, 33):
        objects = [model(pk=row[0], **dict(zip(fields, row[1:], strict=True))) for row in rows]
        return model._default_manager.bulk_update(objects, fields, batch_size=batch_size)
    quote = connection.ops.quote_name
    meta = model._meta
    table, pk = quote(meta.db_table), quote(meta.pk.column)
    columns = [meta.pk, *(meta.get_field(name) for name in fields)]
    types = [field.cast_db_type(connection) for field in columns]
    # The joined rows' columns are column1, column2, ...: VALUES names them so on
    # both databases. A column of NULLs has no type of its own, hence the casts.
    assignments = ", ".join(
        f"{quote(field.column)} = CAST(v.column{k} AS {types[k - 1]})"
        for k, field in enumerate(columns[1:], start=2)
    )
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            arrays = ", ".join(f"CAST(%s AS {kind}[])" for kind in types)
            names = ", ".join(f"column{k}" for k in range(1, len(columns) + 1))
            cursor.execute(
                f"UPDATE {table} SET {assignments} FROM unnest({arrays}) AS v({names}) "
                f"WHERE {table}.{pk} = v.column1",
                [list(values) for values in zip(*rows, strict=True)],
            )
            return len(rows)
        placeholders = "(" + ", ".join(["%s"] * len(columns)) + ")"
        for start in range(0, len(rows), batch_size):
            batch = rows[start : start + batch_size]
            cursor.execute(
                f"UPDATE {table} SET {assignments} "
                f"FROM (VALUES {', '.join([placeholders] * len(batch))}) AS v "
                f"WHERE {table}.{pk} = v.column1",
                [value for row in batch for value in row],
            )
    return len(rows)
