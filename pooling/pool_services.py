"""Pools: build, add runs, revise (re-plan), set the budget, retire and reopen;
the budget check before a build."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from pooling.core.budget import pool_cost
from pooling.core.spec import PoolSpec, PoolSpecError, spec_label
from pooling.core.strategies import (
    add_runs_to_pool,
    pool_from_ranked,
    pool_of_judged,
)
from pooling.errors import OverBudget, PoolBuildError
from pooling.models import (
    BudgetOverrun,
    Campaign,
    Pool,
    PoolAddition,
    PoolEntry,
    PoolRevision,
    Run,
)
from pooling.selectors import (
    campaign_budget,
    judged_pairs,
    pool_entries_frame,
    pool_revision_preview,
    pool_runs,
    ranked_runs,
)
from workbench.core import run_files
from workbench.db import bulk_insert, update_by_pk


def budget_check(
    *, campaign: Campaign, cost: int, action: str, confirmed: bool, user: Any = None
) -> None:
    """Let work through that the budget covers; past it, only with `confirmed`, and
    then record who confirmed how much. Call it inside the write's transaction."""
    state = campaign_budget(campaign)
    if not state.over_by(cost):
        return
    if not confirmed:
        raise OverBudget(state, cost, action)
    BudgetOverrun.objects.create(
        campaign=campaign,
        action=action,
        cost=cost,
        remaining=state.remaining or 0,
        confirmed_by=user if getattr(user, "pk", None) else None,
    )


# Told how far a pool build is: progress(topics done, topics in the pool).
BuildProgress = Callable[[int, int], None]


def pool_build(
    *,
    campaign: Campaign,
    spec: PoolSpec,
    name: str = "",
    created_by: Any = None,
    progress: BuildProgress | None = None,
    confirm_over_budget: bool = False,
    runs_per_team: int | None = None,
    before_commit: Callable[[Pool], None] | None = None,
) -> Pool:
    """Build a pool from every run of the campaign (with `runs_per_team`, from each
    team's first N runs by precedence and the organiser's own: `selectors.pool_runs`)
    and store it in one transaction, `before_commit(pool)` last inside it (a job
    records itself done there).

    `progress(done, total)` counts the topics whose entries are ready to store,
    first with done 0 once the runs are ranked and pooled. Everything but the
    insert happens before the transaction, so that what progress says can be read
    while the build goes on (a progress written inside a transaction is seen only
    when it commits), and the transaction, which holds SQLite's write lock, is short.

    A pool asking for more new judgments than the budget has left raises
    OverBudget unless `confirm_over_budget`.
    """
    if runs_per_team is not None and runs_per_team < 1:
        raise PoolBuildError(f"runs per team must be 1 or more, not {runs_per_team}")
    runs = pool_runs(campaign, runs_per_team=runs_per_team)
    label = spec_label(spec) + (f", first {runs_per_team} run(s) per team" if runs_per_team else "")
    ranked = ranked_runs(campaign, max_depth=spec.max_depth, runs=runs)
    entries = pool_from_ranked(ranked, spec)
    cost = pool_cost(entries, judged_pairs(campaign))
    if spec.is_adaptive:
        # Candidates only: each is drawn when an assessor asks (judging.adaptive).
        entries = entries.assign(sampled=False, order=pd.NA)
        cost = min(cost, spec.budget or 0)
    topics = dict(campaign.topics.values_list("topic_id", "pk"))
    rows = _entry_rows(entries, topics, progress=progress)
    with transaction.atomic():
        budget_check(
            campaign=campaign,
            cost=cost,
            action=f"building pool {name or label}",
            confirmed=confirm_over_budget,
            user=created_by,
        )
        pool = Pool.objects.create(
            campaign=campaign,
            name=name or label,
            spec=spec.to_dict(),
            runs_per_team=runs_per_team,
            created_by=created_by,
        )
        pool.runs.set(runs)
        _insert_entries(pool, rows, addition=None)
        if before_commit:
            before_commit(pool)
    return pool


def pool_from_judged(
    *, campaign: Campaign, pairs: pd.DataFrame, name: str, source: str, created_by: Any = None
) -> Pool:
    """A pool of (query_id, doc_id) pairs judged elsewhere, as `strategies.pool_of_judged`
    makes it, with a spec that says where they came from (`source`).

    Called inside the transaction that stores those judgments, so that a
    rejected import leaves no pool behind.
    """
    name = name.strip()
    if not name:
        raise PoolBuildError("give the pool a name")
    if campaign.pools.filter(name=name).exists():
        raise PoolBuildError(f"campaign {campaign.slug} already has a pool named {name!r}")
    spec = PoolSpec(source=source, order="docno")
    topics = dict(campaign.topics.values_list("topic_id", "pk"))
    with transaction.atomic():
        pool = Pool.objects.create(
            campaign=campaign, name=name, spec=spec.to_dict(), created_by=created_by
        )
        _store_entries(pool, pool_of_judged(pairs), topics, addition=None)
    return pool


