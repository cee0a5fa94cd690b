"""Replay adaptive pooling strategies on earlier qrels: what each would have found
for a budget, and how it would have ranked the runs. Pure core, no Django.

    settings = Settings(strategies=("depth", "mtf"), budgets=(2000, 8000), measure=measure)
    simulation = simulate(qrels, runs, settings)      # frames as scoring.core.evaluation's

Each strategy (`pooling.core.adaptive`) chooses documents among the candidates:
what the runs rank within `depth` on the qrels topics (runs ranked by the
decided rule; topics the qrels lack are left out, as trec_eval leaves them).
The label of each judged document is read from the qrels Q; a document Q does
not list is not relevant, as trec_eval counts it. Relevant means a label of
at least the relevance level (trec_eval's -l, default 1).

At each budget (judgments asked for; fewer are made when the candidates run
out): the judgments made, the relevant documents found, their share of Q's
relevant documents (recall: Q's, so a relevant document no run ranks within
the depth is never found), and Kendall's tau and tau_AP
(`scoring.core.analysis.correlation`) between the ranking of the runs by the
measure under the judgments so far and under Q. Both are scored as trec_eval
-c scores a qrels file: the judgments so far are Q's rows with every
unjudged one marked -1 (pooled, not judged), so that every topic of Q
counts, as under Q. The runs are ranked once and judged again by each set of
labels (`JudgedRankings.relabelled`).

For active, also its estimate of map with a standard error
(`scoring.core.pool_estimates`), against map under Q and under Q's labels of the
candidates alone (what judging the whole pool would give: a relevant document
no run ranks within the depth is beyond any sample of the candidates). And for every team (a run
tag's group, else the run alone) the relevant documents found that only its
runs rank within the depth: the unfairness Voorhees (CIKM 2018) measured.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from pooling.core.adaptive import (
    ALLOCATIONS,
    STRATEGIES,
    ActiveTurns,
    AdaptiveStrategy,
    Candidates,
    make_strategy,
)
from pooling.core.ranking import RankedRuns, rank_runs
from scoring.core.analysis.correlation import kendall_tau, tau_ap
from scoring.core.evaluation import evaluate_ranked
from scoring.core.measures.base import RequestedMeasure
from scoring.core.measures.columns import PlainQrels, Qrels, Run, qrels_columns, run_tag
from scoring.core.measures.rankings import EvalOptions, JudgedRankings, Judgments, rank_and_judge
from scoring.core.pool_estimates import ActiveEstimate, MapEstimator

PROGRESS_STEP = 1000  # judgments between two progress reports
UNLISTED = -1  # the label of a qrels row not judged: pooled, not judged


class SimulationError(ValueError):
    """Inputs a simulation cannot be made from; run: the index of the run at fault."""

    def __init__(self, message: str, *, run: int | None = None) -> None:
        super().__init__(message)
        self.run = run


@dataclass(frozen=True)
class Settings:
    """What to replay. budgets: positive, in any order (reported ascending).
    depth: the candidates' depth (None: every rank). groups: run tag -> team."""

    strategies: tuple[str, ...]
    budgets: tuple[int, ...]
    measure: RequestedMeasure
    allocation: str = "equal"
    seed: int = 0
    depth: int | None = 100
    relevance_level: int = 1
    groups: Mapping[str, str] | None = None

    def check(self) -> None:
        unknown = [name for name in self.strategies if name not in STRATEGIES]
        if unknown:
            raise SimulationError(
                f"unknown strategy {unknown[0]!r} (strategies: {', '.join(STRATEGIES)})"
            )
        if not self.strategies:
            raise SimulationError("name at least one strategy")
        if self.allocation not in ALLOCATIONS:
            raise SimulationError(
                f"unknown allocation {self.allocation!r} (one of {', '.join(ALLOCATIONS)})"
            )
        bad = [budget for budget in self.budgets if budget < 1]
        if bad or not self.budgets:
            shown = f"{bad[0]} is not" if bad else "none given; give"
            raise SimulationError(f"budget: {shown} a positive number of judgments")
        if self.depth is not None and self.depth < 1:
            raise SimulationError(f"depth must be at least 1, not {self.depth}")


