"""Re-planning a pool while it is being judged: a revision of the same pool. Pure core.

When the budget runs short (the TREC 2019 Decision track cut its unfinished
topics from depth 75 to 60) or money is left, the organiser gives the
unfinished topics a new spec. The rule, for each revised topic (written out,
with the reasons, in docs/pool_revisions.md):

- the topic's plan becomes exactly the pool the new spec builds from the same
  runs with the same seed (`strategies.pool_from_ranked`): which documents
  are pooled, their strata, which are drawn, and each drawn document's
  inclusion probability, that of this revision (`revision`);
- draws are nested (same seed, same strata bounds): a lower rate keeps a
  subset of the documents a higher rate draws, so shrinking only removes
  documents and extending only adds them;
- nothing judged is lost: a judged document the new plan no longer draws
  keeps its judgments in the qrels, but it is outside the sample, so
  estimates (infAP, sample_eval) use the new plan's sample only; a document
  the plan no longer pools stays an entry, `retired`, outside every export
  but the plain qrels (when judged);
- documents that stay drawn keep their place in the assessors' queue; those
  the new plan draws and the old one did not join at its end, in a seeded
  shuffled order, at places never used before (an open page cannot judge
  another document than it shows); unjudged documents the plan no longer
  draws leave the queue.

A sampled stratum is drawn from its bounds: the same bounds at a lower rate
keep a subset of the draw, but other bounds (11-40 where the plan sampled
11-100) draw it again, so a "cut" adds documents and puts judged ones out of
the sample. `redraws` finds such strata, and `sample_keeping_spec` the plan
that keeps the bounds and lowers the rate instead, for the organiser to
compare.

Frames: the pool frame of `strategies` plus `retired` (bool) and `revision`
(int, the revision whose spec drew the entry; 1 is the build).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from pooling.core.budget import judged_mask
from pooling.core.spec import PoolSpec, Stratum
from pooling.core.strategies import POOL_COLUMNS, sort_pool

REVISION_COLUMNS = (*POOL_COLUMNS, "retired", "revision")
SUMMARY_COLUMNS = (
    "query_id",
    "to_judge_before",
    "to_judge_after",
    "leaving",
    "joining",
    "judged_kept",
    "judged_out_of_sample",
    "new_judgments",
)


@dataclass(frozen=True)
class Revision:
    """What a revision does to the revised topics.

    entries: every entry of those topics after it (REVISION_COLUMNS, in pool order);
        entries the plan no longer pools are `retired`, judged or not, with their
        place in the queue, which is never given to another document;
    summary: per topic, SUMMARY_COLUMNS: what the assessors had to judge before and
        after, the unjudged entries leaving the queue, the entries joining it, the
        judged entries kept, those of them outside the new sample, and the new
        judgments the revision asks for.
    """

    entries: pd.DataFrame
    summary: pd.DataFrame

    @property
    def cost(self) -> int:
        return int(self.summary["new_judgments"].sum())

    @property
    def joining(self) -> int:
        """Entries joining the queues (drawn now, not before)."""
        return int(self.summary["joining"].sum())

    @property
    def judged_out_of_sample(self) -> int:
        """Judged entries the new plan does not draw (their labels stay in the qrels)."""
        return int(self.summary["judged_out_of_sample"].sum())

    @property
    def work_change(self) -> int:
        """How the judgments the plan still needs change: those joining minus the
        unjudged ones leaving (negative for a cut)."""
        return self.cost - int(self.summary["leaving"].sum())


def revise(
    current: pd.DataFrame, planned: pd.DataFrame, *, judged: pd.DataFrame | None, revision: int
) -> Revision:
    """The revision that turns `current` (the revised topics' entries, REVISION_COLUMNS)
    into the plan `planned` (the pool frame the new spec builds for those topics).

    `judged`: `query_id, doc_id` judged by anyone (repeats are harmless).
    """
    current, planned = _keyed(current), _keyed(planned)
    was_to_judge = current["sampled"] & ~current["retired"]

    # Entries of the new plan: its values; a place in the queue kept where it had one.
    new = planned.copy()
    new["retired"] = False
    new["revision"] = revision
    kept_order = current["order"].where(was_to_judge).reindex(new.index)
    staying = new["sampled"].to_numpy() & kept_order.notna().to_numpy()
    new["order"] = pd.array(np.where(staying, kept_order.fillna(0), 0), dtype="Int64")
    new.loc[~new["sampled"], "order"] = pd.NA
    new["batch"] = current["batch"].reindex(new.index).fillna(0).astype("int64")
    joining = new["sampled"].to_numpy() & ~staying
    new = _append_to_queues(new, joining, planned["order"], current)

    # Entries the plan no longer pools stay, retired: their judgments stay in the
    # qrels, and their places in the queue are never given to another document.
    retired = current[~current.index.isin(new.index)].copy()
    retired["sampled"], retired["retired"] = False, True

    entries = pd.concat([new, retired])[list(REVISION_COLUMNS)].reset_index(drop=True)
    entries["order"] = entries["order"].astype("Int64")
    summary = _summary(current.reset_index(drop=True), entries, judged)
    return Revision(sort_pool(entries), summary)


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame indexed by (topic, document), its columns kept."""
    keys = [frame["query_id"].to_numpy(), frame["doc_id"].to_numpy()]
    return frame.set_axis(pd.MultiIndex.from_arrays(keys, names=["topic", "document"]))


def _append_to_queues(
    new: pd.DataFrame, joining: np.ndarray, planned_order: pd.Series, current: pd.DataFrame
) -> pd.DataFrame:
    """Give the joining entries places after each topic's last (never reusing a place),
    in the relative order of the new plan's own seeded presentation order."""
    last_orders = current.groupby("query_id")["order"].max()
    last = {topic: int(order) for topic, order in last_orders.items() if pd.notna(order)}
    rows = new.loc[joining, ["query_id"]].assign(plan_order=planned_order[joining].to_numpy())
    rows = rows.sort_values(["query_id", "plan_order"], kind="stable")
    place = rows.groupby("query_id").cumcount().to_numpy() + 1
    start = np.array([last.get(topic, 0) for topic in rows["query_id"]], dtype=np.int64)
    new.loc[rows.index, "order"] = start + place
    return new


def _summary(
    current: pd.DataFrame, entries: pd.DataFrame, judged: pd.DataFrame | None
) -> pd.DataFrame:
    """Per topic, counted over every document before or after: see `Revision.summary`."""
    before = current.assign(was=current["sampled"] & ~current["retired"])[
        ["query_id", "doc_id", "was"]
    ]
    after = entries.assign(present=True, will=entries["sampled"])[
        ["query_id", "doc_id", "present", "will"]
    ]
    both = before.merge(after, on=["query_id", "doc_id"], how="outer")
    both[["was", "present", "will"]] = both[["was", "present", "will"]].fillna(False).astype(bool)
    done = judged_mask(both, judged)
    flags = pd.DataFrame(
        {
            "query_id": both["query_id"],
            "to_judge_before": both["was"],
            "to_judge_after": both["will"],
            "leaving": both["was"] & ~both["will"] & ~done,
            "joining": both["will"] & ~both["was"],
            "judged_kept": both["present"] & done,
            "judged_out_of_sample": both["present"] & done & ~both["will"],
            "new_judgments": both["will"] & ~both["was"] & ~done,
        }
    )
    summary = flags.groupby("query_id", sort=False).sum().astype("int64").reset_index()
    order = sort_pool(summary.assign(doc_id="", order=pd.NA))["query_id"]
    return summary.set_index("query_id").loc[order].reset_index()[list(SUMMARY_COLUMNS)]


@dataclass(frozen=True)
class Redraw:
    """A sampled stratum of the new plan drawn again rather than cut from the current
    draw: its bounds are not those of the current plan's sampled strata it overlaps
    (`was`), so its draw is a new one."""

    stratum: Stratum
    was: tuple[Stratum, ...]


def redraws(current: PoolSpec, new: PoolSpec) -> list[Redraw]:
    """The strata of `new` sampled below rate 1 whose bounds differ from those of
    every stratum of `current`, while they overlap strata `current` samples below
    rate 1. (Ranks `current` pooled in full lose nothing judged to a new draw: every
    document there was drawn.)"""
    bounds = {(stratum.lo, stratum.hi) for stratum in current.strata_for("")}
    sampled = [stratum for stratum in current.strata if stratum.rate < 1]
    found = []
    for stratum in new.strata:
        if stratum.rate >= 1 or (stratum.lo, stratum.hi) in bounds:
            continue
        was = tuple(s for s in sampled if s.lo <= stratum.hi and stratum.lo <= s.hi)
        if was:
            found.append(Redraw(stratum, was))
    return found


def sample_keeping_spec(
    current: PoolSpec, new: PoolSpec, new_plan: pd.DataFrame, current_entries: pd.DataFrame
) -> PoolSpec | None:
    """The current plan with the same bounds and lower rates, drawing about as many
    documents as the new plan where it draws again (`redraws`): each current stratum
    a redraw overlaps gets the rate (rounded down to hundredths) that draws, over the
    revised topics, as many of its documents as the new plan draws at those ranks.
    None when there is no redraw, or no such rate is lower than the current one.

    `new_plan`: the entries of the revision to `new` (`best_rank`, `sampled`, `retired`);
    `current_entries`: the current plan's (`best_rank`, `retired`), both over the
    revised topics.
    """
    found = redraws(current, new)
    if not found:
        return None
    pooled = current_entries.loc[~current_entries["retired"], "best_rank"]
    drawn = new_plan.loc[new_plan["sampled"] & ~new_plan["retired"], "best_rank"]
    rates = {}
    for stratum in {was for redraw in found for was in redraw.was}:
        size = int(pooled.between(stratum.lo, stratum.hi).sum())
        if not size:
            continue
        wanted = int(drawn.between(stratum.lo, stratum.hi).sum())
        rate = math.floor(100 * wanted / size) / 100
        if rate < stratum.rate:
            rates[stratum] = rate
    if not rates:
        return None
    strata = tuple(replace(s, rate=rates[s]) if s in rates else s for s in current.strata)
    return replace(current, strata=strata)