def pool_add_runs(
    *, pool: Pool, runs: Sequence[Run], created_by: Any = None, confirm_over_budget: bool = False
) -> PoolAddition:
    """Add late runs to a depth-k pool: only their new documents, nothing else changes.

    New documents beyond what the budget has left raise OverBudget unless
    `confirm_over_budget`.
    """
    runs = [run for run in runs if run.campaign_id == pool.campaign_id]
    if not runs:
        raise PoolBuildError("choose at least one run of this pool's campaign to add")
    already = set(pool.runs.values_list("pk", flat=True))
    repeated = [run.tag for run in runs if run.pk in already]
    if repeated:
        raise PoolBuildError(f"already in the pool: {', '.join(repeated)}")
    spec = PoolSpec.from_dict(pool.spec)
    existing = pool_entries_frame(pool)
    late = pa.concat_tables(run_files.read_run_cache(run.cache_file.path) for run in runs)
    try:
        new = add_runs_to_pool(existing, late, spec)
    except PoolSpecError as error:
        raise PoolBuildError(str(error)) from None
    topics = dict(pool.campaign.topics.values_list("topic_id", "pk"))
    cost = pool_cost(new, judged_pairs(pool.campaign))
    with transaction.atomic():
        budget_check(
            campaign=pool.campaign,
            cost=cost,
            action=f"adding {', '.join(run.tag for run in runs)} to pool {pool.pk}",
            confirmed=confirm_over_budget,
            user=created_by,
        )
        addition = PoolAddition.objects.create(pool=pool, created_by=created_by)
        addition.runs.set(runs)
        pool.runs.add(*runs)
        _store_entries(pool, new, topics, addition=addition)
    return addition


def pool_revise(
    *,
    pool: Pool,
    spec: PoolSpec,
    topics: Sequence[str],
    reason: str = "",
    created_by: Any = None,
    confirm_over_budget: bool = False,
    before_commit: Callable[[PoolRevision], None] | None = None,
) -> PoolRevision:
    """Re-plan `topics` of a pool being judged with `spec`: a new revision of the same
    pool (`pooling.core.revisions`). Queues change in place, assignments carry over, and
    nothing judged is lost. New judgments beyond what the budget has left raise
    OverBudget unless `confirm_over_budget`. `before_commit(revision)` runs
    inside the transaction, last (a job records itself done there).
    """
    if spec.source or PoolSpec.from_dict(pool.spec).source:
        raise PoolBuildError("a pool of imported judgments is not built from runs: no re-plan")
    if spec.is_adaptive or PoolSpec.from_dict(pool.spec).is_adaptive:
        raise PoolBuildError(
            "an adaptive pool is re-planned by its budget alone (pool_replan --budget N)"
        )
    revision = pool_revision_preview(pool, spec=spec, topics=topics)
    topic_pk = dict(pool.campaign.topics.values_list("topic_id", "pk"))
    with transaction.atomic():
        number = (pool.revisions.select_for_update().aggregate(n=Max("number"))["n"] or 1) + 1
        budget_check(
            campaign=pool.campaign,
            cost=revision.cost,
            action=f"re-planning {len(topics)} topic(s) of pool {pool.pk}",
            confirmed=confirm_over_budget,
            user=created_by,
        )
        _apply_revision(pool, revision.entries, topic_pk, number)
        stored = PoolRevision.objects.create(
            pool=pool,
            number=number,
            spec=spec.to_dict(),
            topics=list(topics),
            reason=reason.strip(),
            summary=revision.summary.to_dict(orient="records"),
            created_by=created_by if getattr(created_by, "pk", None) else None,
        )
        if before_commit:
            before_commit(stored)
    return stored


def pool_budget_set(
    *, pool: Pool, budget: int, created_by: Any = None, confirm_over_budget: bool = False
) -> Pool:
    """Raise or lower an adaptive pool's budget (its re-plan): topics draw up to their
    new share (`PoolSpec.topic_budgets`); what is drawn or judged stays. A raise
    beyond what the campaign's budget has left raises OverBudget unless confirmed."""
    spec = PoolSpec.from_dict(pool.spec)
    if not spec.is_adaptive:
        raise PoolBuildError(f"pool {pool.pk} is not adaptive: re-plan it with a spec")
    try:
        new = replace(spec, budget=budget)
    except PoolSpecError as error:
        raise PoolBuildError(str(error)) from None
    with transaction.atomic():
        locked = Pool.objects.select_for_update().get(pk=pool.pk)
        budget_check(
            campaign=pool.campaign,
            cost=max(budget - (spec.budget or 0), 0),
            action=f"raising the budget of pool {pool.pk} to {budget}",
            confirmed=confirm_over_budget,
            user=created_by,
        )
        locked.spec = new.to_dict()
        locked.save(update_fields=["spec"])
    pool.spec = locked.spec
    return pool


_REVISED_FIELDS = (
    "best_rank",
    "n_runs",
    "stratum",
    "inclusion_probability",
    "sampled",
    "order",
    "retired",
    "revision",
)


