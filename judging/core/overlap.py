"""Overlap planner: which pool entries get judged by K assessors, and by whom. Pure core.

Every entry of a topic is judged by the topic's primary assessor. An
organiser picks overlap items: a fraction of each topic's entries, or whole
topics (fraction 1 over a set of topics), or both (a fraction of some
topics). Each overlap item gets K - 1 extra assessors, distinct and other
than the primary, so that exactly K distinct assessors judge it.

Which items: per topic, round-half-up(fraction x size) items, at least one
when the topic has entries. They are a seeded random sample stratified over
the pool's presentation order: the topic's queue is cut into that many
contiguous strata of nearly equal size and one item is drawn in each, so
overlap items are spread evenly through the queue (every item is equally
likely to be drawn, up to the stratum sizes differing by one).

Who: the extra judgments are spread so that the extra load of the given
assessors differs by at most one whenever some assignment achieves that
(it may not: if every topic's primary is the same assessor, that assessor
gets no extra work). A seeded greedy pass gives each item to the least
loaded eligible assessors; then assignments are moved along improving
chains (x gives an item to y, y gives another to z, ...) until no chain
lowers the spread, which minimises the sum of squared loads.

Interleaving, or why assessors cannot tell overlap items apart. An assessor
judges one topic at a time, so a queue is per (assessor, topic):

- the primary's queue is the topic's pool order, unchanged; the overlap
  items are spread through it by the stratified draw, so neither their
  place nor their number gives them away;
- an extra assessor's queue for a topic they are not primary on holds only
  overlap items: there is nothing to interleave them with, and nothing to
  hide: that queue looks like any small topic assignment, because assessors
  never see assignment kinds, pool sizes or other assessors' labels. What
  could still leak is the order (ranks, runs, docnos), so the queue follows
  the pool's shuffled presentation order. As the items are spread over the
  primary's queue, the extra judgments of a topic also accrue evenly while
  the primary works through it.

Everything is determined by the inputs and the seed, whatever the row order
of the entries frame.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

ENTRY_COLUMNS = ("query_id", "doc_id", "order")
ITEM_COLUMNS = ("query_id", "doc_id", "order", "primary_position")
ASSIGNMENT_COLUMNS = ("assessor", "query_id", "doc_id", "order", "position")
SIZE_COLUMNS = ("query_id", "n_entries", "n_overlap", "extra_judgments")

AssessorId = Any  # whatever identifies an assessor: a user id, a username


class OverlapPlanError(ValueError):
    """An overlap request that cannot be planned; the message says why."""


@dataclass(frozen=True)
class OverlapSpec:
    """What the organiser asks for.

    k: assessors per overlap item, the primary included (K >= 2).
    fraction: share of each chosen topic's entries, in (0, 1].
    topics: the chosen topics; None means every topic of the pool. Whole
        topics are `topics={...}` with fraction 1.
    seed: seeds both the item draw and the assignment.
    """

    k: int
    fraction: float = 1.0
    topics: frozenset[str] | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 2:
            raise OverlapPlanError(f"K must be an integer of at least 2, got {self.k!r}")
        if not 0.0 < self.fraction <= 1.0:
            raise OverlapPlanError(f"fraction must be in (0, 1], got {self.fraction!r}")
        if self.topics is not None:
            if isinstance(self.topics, str):
                raise OverlapPlanError("topics must be a collection of topic ids, not one string")
            object.__setattr__(self, "topics", frozenset(str(t) for t in self.topics))

    def to_dict(self) -> dict[str, Any]:
        topics = None if self.topics is None else sorted(self.topics)
        return {"k": self.k, "fraction": self.fraction, "topics": topics, "seed": self.seed}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OverlapSpec:
        topics = data.get("topics")
        return cls(
            k=data["k"],
            fraction=data.get("fraction", 1.0),
            topics=None if topics is None else frozenset(topics),
            seed=data.get("seed", 0),
        )


@dataclass(frozen=True)
class OverlapCost:
    """Extra judgments a plan costs: in total, per assessor, per topic."""

    total: int
    per_assessor: dict[AssessorId, int]
    per_topic: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "per_assessor": {str(a): n for a, n in self.per_assessor.items()},
            "per_topic": dict(self.per_topic),
        }


@dataclass(frozen=True, eq=False)
class OverlapPlan:
    """A planned overlap.

    items: the overlap items, columns ITEM_COLUMNS (primary_position is the
        item's 0-based place in the primary's queue, the topic's pool order).
    assignments: the extra judgments, columns ASSIGNMENT_COLUMNS, K - 1 rows
        per overlap item (position is the 0-based place in the assessor's
        queue for that topic, which follows the pool order).
    """

    spec: OverlapSpec
    items: pd.DataFrame
    assignments: pd.DataFrame
    cost: OverlapCost


# --------------------------------------------------------------------------
# Public functions


def overlap_sizes(entries: pd.DataFrame, spec: OverlapSpec) -> pd.DataFrame:
    """How many overlap items each topic gets, without drawing or assigning them.

    entries: the pool entries, columns `query_id, doc_id, order`.

    Returns one row per topic of the pool, sorted, columns SIZE_COLUMNS:
    n_overlap is 0 for a topic not chosen; extra_judgments = n_overlap x (K-1).
    """
    entries = _checked_entries(entries)
    _check_topics_known(entries, spec)
    sizes = entries.groupby("query_id").size()
    chosen = sizes.index.isin(list(spec.topics)) if spec.topics is not None else True
    n_overlap = np.where(chosen, _overlap_count(sizes.to_numpy(), spec.fraction), 0)
    return pd.DataFrame(
        {
            "query_id": sizes.index.to_numpy(),
            "n_entries": sizes.to_numpy(),
            "n_overlap": n_overlap,
            "extra_judgments": n_overlap * (spec.k - 1),
        }
    )


def plan_overlap(
    entries: pd.DataFrame,
    *,
    primaries: Mapping[str, AssessorId],
    assessors: Sequence[AssessorId],
    spec: OverlapSpec,
) -> OverlapPlan:
    """Choose the overlap items and their extra assessors.

    entries: the pool entries, columns `query_id, doc_id, order`.
    primaries: topic id -> its primary assessor (needed for every topic
        that gets overlap items).
    assessors: who may take extra judgments; a topic's primary never gets
        extra judgments on that topic. Loads are balanced over this list.

    Raises OverlapPlanError for an invalid request (unknown topics, a topic
    without a primary, K larger than the assessors available to a topic).
    The plan is cheap to compute, so a preview can show `plan.cost` and
    saving can recompute the same plan from the same spec.
    """
    entries = _checked_entries(entries)
    roster = _checked_assessors(assessors)
    rng = np.random.default_rng(spec.seed)
    items = _draw_items(entries, spec, rng)
    primary_index = _primary_index(items, primaries, roster, spec.k)
    chosen = _assign(primary_index, len(roster), spec.k - 1, rng)
    _rebalance(chosen, primary_index, len(roster))
    assignments = _assignment_frame(items, chosen, roster)
    return OverlapPlan(spec, items, assignments, _cost(assignments, roster))


# --------------------------------------------------------------------------
# Validation


def _checked_entries(entries: pd.DataFrame) -> pd.DataFrame:
    """Entries in canonical order (query_id, order, doc_id) with string ids."""
    missing = [c for c in ENTRY_COLUMNS if c not in entries.columns]
    if missing:
        raise OverlapPlanError(f"pool entries lack columns {missing}")
    entries = entries[list(ENTRY_COLUMNS)].astype({"query_id": "str", "doc_id": "str"})
    duplicated = entries.duplicated(["query_id", "doc_id"])
    if duplicated.any():
        first = entries.loc[duplicated, ["query_id", "doc_id"]].iloc[0].to_dict()
        raise OverlapPlanError(f"pool entry listed twice: {first}")
    return entries.sort_values(["query_id", "order", "doc_id"]).reset_index(drop=True)


def _check_topics_known(entries: pd.DataFrame, spec: OverlapSpec) -> None:
    if spec.topics is None:
        return
    unknown = spec.topics - set(entries.query_id)
    if unknown:
        raise OverlapPlanError(f"topics not in the pool: {sorted(unknown)}")


def _checked_assessors(assessors: Sequence[AssessorId]) -> list[AssessorId]:
    roster = list(assessors)
    if len(set(roster)) != len(roster):
        raise OverlapPlanError("an assessor is listed twice")
    return roster


def _primary_index(
    items: pd.DataFrame, primaries: Mapping[str, AssessorId], roster: list[AssessorId], k: int
) -> np.ndarray:
    """Each item's primary as a position in `roster` (-1 if not in it), checking K fits."""
    topics = items.query_id.unique()
    without = [t for t in topics if t not in primaries]
    if without:
        raise OverlapPlanError(f"topics without a primary assessor: {sorted(without)}")
    position = {assessor: i for i, assessor in enumerate(roster)}
    for topic in topics:
        available = len(roster) - (primaries[topic] in position)
        if available < k - 1:
            raise OverlapPlanError(
                f"K={k} needs {k - 1} assessors besides the primary of topic {topic!r}, "
                f"{available} available"
            )
    index = {topic: position.get(primaries[topic], -1) for topic in topics}
    return items.query_id.map(index).to_numpy(np.int64)


# --------------------------------------------------------------------------
# Drawing the items


def _overlap_count(sizes: np.ndarray, fraction: float) -> np.ndarray:
    """round-half-up(fraction x size), at least 1 for a non-empty topic, in exact arithmetic.

    Exact, because in floats 0.285 x 200 is 56.99999999999999; Python ints,
    because the fraction's denominator can be 10**16.
    """
    exact = Fraction(str(fraction))
    p, q = exact.numerator, exact.denominator
    rounded = np.array([(2 * p * int(n) + q) // (2 * q) for n in sizes], dtype=np.int64)
    return np.where(sizes > 0, np.maximum(rounded, 1), 0)


def _draw_items(entries: pd.DataFrame, spec: OverlapSpec, rng: np.random.Generator) -> pd.DataFrame:
    """One random item per stratum of each chosen topic's pool order.

    entries must be in canonical order; keys are drawn for every entry, chosen
    topic or not, so a topic's draw does not depend on the others' selection.
    """
    sizes = overlap_sizes(entries, spec).set_index("query_id")
    keys = rng.random(len(entries))
    n_entries = entries.query_id.map(sizes.n_entries).to_numpy()
    n_overlap = entries.query_id.map(sizes.n_overlap).to_numpy()
    position = entries.groupby("query_id").cumcount().to_numpy()
    candidates = entries.assign(
        primary_position=position,
        # Strata of sizes floor or ceil of N/n: positions p with p*n // N == s.
        stratum=position * n_overlap // np.maximum(n_entries, 1),
        key=keys,
    )[n_overlap > 0]
    drawn = candidates.loc[candidates.groupby(["query_id", "stratum"]).key.idxmin()]
    return drawn[list(ITEM_COLUMNS)].reset_index(drop=True)


# --------------------------------------------------------------------------
# Assigning the extra assessors


def _assign(
    primary: np.ndarray, n_assessors: int, extra: int, rng: np.random.Generator
) -> np.ndarray:
    """Greedy: items in random order, each to the `extra` least loaded eligible assessors.

    Returns an (items x extra) array of positions in the roster.
    """
    chosen = np.empty((len(primary), extra), dtype=np.int64)
    loads = np.zeros(n_assessors)
    for item in rng.permutation(len(primary)):
        # Load first, a random tie-break second (it is below 1).
        key = loads + rng.random(n_assessors)
        if primary[item] >= 0:
            key[primary[item]] = np.inf
        picked = np.argpartition(key, extra - 1)[:extra]
        chosen[item] = picked
        loads[picked] += 1
    return chosen


def _rebalance(chosen: np.ndarray, primary: np.ndarray, n_assessors: int) -> None:
    """Move assignments along improving chains until none lowers the sum of squared loads.

    A chain x -> ... -> y, from an assessor x to one with at least two fewer
    extra judgments, moves one item from each assessor to the next (an item
    may move to an assessor who is neither its primary nor already on it):
    x loses one, y gains one, the others keep their load. With no such chain
    the loads are optimal, so they differ by at most one wherever that is
    possible. Changes `chosen` in place.
    """
    while (chain := _improving_chain(chosen, primary, n_assessors)) is not None:
        for item, giver, taker in chain:
            chosen[item][chosen[item] == giver] = taker


def _improving_chain(
    chosen: np.ndarray, primary: np.ndarray, n_assessors: int
) -> list[tuple[int, int, int]] | None:
    """A chain of moves (item, from, to) lowering the sum of squared loads, or None."""
    loads = np.bincount(chosen.ravel(), minlength=n_assessors)
    holds = np.zeros((len(chosen), n_assessors), dtype=bool)
    np.put_along_axis(holds, chosen, True, axis=1)
    can_take = ~holds
    has_primary = primary >= 0
    can_take[np.flatnonzero(has_primary), primary[has_primary]] = False
    for source in np.argsort(-loads, kind="stable"):
        if loads[source] - loads.min() < 2:
            return None
        chain = _chain_from(int(source), loads, holds, can_take)
        if chain is not None:
            return chain
    return None


def _chain_from(
    source: int, loads: np.ndarray, holds: np.ndarray, can_take: np.ndarray
) -> list[tuple[int, int, int]] | None:
    """Breadth-first search from `source` for an assessor with at least two fewer items."""
    reached_by: dict[int, tuple[int, int]] = {}  # assessor -> (item, previous assessor)
    queue = deque([source])
    while queue:
        giver = queue.popleft()
        items = np.flatnonzero(holds[:, giver])
        takers = np.flatnonzero(can_take[items].any(axis=0))
        for taker in takers.tolist():
            if taker == source or taker in reached_by:
                continue
            item = int(items[np.argmax(can_take[items, taker])])
            reached_by[taker] = (item, giver)
            if loads[taker] <= loads[source] - 2:
                return _unwind(reached_by, taker, source)
            queue.append(taker)
    return None


def _unwind(
    reached_by: dict[int, tuple[int, int]], end: int, source: int
) -> list[tuple[int, int, int]]:
    chain = []
    taker = end
    while taker != source:
        item, giver = reached_by[taker]
        chain.append((item, giver, taker))
        taker = giver
    return chain[::-1]


def _assignment_frame(
    items: pd.DataFrame, chosen: np.ndarray, roster: list[AssessorId]
) -> pd.DataFrame:
    """One row per extra judgment; each (assessor, topic) queue follows the pool order."""
    rows = items.loc[items.index.repeat(chosen.shape[1]), ["query_id", "doc_id", "order"]]
    frame = rows.assign(roster_index=chosen.ravel())
    frame = frame.sort_values(["roster_index", "query_id", "order"]).reset_index(drop=True)
    frame["position"] = frame.groupby(["roster_index", "query_id"]).cumcount()
    frame["assessor"] = pd.Series(roster).take(frame.roster_index).to_numpy()
    return frame[list(ASSIGNMENT_COLUMNS)]


def _cost(assignments: pd.DataFrame, roster: list[AssessorId]) -> OverlapCost:
    """What the plan assigns, counted (`overlap_sizes` predicts the per-topic part)."""
    per_assessor = assignments.assessor.value_counts()
    per_topic = assignments.query_id.value_counts().sort_index()
    return OverlapCost(
        total=len(assignments),
        per_assessor={a: int(per_assessor.get(a, 0)) for a in roster},
        per_topic={str(t): int(n) for t, n in per_topic.items()},
    )
