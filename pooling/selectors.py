"""Reads of the pooling app that views, services and other apps share.

The writes are in `services`; what is read here never changes anything.
Judgments are counted through the topics' reverse relations, so that
pooling does not import the judging app, which depends on it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.cache import cache
from django.db.models import Count, Exists, F, Max, OuterRef, Q, QuerySet
from django.shortcuts import get_object_or_404

from pooling.core.ledger import BudgetState
from pooling.core.spec import PoolSpec
from pooling.errors import PoolBuildError
from pooling.models import Campaign, Document, Pool, PoolEntry, Run, Topic
from workbench.core.topic_ids import topic_sort_key

if TYPE_CHECKING:
    import pandas as pd

    from pooling.core.budget import DepthFit, ScaleFit
    from pooling.core.ranking import RankedRuns
    from pooling.core.revisions import Redraw, Revision

# The reads that build frames import pandas and the pooling cores where they
# need them: the light reads (the budget, unfinished topics) are what the
# dashboard and `campaign_status` load, and pandas alone costs them 0.5 s.

# --------------------------------------------------------------------------
# Campaigns and their budget


def campaign_schema_lock(campaign: Campaign) -> str:
    """Why the campaign's label schema can no longer change; empty while it can.

    Judgments are counted through the topics' reverse `judgments` relation so
    that pooling does not import the judging app, which depends on it.
    """
    n = campaign.topics.aggregate(n=Count("judgments"))["n"]
    if not n:
        return ""
    return (
        f"{campaign.name} already has {n:,} judgment{'' if n == 1 else 's'}: its label schema "
        "can no longer change, since the values already stored might not fit a new one."
    )


def campaign_task_kind_lock(campaign: Campaign) -> str:
    """Why the campaign's task kind can no longer change; empty while it can.

    Runs of a ranked campaign, gold files and submissions of a task campaign
    belong to their kind. The task files are counted through the reverse
    relations, so that pooling does not import the scoring app, which depends on it.
    """
    what = [
        (campaign.runs.count(), "run"),
        (campaign.answer_runs.count(), "answer run"),
        (campaign.task_golds.count(), "gold file"),
        (campaign.task_submissions.count(), "submission"),
    ]
    held = [f"{n:,} {noun}{'' if n == 1 else 's'}" for n, noun in what if n]
    if not held:
        return ""
    return (
        f"{campaign.name} already has {' and '.join(held)}: its task kind can no longer "
        "change; create another campaign for another kind."
    )


def campaign_budget(campaign: Campaign) -> BudgetState:
    """The campaign's budget against the judgments stored now (never a counter).

    Read through the topics' reverse relations so that pooling does not
    import the judging app, which depends on it.
    """
    topics = Topic.objects.filter(campaign=campaign)
    return BudgetState(
        budget=campaign.judgment_budget,
        judgments=topics.aggregate(n=Count("judgments"))["n"],
        adjudications=topics.aggregate(n=Count("adjudications"))["n"],
        counts_adjudications=campaign.budget_counts_adjudications,
    )


def judged_pairs(campaign: Campaign) -> pd.DataFrame:
    """(query_id, doc_id) already judged by anyone in the campaign.

    Read through the topics' reverse `judgments` relation so that pooling
    does not import the judging app, which depends on it.
    """
    import pandas as pd

    rows = (
        campaign.topics.filter(judgments__isnull=False)
        .values_list("topic_id", "judgments__docno")
        .distinct()
    )
    return pd.DataFrame(list(rows), columns=["query_id", "doc_id"])


# --------------------------------------------------------------------------
# Runs, ranked


def ranked_runs(
    campaign: Campaign, *, max_depth: int, runs: Sequence[Run] | None = None, progress: Any = None
) -> RankedRuns:
    """The campaign's runs (or the given ones), ranked from their caches down to max_depth."""
    from pooling.core.ranking import rank_run_caches

    runs = list(campaign.runs.all()) if runs is None else list(runs)
    if not runs:
        raise PoolBuildError(f"campaign {campaign.slug} has no runs to pool")
    return rank_run_caches(
        [run.cache_file.path for run in runs], max_depth=max_depth, progress=progress
    )


# Ranking the campaign's runs takes about half a second at TREC scale, and the
# pool form asks again at every keystroke: a ranking is kept in Django's cache
# (shared by every worker with a shared cache backend). A stored run never
# changes, but an id can be reused after a deletion, so a ranking is known by
# its runs' ids and content hashes.
RANKED_RUNS_TIMEOUT = 15 * 60