def _apply_revision(
    pool: Pool, entries: pd.DataFrame, topic_pk: dict[str, int], number: int
) -> None:
    """Store the revised topics' entries: update those that exist and changed (one
    statement per batch, `update_by_pk`), create the others; compared as frames."""
    fields = list(_REVISED_FIELDS)
    plan = entries.assign(topic=entries["query_id"].map(topic_pk))[["topic", "doc_id", *fields]]
    stored = pd.DataFrame(
        list(
            PoolEntry.objects.select_for_update()
            .filter(pool=pool, topic_id__in=plan["topic"].unique().tolist())
            .values_list("pk", "topic_id", "docno", *fields)
        ),
        columns=["pk", "topic", "doc_id", *(f"{field}_stored" for field in fields)],
    ).astype({"pk": "int64", "topic": "int64", "doc_id": object})
    both = plan.merge(stored, on=["topic", "doc_id"], how="left")
    exists = both["pk"].notna()
    differs = pd.Series(False, index=both.index)
    for field in fields:
        new, old = both[field], both[f"{field}_stored"]
        differs |= ~((new == old).fillna(False).astype(bool) | (new.isna() & old.isna()))
    changed = both[exists & differs]
    update_by_pk(
        PoolEntry,
        zip(
            changed["pk"].astype("int64").tolist(),
            *(_python_values(changed[field]) for field in fields),
            strict=True,
        ),
        fields,
    )
    added = both[~exists]
    PoolEntry.objects.bulk_create(
        (
            PoolEntry(
                pool=pool, topic_id=topic, docno=docno, **dict(zip(fields, values, strict=True))
            )
            for topic, docno, *values in zip(
                added["topic"].tolist(),
                added["doc_id"].tolist(),
                *(_python_values(added[field]) for field in fields),
                strict=True,
            )
        ),
        batch_size=2000,
    )


def _python_values(column: pd.Series) -> list[Any]:
    """A column's values as Python ints, floats and bools, None where missing."""
    return [None if pd.isna(value) else value for value in column.astype(object).tolist()]


def pool_retire(*, pool: Pool, retired_by: Any = None) -> Pool:
    """Close the pool: its assignments leave the assessors' lists; its judgments stay
    (they belong to assessor, topic and docno, and count for any other pool)."""
    if not pool.is_retired:
        pool.retired_at, pool.retired_by = timezone.now(), retired_by
        pool.save(update_fields=["retired_at", "retired_by"])
    return pool


def pool_reopen(*, pool: Pool) -> Pool:
    """Undo a retirement: the assignments come back as they were."""
    pool.retired_at, pool.retired_by = None, None
    pool.save(update_fields=["retired_at", "retired_by"])
    return pool


def _store_entries(
    pool: Pool, entries: pd.DataFrame, topics: dict[str, int], *, addition: PoolAddition | None
) -> None:
    _insert_entries(pool, _entry_rows(entries, topics), addition=addition)


# The columns of `_entry_rows`, then the pool and the addition `_insert_entries` adds.
_ENTRY_FIELDS = (
    "topic_id",
    "docno",
    "best_rank",
    "n_runs",
    "stratum",
    "inclusion_probability",
    "sampled",
    "order",
)


def _entry_rows(
    entries: pd.DataFrame, topics: dict[str, int], *, progress: BuildProgress | None = None
) -> list[list[tuple[Any, ...]]]:
    """A pool frame's entries as rows to insert (`_ENTRY_FIELDS`, Python values), made
    a topic at a time in the frame's order (rows of a topic together, as the pool
    frame keeps them); `progress(done, total)` counts the topics made."""
    if not len(entries):
        return []
    query_ids = entries["query_id"].to_numpy()
    columns = [
        entries["query_id"].map(topics).to_numpy(),
        entries["doc_id"].to_numpy(),
        *(entries[c].to_numpy(dtype=np.int64) for c in ("best_rank", "n_runs", "stratum")),
        entries["inclusion_probability"].to_numpy(dtype=np.float64),
        entries["sampled"].to_numpy(dtype=bool),
        entries["order"].astype("Int64").to_numpy(dtype=object, na_value=None),
    ]
    starts = np.flatnonzero(np.r_[True, query_ids[1:] != query_ids[:-1]])
    ends = np.r_[starts[1:], len(entries)]
    total = len(starts)
    if progress is not None:
        progress(0, total)
    rows = []
    for done, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True), 1):
        values = [column[start:end].tolist() for column in columns]
        rows.append(list(zip(*values, strict=True)))
        if progress is not None:
            progress(done, total)
    return rows


def _insert_entries(
    pool: Pool, rows: Iterable[Sequence[tuple[Any, ...]]], *, addition: PoolAddition | None
) -> None:
    """Insert the rows of `_entry_rows` as the pool's entries (`workbench.db.bulk_insert`:
    bulk_create's per-row work made storing a large pool take most of its build)."""
    extra = (pool.pk, addition.pk if addition is not None else None)
    bulk_insert(
        PoolEntry,
        (*_ENTRY_FIELDS, "pool_id", "addition_id"),
        (row + extra for topic_rows in rows for row in topic_rows),
    )
