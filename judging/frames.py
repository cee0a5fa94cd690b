"""Read a pool's entries, judgments and adjudications into the frames the pure
cores take (`overlap`, `agreement`, `labels`): one `.values()` query each."""

from __future__ import annotations

import pandas as pd
from django.db.models import Exists, OuterRef

from judging.models import Adjudication, Assignment, Judgment
from pooling.label_schema import NOT_ASKED
from pooling.models import Pool, PoolEntry


def pool_entries_frame(pool: Pool, *, sampled_only: bool = True) -> pd.DataFrame:
    """Columns: query_id, doc_id, order (the sampled entries, unless told otherwise)."""
    entries = PoolEntry.objects.filter(pool=pool)
    if sampled_only:
        entries = entries.filter(sampled=True)
    rows = entries.values_list("topic__topic_id", "docno", "order")
    return pd.DataFrame(list(rows), columns=["query_id", "doc_id", "order"])


def primary_assessors(pool: Pool) -> dict[str, str]:
    """topic id -> username of its primary assessor."""
    return dict(
        pool.assignments.filter(kind=Assignment.PRIMARY).values_list(
            "topic__topic_id", "assessor__username"
        )
    )


def judgments_frame(pool: Pool) -> pd.DataFrame:
    """Every judgment on the pool's entries, one row per (assessor, item).

    Columns: assessor (username), query_id, doc_id, relevance, is_primary,
    and one column per aspect of the campaign's schema (NOT_ASKED, -1, when
    the aspect was not asked).
    """
    aspect_ids = pool.campaign.schema.aspect_ids
    in_pool = PoolEntry.objects.filter(pool=pool, topic=OuterRef("topic"), docno=OuterRef("docno"))
    is_primary = Assignment.objects.filter(
        pool=pool, topic=OuterRef("topic"), assessor=OuterRef("assessor"), kind=Assignment.PRIMARY
    )
    rows = (
        Judgment.objects.filter(Exists(in_pool))
        .annotate(is_primary=Exists(is_primary))
        .values_list(
            "assessor__username", "topic__topic_id", "docno", "relevance", "is_primary", "aspects"
        )
        .order_by("topic__position", "docno", "assessor__username")
    )
    columns = ["assessor", "query_id", "doc_id", "relevance", "is_primary"]
    return _with_aspects(list(rows), columns, aspect_ids)


def adjudications_frame(pool: Pool) -> pd.DataFrame:
    """Adjudications of the pool's items. Columns: query_id, doc_id, relevance,
    the schema's aspects, reason, decided_by (username, None if the account is
    gone), decided_at (ISO 8601, to the second)."""
    aspect_ids = pool.campaign.schema.aspect_ids
    in_pool = PoolEntry.objects.filter(pool=pool, topic=OuterRef("topic"), docno=OuterRef("docno"))
    rows = (
        Adjudication.objects.filter(Exists(in_pool))
        .values_list(
            "topic__topic_id",
            "docno",
            "relevance",
            "reason",
            "decided_by__username",
            "decided_at",
            "aspects",
        )
        .order_by("topic__position", "docno")
    )
    columns = ["query_id", "doc_id", "relevance", "reason", "decided_by", "decided_at"]
    frame = _with_aspects(list(rows), columns, aspect_ids)
    frame["decided_at"] = [at.isoformat(timespec="seconds") for at in frame["decided_at"]]
    return frame


def _with_aspects(
    rows: list[tuple], columns: list[str], aspect_ids: tuple[str, ...]
) -> pd.DataFrame:
    """Rows whose last value is an aspects dict, with that dict spread into columns."""
    frame = pd.DataFrame([row[:-1] for row in rows], columns=columns)
    for aspect in aspect_ids:
        frame[aspect] = pd.array([row[-1].get(aspect, NOT_ASKED) for row in rows], dtype="int64")
    if not rows:
        frame = frame.astype({"relevance": "int64"})
    return frame