def ranked_runs_cached(
    campaign: Campaign, *, max_depth: int, runs: Sequence[Run] | None = None
) -> RankedRuns:
    """`ranked_runs`, reusing a ranking of the same runs at least as deep."""
    runs = list(campaign.runs.all()) if runs is None else list(runs)
    identity = ",".join(f"{pk}:{sha}" for pk, sha in sorted((run.pk, run.sha256) for run in runs))
    key = "ranked-runs:" + hashlib.sha256(identity.encode()).hexdigest()
    cached = cache.get(key)
    if cached is not None and (cached.depth is None or cached.depth >= max_depth):
        return cached
    ranked = ranked_runs(campaign, max_depth=max_depth, runs=runs)
    cache.set(key, ranked, timeout=RANKED_RUNS_TIMEOUT)
    return ranked


def pool_runs(campaign: Campaign, *, runs_per_team: int | None = None) -> list[Run]:
    """The runs a pool is built from: every run of the campaign, or with
    `runs_per_team` each team's first N runs by its precedence (1 = first) and
    the organiser's own runs (no team). Late runs are left out of the choice:
    they join a pool only through a late-run addition (`pool_services.pool_add_runs`)."""
    runs = list(campaign.runs.order_by("tag"))
    if runs_per_team is None:
        return runs
    by_team: dict[int, list[Run]] = {}
    for run in sorted(runs, key=lambda r: (r.precedence or 0, r.tag)):
        if run.team_id is not None and not run.late:
            by_team.setdefault(run.team_id, []).append(run)
    chosen = {run.pk for team_runs in by_team.values() for run in team_runs[:runs_per_team]}
    return [run for run in runs if run.team_id is None or run.pk in chosen]


# --------------------------------------------------------------------------
# What a pool would cost


def chart_depths(deepest_rank: int) -> list[int]:
    """The depths of the cost table and chart: every 10 up to 100, but none past
    the runs' deepest rank (deeper pools are the same pool), which ends the list."""
    from pooling.core.budget import DEFAULT_DEPTHS

    shallower = [depth for depth in DEFAULT_DEPTHS if depth < deepest_rank]
    return [*shallower, min(deepest_rank, DEFAULT_DEPTHS[-1])] if deepest_rank else [1]


@dataclass(frozen=True)
class PoolWhatIf:
    """What a pool spec would cost against the budget (the pool form's what-if panel).

    rows: one per depth of `chart_depths` (scheme, depth, candidates,
    pool_size, judged, needed); chosen: the same numbers for the spec. Costs
    are new judgments, compared with what the budget has left (`budget`).
    fit_depth: the deepest depth-k pool within it; fit_scale: the largest
    scale of the spec's strata rates within it (only for a stratified spec).
    """

    rows: list[dict[str, Any]]
    chosen: dict[str, Any]
    budget_state: BudgetState
    deepest_rank: int
    n_runs: int
    fit_depth: DepthFit | None = None
    fit_scale: ScaleFit | None = None

    @property
    def budget(self) -> int | None:
        remaining = self.budget_state.remaining
        return None if remaining is None else max(remaining, 0)

    @property
    def needed(self) -> int:
        return int(self.chosen["needed"])

    @property
    def over_by(self) -> int:
        return self.budget_state.over_by(self.needed)

    @property
    def left_after(self) -> int | None:
        return None if self.budget is None else self.budget - self.needed

    @property
    def fits_everything(self) -> bool:
        """Past the runs' deepest rank every depth gives the same pool."""
        return self.fit_depth is not None and self.fit_depth.depth >= self.deepest_rank

    @property
    def scale_judges_all(self) -> bool:
        return self.fit_scale is not None and self.fit_scale.spec.is_depth_only