@dataclass(frozen=True)
class BudgetResult:
    """One strategy at one budget. scores: each run's measure under the judgments
    so far (runs as `Simulation.run_tags`); team_found: per team (as
    `Simulation.teams`) the relevant documents found that only it ranks."""

    budget: int
    judged: int
    relevant: int
    recall: float
    tau: float | None
    tau_ap: float | None
    scores: np.ndarray
    team_found: np.ndarray
    estimate: ActiveEstimate | None = None


@dataclass(frozen=True)
class StrategyResult:
    """order: the documents judged, in order (numbered as the candidates); found:
    the relevant documents found after each judgment."""

    strategy: str
    budgets: tuple[BudgetResult, ...]
    order: np.ndarray
    found: np.ndarray


@dataclass(frozen=True)
class Team:
    """unique_relevant: Q's relevant candidates that only this team's runs rank."""

    name: str
    runs: tuple[str, ...]
    unique_relevant: int


@dataclass(frozen=True)
class Simulation:
    settings: Settings
    candidates: Candidates
    run_tags: tuple[str, ...]
    topics: int
    relevant_total: int  # Q's relevant documents (recall's denominator)
    relevant_candidates: int  # ... that are candidates
    truth: np.ndarray  # each run's measure under Q
    pool_truth: np.ndarray  # ... under Q's labels of the candidates alone
    teams: tuple[Team, ...]
    strategies: tuple[StrategyResult, ...] = field(default=())

    def order_lines(self) -> Iterator[str]:
        """`strategy topic docno position` for every judgment made, position 1-based."""
        for result in self.strategies:
            for position, doc in enumerate(result.order.tolist(), start=1):
                topic, docno = self.candidates.name_of(doc)
                yield f"{result.strategy} {topic} {docno} {position}\n"


type Progress = Callable[[int], object]


def simulate(
    qrels: Qrels, runs: Sequence[Run], settings: Settings, *, progress: Progress | None = None
) -> Simulation:
    """Replay every strategy of `settings` (module docstring). `progress(n)` is told
    of every PROGRESS_STEP judgments replayed, out of len(strategies) x max(budgets)."""
    settings.check()
    tags = [run_tag(run) for run in runs]
    _check_tags(tags)
    query_id, doc_id, numeric = qrels_columns(qrels)
    q_topic = np.asarray(query_id.values.values, dtype=object)[query_id.codes]
    q_doc = np.asarray(doc_id.values.values, dtype=object)[doc_id.codes]
    q_label = np.asarray(numeric["relevance"], dtype=np.int64)
    topics = sorted(set(q_topic.tolist()))
    candidates = Candidates.from_ranked(_ranked(runs, tags, topics, settings.depth))
    if not candidates.n_docs:
        raise SimulationError("no run ranks a document for any topic of the qrels")
    universe = _Universe(candidates, q_topic, q_doc, q_label, settings.relevance_level)
    options = EvalOptions(relevance_level=settings.relevance_level, complete=True)
    ranked = rank_and_judge(universe.judgments(None), runs, options, with_judgment_rows=True)
    truth = _summary(ranked, settings.measure)
    every_candidate = np.ones(candidates.n_docs, dtype=bool)
    pool_truth = _summary(ranked.relabelled(universe.judgments(every_candidate)), settings.measure)
    teams, unique_team = _teams(candidates, settings.groups)
    simulation = Simulation(
        settings=settings,
        candidates=candidates,
        run_tags=ranked.run_tags,
        topics=len(topics),
        relevant_total=int(np.count_nonzero(q_label >= settings.relevance_level)),
        relevant_candidates=int(np.count_nonzero(universe.relevant)),
        truth=truth,
        pool_truth=pool_truth,
        teams=tuple(
            Team(name, runs_of, int(np.count_nonzero(universe.relevant & (unique_team == k))))
            for k, (name, runs_of) in enumerate(teams)
        ),
    )
    estimator = (
        MapEstimator(ranked, universe.candidate_row, candidates)
        if settings.measure.measure.name == "map"
        else None
    )
    replay = _Replay(simulation, universe, ranked, unique_team, estimator, progress)
    results = tuple(replay.strategy(name) for name in settings.strategies)
    return replace(simulation, strategies=results)


