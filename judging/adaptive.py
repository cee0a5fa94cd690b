"""Live adaptive pools: the next document is drawn when the assessor asks for it.

An adaptive pool (`PoolSpec.strategy`) is built with every candidate as an
undrawn entry (`sampled` False, no `order`). When the primary assessor of a
topic has judged (or set aside) every drawn document, `adaptive_draw` asks
the topic's strategy (`pooling.core.adaptive_live.LiveTopic`) for the next
one and draws it: `sampled` True and `order` its 1-based place in the
topic's draw order, which is the position each judgment records. So the
queue, progress, overlap, agreement, ledger and exports see an adaptive pool
as a pool whose sample grows one document at a time.

What the strategy learns: the topic's drawn documents in draw order, each
with its first judgment's label (by anyone); a document set aside as
cannot-judge and judged by nobody counts as not relevant. The state is kept
per process (`_live`) and advanced with the new judgments; a label changed or
undone rebuilds it (`LiveTopic.advance`).

Two assessors never get the same document: a draw happens inside a
transaction that locks the pool's row (`select_for_update`, PostgreSQL) and
claims the entry with a conditional update (`sampled` still False), which
SQLite's single writer serialises too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import OuterRef, Subquery

from pooling.core.spec import PoolSpec
from pooling.models import Pool, PoolEntry
from workbench.core.topic_ids import topic_sort_key

if TYPE_CHECKING:
    # The strategies need pandas and pyarrow: imported when a draw needs them, so
    # that the status pages and `campaign_status` start without them.
    from judging.models import Assignment
    from pooling.core.adaptive_base import Candidates
    from pooling.core.adaptive_live import LiveTopic

_lock = threading.Lock()
# Per process, by `_key`: each topic's candidates and the pool's topics; by
# (pool pk, topic id): each topic's state (checked against the candidates).
_candidates: dict[tuple[int, object], dict[str, Candidates]] = {}
_topics: dict[tuple[int, object], list[str]] = {}
_live: dict[tuple[int, str], LiveTopic] = {}


def _key(pool: Pool) -> tuple[int, object]:
    """A pool's key in the caches: its pk and creation time, as SQLite may give a
    deleted pool's pk to the next one."""
    return pool.pk, pool.created_at


def forget_state() -> None:
    """Empty the caches (tests)."""
    with _lock:
        _candidates.clear(), _topics.clear(), _live.clear()


def pool_spec(pool: Pool) -> PoolSpec:
    return PoolSpec.from_dict(pool.spec)


def is_adaptive(pool: Pool) -> bool:
    return bool(pool.spec.get("strategy"))


def pool_candidates(pool: Pool) -> dict[str, Candidates]:
    """Each topic's candidates (the pool's runs ranked down to its depth), read once
    per process: an adaptive pool's runs, depth and seed never change (no late
    runs, no spec re-plan; a new budget changes only the caps)."""
    with _lock:
        cached = _candidates.get(_key(pool))
    if cached is not None:
        return cached
    from pooling.core.adaptive_base import Candidates
    from pooling.core.adaptive_live import live_candidates
    from pooling.selectors import ranked_runs

    spec = pool_spec(pool)
    depth = spec.depth or 0
    ranked = ranked_runs(pool.campaign, max_depth=depth, runs=list(pool.runs.all()))
    topics = live_candidates(Candidates.from_ranked(ranked, depth=depth))
    with _lock:
        _candidates[_key(pool)] = topics
    return topics


def topic_caps(pool: Pool) -> dict[str, int]:
    """How many documents each topic may draw: the budget shared over the pool's
    topics (`PoolSpec.topic_budgets`); empty for a pool that is not adaptive."""
    if not is_adaptive(pool):
        return {}
    return pool_spec(pool).topic_budgets(pool_topics(pool))


def pool_topics(pool: Pool) -> list[str]:
    """The topics of the pool's entries, in topic order; read once per process (an
    adaptive pool's entries never change: no late runs, no spec re-plan)."""
    with _lock:
        topics = _topics.get(_key(pool))
    if topics is None:
        rows = PoolEntry.objects.filter(pool=pool).values_list("topic__topic_id", flat=True)
        topics = sorted(set(rows.distinct().order_by()), key=topic_sort_key)
        with _lock:
            _topics[_key(pool)] = topics
    return topics


def adaptive_caps(pools: Iterable[int]) -> dict[int, dict[str, int]]:
    """`topic_caps` of those of `pools` (pks) that are adaptive: one query for all,
    one more per adaptive pool (lists of assignments stay cheap)."""
    adaptive = Pool.objects.filter(pk__in=set(pools), spec__has_key="strategy")
    return {pool.pk: topic_caps(pool) for pool in adaptive}