def pool_whatif(
    campaign: Campaign, spec: PoolSpec, *, runs_per_team: int | None = None
) -> PoolWhatIf:
    """The sizes and costs of the pool `spec` would build now from `pool_runs`, and
    what fits the budget."""
    from pooling.core.budget import DEFAULT_DEPTHS, fit_depth, fit_scale, whatif

    if not campaign.runs.exists():
        raise PoolBuildError("Upload runs first: a pool is built from them.")
    runs = pool_runs(campaign, runs_per_team=runs_per_team)
    if not runs:
        raise PoolBuildError("No run to pool: no team has a run sent on time.")
    deepest = max(DEFAULT_DEPTHS[-1], spec.max_depth)  # ranked once, for the chart and spec
    ranked = ranked_runs_cached(campaign, max_depth=deepest, runs=runs)
    judged = judged_pairs(campaign)
    table = whatif(ranked, depths=chart_depths(ranked.deepest_rank), specs=[spec], judged=judged)
    totals = table.totals
    state = campaign_budget(campaign)
    chosen = totals[totals["depth"].isna()].iloc[0].to_dict()
    if spec.is_adaptive:  # it judges its budget of the candidates, not all of them
        chosen["pool_size"] = min(int(chosen["pool_size"]), spec.budget or 0)
        chosen["needed"] = min(int(chosen["needed"]), spec.budget or 0)
    result = PoolWhatIf(
        rows=totals[totals["depth"].notna()].to_dict(orient="records"),
        chosen=chosen,
        budget_state=state,
        deepest_rank=ranked.deepest_rank,
        n_runs=len(runs),
    )
    budget = result.budget
    if budget is None:
        return result
    scale = None
    if spec.strata and not spec.is_depth_only:
        scale = fit_scale(ranked, spec, budget, judged=judged)
    return PoolWhatIf(
        rows=result.rows,
        chosen=result.chosen,
        budget_state=state,
        deepest_rank=ranked.deepest_rank,
        n_runs=len(runs),
        fit_depth=fit_depth(ranked, budget, judged=judged),
        fit_scale=scale,
    )


# --------------------------------------------------------------------------
# Pools


def pool_or_404(pool_id: int) -> Pool:
    """The pool with its campaign, or Http404 (the organiser pages of every app)."""
    return get_object_or_404(Pool.objects.select_related("campaign"), pk=pool_id)


# The model field of each pool frame column; `batch` comes from the addition.
_ENTRY_FIELDS = {"query_id": "topic__topic_id", "doc_id": "docno", "batch": "addition_id"}


def pool_entries_frame(pool: Pool, *, with_retired: bool = False) -> pd.DataFrame:
    """The pool's plan as the pool frame of `pooling.core.strategies`: every entry but
    those a revision retired (`with_retired`: those too, with columns `retired`
    and `revision`, the frame of `pooling.core.revisions`)."""
    import pandas as pd

    from pooling.core.strategies import POOL_COLUMNS, sort_pool

    columns = [*POOL_COLUMNS, *(("retired", "revision") if with_retired else ())]
    fields = [_ENTRY_FIELDS.get(column, column) for column in columns]
    entries = pool.entries.all() if with_retired else pool.entries.filter(retired=False)
    frame = pd.DataFrame(list(entries.values_list(*fields)), columns=columns)
    frame["order"] = frame["order"].astype("Int64")
    # The pool frame numbers additions as batches: 0 for the build, then 1, 2, ...
    additions = sorted(a for a in frame["batch"].dropna().unique())
    batch_of = {addition: number for number, addition in enumerate(additions, start=1)}
    frame["batch"] = frame["batch"].map(batch_of).fillna(0).astype("int64")
    return sort_pool(frame)


# --------------------------------------------------------------------------
# Documents to judge without text


@dataclass(frozen=True)
class WithoutText:
    """A pool with documents to judge whose text is not loaded."""

    pool_id: int
    pool_name: str
    docnos: int  # distinct docnos to judge without text


def _entries_without_text(
    campaign: Campaign, pool: Pool | None = None
) -> tuple[QuerySet[PoolEntry], QuerySet[PoolEntry]]:
    """The entries to judge (drawn, in the plan) of the campaign's pools, or of `pool`,
    whose document has no text: (those whose document is not loaded, those whose
    document is loaded with an empty text). An assessor would see only the docno
    and "ask the organiser".

    Two queries, as each is answered from an index: an anti-join on the documents'
    unique (campaign, docno) index, and a semi-join on the few docnos of the small
    partial index of empty texts (`document_without_text`), as `IN (...)`: as a
    correlated EXISTS, SQLite probed it once per entry (0.56 s of the dashboard's
    1.5 s on a 100,000-entry pool, against 0.06 s). Their OR in one statement is
    planned as a correlated scan costly enough for PostgreSQL's JIT (a second on the
    dashboard, which asks on every refresh: bench_dashboard)."""
    documents = Document.objects.filter(campaign=campaign, docno=OuterRef("docno"))
    empty = Document.objects.filter(campaign=campaign, text="").values("docno")
    entries = PoolEntry.objects.filter(sampled=True, retired=False)
    entries = (
        entries.filter(pool=pool) if pool is not None else entries.filter(pool__campaign=campaign)
    )
    return entries.exclude(Exists(documents)), entries.filter(docno__in=empty)