def _check_tags(tags: list[str]) -> None:
    first: dict[str, int] = {}
    for index, tag in enumerate(tags):
        if tag in first:
            raise SimulationError(
                f"run tag {tag!r} is also the tag of run {first[tag] + 1}: each run needs "
                "a tag of its own",
                run=index,
            )
        first[tag] = index


def _ranked(
    runs: Sequence[Run], tags: list[str], topics: list[str], depth: int | None
) -> RankedRuns:
    """The runs' rankings on the qrels topics, by the decided rule, cut at `depth`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from scoring.core.measures.columns import PlainRun, arrow_runs

    tables = []
    for run, tag in zip(runs, tags, strict=True):
        if isinstance(run, PlainRun):  # bytes arrays of UTF-8, as the plain reader checked
            query_id = pa.array(run.query_id).cast(pa.string())
            doc_id = pa.array(run.doc_id).cast(pa.string())
            score = pa.array(run.score, pa.float64())
        else:
            [table] = arrow_runs([run]) or []
            query_id, doc_id, score = (table.column(c) for c in ("query_id", "doc_id", "score"))
        run_id = pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(len(score), dtype=np.int32)), pa.array([tag], pa.string())
        )
        tables.append(
            pa.table({"run_id": run_id, "query_id": query_id, "doc_id": doc_id, "score": score})
        )
    table = pa.concat_tables([t.cast(tables[0].schema) for t in tables]).combine_chunks()
    wanted = pa.array(topics, pa.string())
    table = table.filter(pc.is_in(pc.cast(table.column("query_id"), pa.string()), wanted))
    if not table.num_rows:
        raise SimulationError("no run ranks a document for any topic of the qrels")
    return rank_runs(table, max_depth=depth)


class _Universe:
    """Qrels rows for every candidate (numbered as the candidates, Q's label or
    UNLISTED) and then Q's other rows: what the runs are judged against."""

    def __init__(
        self,
        candidates: Candidates,
        q_topic: np.ndarray,
        q_doc: np.ndarray,
        q_label: np.ndarray,
        level: int,
    ) -> None:
        n = candidates.n_docs
        index = {
            pair: k for k, pair in enumerate(zip(q_topic.tolist(), q_doc.tolist(), strict=True))
        }
        names = [candidates.name_of(doc) for doc in range(n)]
        q_row = np.array([index.get(name, -1) for name in names], dtype=np.int64)
        listed = q_row >= 0
        others = np.setdiff1d(np.arange(len(q_label)), q_row[listed])
        topic = [t for t, _ in names] + q_topic[others].tolist()
        doc = [d for _, d in names] + q_doc[others].tolist()
        self.label = np.concatenate(
            [np.where(listed, q_label[np.maximum(q_row, 0)], UNLISTED), q_label[others]]
        )
        self.qrels = PlainQrels.of(topic, doc, relevance=self.label.tolist())
        self.level = level
        self.relevant = self.label[:n] >= level  # per candidate
        self.candidate_row = n  # rows below this are the candidates, by number

    def judgments(self, judged: np.ndarray | None) -> Judgments:
        """Judgments of the candidates `judged` (None: all of Q)."""
        label = self.label
        if judged is not None:
            label = label.copy()
            label[: len(judged)][~judged] = UNLISTED
            label[len(judged) :] = UNLISTED
        qrels = PlainQrels(self.qrels.query_id, self.qrels.doc_id, {"relevance": label})
        return Judgments(qrels, self.level)


def _summary(ranked: JudgedRankings, measure: RequestedMeasure) -> np.ndarray:
    summary = evaluate_ranked(ranked, [measure]).measures[0].summary
    assert summary is not None
    return np.asarray(summary[:, 0], dtype=np.float64)