def drawn_judgments(pool: Pool, topic_pk: int) -> list[tuple[str, int, bool | None]]:
    """The topic's drawn documents in draw order: docno, order, and relevant or not
    by its first judgment (None: pending, neither judged nor set aside by anyone)."""
    from judging.models import DocumentNote, Judgment
    from pooling.core.adaptive_live import relevant_of

    first = Judgment.objects.filter(topic_id=topic_pk, docno=OuterRef("docno")).order_by("pk")
    set_aside = DocumentNote.objects.filter(topic_id=topic_pk, docno=OuterRef("docno")).exclude(
        cannot_judge=""
    )
    rows = (
        PoolEntry.objects.filter(pool=pool, topic_id=topic_pk, sampled=True)
        .order_by("order")
        .annotate(label=Subquery(first.values("relevance")[:1]))
        .annotate(aside=Subquery(set_aside.values("pk")[:1]))
        .values_list("docno", "order", "label", "aside")
    )
    return [
        (docno, order, relevant_of(label) if label is not None or aside is not None else None)
        for docno, order, label, aside in rows
    ]


def live_topic(pool: Pool, topic_id: str) -> LiveTopic:
    """The topic's state, made once per process (then advanced by `adaptive_draw`)."""
    from pooling.core.adaptive_live import LiveTopic

    key = (pool.pk, topic_id)
    with _lock:
        live = _live.get(key)
    if live is None or live.candidates is not pool_candidates(pool).get(topic_id):
        spec = pool_spec(pool)
        live = LiveTopic(pool_candidates(pool)[topic_id], spec.strategy, seed=spec.seed)
        with _lock:
            _live[key] = live
    return live


def topic_state(
    pool: Pool,
    topic_pk: int,
    topic_id: str,
    drawn: list[tuple[str, int, bool | None]] | None = None,
) -> LiveTopic:
    """The topic's state advanced by every judgment of its drawn documents so far
    (`drawn`, read here unless given)."""
    live = live_topic(pool, topic_id)
    drawn = drawn_judgments(pool, topic_pk) if drawn is None else drawn
    live.advance([(docno, relevant) for docno, _, relevant in drawn if relevant is not None])
    return live


def adaptive_draw(assignment: Assignment) -> PoolEntry | None:
    """Draw the next document of a primary assignment's topic and return its entry
    (annotated with its `position`); None when the topic's share of the budget is
    spent, the strategy has nothing left, or the proposed document waits unjudged."""
    from judging.models import Assignment

    if assignment.kind != Assignment.PRIMARY:
        return None
    with transaction.atomic():
        # Its budget now, and the lock that makes draws of the pool one at a time.
        pool = Pool.objects.select_for_update().get(pk=assignment.pool_id)
        topic_id = assignment.topic.topic_id
        if not is_adaptive(pool) or topic_id not in pool_topics(pool):
            return None
        drawn = drawn_judgments(pool, assignment.topic_id)
        if len(drawn) >= topic_caps(pool).get(topic_id, 0):
            return None
        docno = topic_state(pool, assignment.topic_id, topic_id, drawn).next_docno()
        if docno is None:
            return None
        position = max((order for _, order, _ in drawn), default=0) + 1
        claimed = PoolEntry.objects.filter(
            pool=pool, topic_id=assignment.topic_id, docno=docno, sampled=False
        ).update(sampled=True, order=position)
        if not claimed:
            return None  # drawn already, still waiting for a label
    return assignment.queue().filter(docno=docno).first()


def adaptive_inclusion(pool: Pool) -> dict[tuple[str, str], float]:
    """Each candidate's inclusion probability as the pool stands, by (topic id, docno):
    for `active`, pi(d) for the draws made (what sample_eval-style estimates divide
    by); for the deterministic strategies, 1 for a drawn document and 0 for the
    others (given the labels, the draws are certain: no unbiased estimate follows)."""
    spec = pool_spec(pool)
    entries = PoolEntry.objects.filter(pool=pool).values_list("topic__topic_id", "docno", "sampled")
    inclusion = {(topic, docno): float(sampled) for topic, docno, sampled in entries}
    if spec.strategy != "active":
        return inclusion
    topic_pk = dict(pool.campaign.topics.values_list("topic_id", "pk"))
    for topic_id in pool_candidates(pool):
        live = topic_state(pool, topic_pk[topic_id], topic_id)
        for docno, probability in live.inclusion().items():
            inclusion[topic_id, docno] = probability
    return inclusion