def pools_without_text(campaign: Campaign) -> list[WithoutText]:
    """The campaign's open pools with documents to judge that have no text, each with
    how many (distinct docnos), oldest pool first: for the dashboard and
    `campaign_status`, before anyone is assigned."""
    counts: dict[tuple[int, str], int] = {}
    for entries in _entries_without_text(campaign):
        rows = (
            entries.filter(pool__retired_at__isnull=True)
            .values_list("pool", "pool__name")
            .annotate(n=Count("docno", distinct=True))
            .order_by()
        )
        for pool_id, name, n in rows:  # a docno is missing or empty, never both
            counts[pool_id, name] = counts.get((pool_id, name), 0) + n
    return [WithoutText(pool_id, name, n) for (pool_id, name), n in sorted(counts.items())]


def docnos_without_text(pool: Pool) -> list[str]:
    """The docnos of the pool's documents to judge that have no text, sorted: the list
    to download, to load their texts."""
    missing, empty = _entries_without_text(pool.campaign, pool)
    return sorted(
        {*missing.values_list("docno", flat=True), *empty.values_list("docno", flat=True)}
    )


def count_without_text(pool: Pool) -> int:
    """How many documents (distinct docnos) the pool has to judge without text."""
    return sum(
        entries.values("docno").distinct().count()
        for entries in _entries_without_text(pool.campaign, pool)
    )


def topic_specs(pool: Pool) -> dict[str, PoolSpec]:
    """Each topic's plan now: the pool's spec, or that of the last revision of the topic."""
    topics = pool.campaign.topics.values_list("topic_id", flat=True)
    plan = dict.fromkeys(topics, PoolSpec.from_dict(pool.spec))
    for revision in pool.revisions.order_by("number"):
        spec = PoolSpec.from_dict(revision.spec)
        plan.update(dict.fromkeys(revision.topics, spec))
    return plan


def pool_samples(pool: Pool) -> bool:
    """Whether some topic's plan now (the pool's spec, or its last revision's)
    samples a stratum: then the pool is scored with sample_eval's inferred
    measures too, and its reusability report is made with them."""
    specs = list(topic_specs(pool).values()) or [PoolSpec.from_dict(pool.spec)]
    return not all(spec.is_depth_only for spec in specs)


def unfinished_topics(pool: Pool) -> list[str]:
    """Topics with a document to judge that nobody has judged yet, in topic order."""
    waiting = (
        pool.entries.filter(sampled=True)
        .exclude(
            Exists(Topic.objects.filter(pk=OuterRef("topic"), judgments__docno=OuterRef("docno")))
        )
        .values_list("topic__topic_id", flat=True)
        .distinct()
    )
    return sorted(set(waiting), key=topic_sort_key)


@dataclass(frozen=True)
class BudgetChange:
    """What setting an adaptive pool's budget to `new` does: `cost` is what the
    campaign's budget is charged (a raise only, as `pool_budget_set` checks it);
    `work_change` is the change in documents still to judge (each topic draws up
    to its share, and what it has drawn already stays)."""

    old: int
    new: int
    cost: int
    work_change: int


def pool_budget_preview(pool: Pool, *, budget: int) -> BudgetChange:
    """The effect of an adaptive pool's new budget, before it is set."""
    spec = PoolSpec.from_dict(pool.spec)
    old = spec.budget or 0
    drawn = dict(
        pool.entries.filter(sampled=True)
        .values("topic__topic_id")
        .annotate(n=Count("pk"))
        .values_list("topic__topic_id", "n")
    )
    topics = sorted(
        set(pool.entries.values_list("topic__topic_id", flat=True).distinct().order_by()),
        key=topic_sort_key,
    )
    before = spec.topic_budgets(topics)
    after = PoolSpec.from_dict({**pool.spec, "budget": budget}).topic_budgets(topics)
    change = sum(max(drawn.get(t, 0), after[t]) - max(drawn.get(t, 0), before[t]) for t in topics)
    return BudgetChange(old=old, new=budget, cost=max(budget - old, 0), work_change=change)


def pool_revision_preview(pool: Pool, *, spec: PoolSpec, topics: Sequence[str]) -> Revision:
    """What re-planning `topics` with `spec` would do (nothing is stored)."""
    from pooling.core.revisions import revise
    from pooling.core.strategies import pool_from_ranked

    if not topics:
        raise PoolBuildError("choose at least one topic to re-plan")
    known = set(pool.campaign.topics.values_list("topic_id", flat=True))
    unknown = sorted(set(topics) - known, key=topic_sort_key)
    if unknown:
        raise PoolBuildError(f"not topics of this campaign: {', '.join(unknown)}")
    ranked = ranked_runs_cached(pool.campaign, max_depth=spec.max_depth, runs=list(pool.runs.all()))
    planned = pool_from_ranked(ranked, spec)
    current = pool_entries_frame(pool, with_retired=True)
    number = (pool.revisions.aggregate(n=Max("number"))["n"] or 1) + 1
    return revise(
        current[current["query_id"].isin(topics)].reset_index(drop=True),
        planned[planned["query_id"].isin(topics)].reset_index(drop=True),
        judged=judged_pairs(pool.campaign),
        revision=number,
    )