def _teams(
    candidates: Candidates, groups: Mapping[str, str] | None
) -> tuple[list[tuple[str, tuple[str, ...]]], np.ndarray]:
    """The teams (name, runs), in order of name, and each candidate's team when
    only one team's runs rank it within the depth (-1 otherwise)."""
    team_of_run = [groups.get(run, run) if groups else run for run in candidates.runs]
    names = sorted(set(team_of_run))
    teams = [
        (
            name,
            tuple(
                run for run, team in zip(candidates.runs, team_of_run, strict=True) if team == name
            ),
        )
        for name in names
    ]
    code = np.array([names.index(team) for team in team_of_run], dtype=np.int64)
    entry_team = code[candidates.arm_run[candidates.entry_arm]]
    pairs = np.unique(candidates.entry_doc * len(names) + entry_team)
    pair_doc, pair_team = pairs // len(names), pairs % len(names)
    count = np.bincount(pair_doc, minlength=candidates.n_docs)
    unique = np.full(candidates.n_docs, -1, dtype=np.int64)
    alone = count[pair_doc] == 1
    unique[pair_doc[alone]] = pair_team[alone]
    return teams, unique


class _Replay:
    """Replays one strategy after another, reporting at each budget."""

    def __init__(
        self,
        simulation: Simulation,
        universe: _Universe,
        ranked: JudgedRankings,
        unique_team: np.ndarray,
        estimator: MapEstimator | None,
        progress: Progress | None,
    ) -> None:
        self.simulation = simulation
        self.settings = simulation.settings
        self.universe = universe
        self.ranked = ranked
        self.unique_team = unique_team
        self.estimator = estimator
        self.progress = progress
        self.truth = dict(zip(simulation.run_tags, simulation.truth.tolist(), strict=True))

    def strategy(self, name: str) -> StrategyResult:
        settings = self.settings
        strategy = make_strategy(
            name,
            self.simulation.candidates,
            allocation=settings.allocation,
            seed=settings.seed,
            relevance_level=settings.relevance_level,
        )
        budgets = sorted(set(settings.budgets))
        limit = budgets[-1]
        relevant = self.universe.relevant.tolist()
        order = np.empty(limit, dtype=np.int64)
        found = np.empty(limit, dtype=np.int64)
        judged = found_so_far = reported = 0
        results = []
        for budget in budgets:
            while judged < budget:
                doc = strategy.next_id()
                if doc is None:
                    break
                is_relevant = relevant[doc]
                strategy.observe_id(doc, is_relevant)
                order[judged] = doc
                found_so_far += is_relevant
                found[judged] = found_so_far
                judged += 1
                if self.progress is not None and judged - reported >= PROGRESS_STEP:
                    self.progress(judged - reported)
                    reported = judged
            results.append(self._report(strategy, budget, judged, found_so_far))
        if self.progress is not None:
            self.progress(limit - reported)
        return StrategyResult(name, tuple(results), order[:judged], found[:judged])

    def _report(
        self, strategy: AdaptiveStrategy, budget: int, judged: int, found: int
    ) -> BudgetResult:
        mask = strategy.judged
        ranked = self.ranked.relabelled(self.universe.judgments(mask))
        scores = _summary(ranked, self.settings.measure)
        by_run = dict(zip(self.simulation.run_tags, scores.tolist(), strict=True))
        relevant_found = mask & self.universe.relevant
        teams = self.unique_team[relevant_found & (self.unique_team >= 0)]
        estimate = None
        if isinstance(strategy, ActiveTurns) and self.estimator is not None:
            simulation = self.simulation
            estimate = self.estimator.estimate(
                strategy.sample(), simulation.truth, simulation.pool_truth
            )
        total = self.simulation.relevant_total
        return BudgetResult(
            budget=budget,
            judged=judged,
            relevant=found,
            recall=found / total if total else 0.0,
            tau=kendall_tau(self.truth, by_run),
            tau_ap=tau_ap(self.truth, by_run),
            scores=scores,
            team_found=np.bincount(teams, minlength=len(self.simulation.teams)),
            estimate=estimate,
        )