@dataclass(frozen=True)
class RevisionAdvice:
    """What the re-plan page says beside a preview of `spec` (`pooling.core.revisions`):

    redraws: the new plan's sampled strata drawn again (other bounds than now);
    current: the revised topics' plan now, when they share one;
    keeping: the current plan at lower rates, drawing about as many documents,
        offered when it asks for fewer new judgments than `spec` does;
    keeping_revision: what re-planning with `keeping` would do.
    """

    redraws: list[Redraw]
    current: PoolSpec | None = None
    keeping: PoolSpec | None = None
    keeping_revision: Revision | None = None


def pool_revision_advice(
    pool: Pool, *, spec: PoolSpec, topics: Sequence[str], revision: Revision
) -> RevisionAdvice:
    """Whether re-planning `topics` with `spec` (previewed as `revision`) draws a
    sampled stratum again, and the plan that would keep the sample instead."""
    from pooling.core.revisions import redraws, sample_keeping_spec

    plans = topic_specs(pool)
    current: list[PoolSpec] = []
    for topic in topics:
        if plans[topic] not in current:
            current.append(plans[topic])
    found = []
    for plan in current:
        found += [redraw for redraw in redraws(plan, spec) if redraw not in found]
    if not found or len(current) != 1:
        return RevisionAdvice(found, current[0] if len(current) == 1 else None)
    entries = pool_entries_frame(pool, with_retired=True)
    keeping = sample_keeping_spec(
        current[0], spec, revision.entries, entries[entries["query_id"].isin(topics)]
    )
    if keeping is None:
        return RevisionAdvice(found, current[0])
    kept = pool_revision_preview(pool, spec=keeping, topics=topics)
    if kept.cost >= revision.cost:
        return RevisionAdvice(found, current[0])
    return RevisionAdvice(found, current[0], keeping, kept)


@dataclass(frozen=True)
class StratumStats:
    number: int  # 1-based, the depth stratum first
    ranks: str  # "1-20", or "" where the spec does not say (entries stored otherwise)
    entries: int
    drawn: int
    probability: float


@dataclass(frozen=True)
class TopicStats:
    topic_id: str
    title: str
    entries: int
    to_judge: int
    judged: int
    strata: list[StratumStats]


def pool_topic_stats(pool: Pool) -> list[TopicStats]:
    """Per topic: entries, sampled entries, how many are judged, and each stratum's
    draw with the ranks it covers."""
    rows = (
        pool.entries.filter(retired=False)
        .values("topic_id", "stratum")
        .annotate(
            entries=Count("id"),
            drawn=Count("id", filter=Q(sampled=True)),
            probability=Max("inclusion_probability"),
        )
        .order_by("topic_id", "stratum")
    )
    # A judged entry: some judgment of its topic has its docno (the reverse
    # relation keeps pooling free of a judging import).
    judged = dict(
        pool.entries.filter(sampled=True, topic__judgments__docno=F("docno"))
        .values("topic_id")
        .annotate(n=Count("id", distinct=True))
        .values_list("topic_id", "n")
    )
    topics = {topic.pk: topic for topic in pool.campaign.topics.all()}
    specs = topic_specs(pool)
    by_topic: dict[int, list[StratumStats]] = {}
    for row in rows:
        topic_id = topics[row["topic_id"]].topic_id
        strata = specs[topic_id].strata_for(topic_id)
        number = row["stratum"]
        ranks = f"{strata[number - 1].lo}-{strata[number - 1].hi}" if number <= len(strata) else ""
        by_topic.setdefault(row["topic_id"], []).append(
            StratumStats(number, ranks, row["entries"], row["drawn"], row["probability"])
        )
    return [
        TopicStats(
            topic_id=topic.topic_id,
            title=topic.title,
            entries=sum(s.entries for s in by_topic[pk]),
            to_judge=sum(s.drawn for s in by_topic[pk]),
            judged=judged.get(pk, 0),
            strata=by_topic[pk],
        )
        for pk, topic in topics.items()
        if pk in by_topic
    ]
