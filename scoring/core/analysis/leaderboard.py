"""The leaderboard of a measure: runs ranked by their mean over topics, with
confidence intervals, and every pair of runs compared by paired tests. Pure core.

    table = ScoreTable.from_evaluation(evaluation)
    board = build_leaderboard(table, Options(tests=("t", "randomization")))

Every run is compared over the same topics: a topic that some run has no
value for (trec_eval without -c skips the qrels topics a run lacks) is left
out for every run and listed in `Leaderboard.excluded` with the runs that
lack it, so that the means, intervals and pairs all rest on one topic set.

Runs are ranked by mean (trec_eval's, `topic_means`), highest first, ties by
name (`ranks.ranked`). Pairs are (a, b) with a ranked above b, in rank order of a then b;
each test's p-values are adjusted over its own family (all pairs) by the
correction, except Tukey's HSD, whose p-values are adjusted already.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from scoring.core.analysis import intervals, paired
from scoring.core.analysis.corrections import CORRECTIONS, adjust
from scoring.core.analysis.ranks import ranked
from scoring.core.analysis.tukey import tukey_hsd

if TYPE_CHECKING:
    from scoring.core.evaluation import Evaluation

TESTS = ("t", "wilcoxon", "sign", "randomization", "tukey")


class LeaderboardError(ValueError):
    """Options or a score table a leaderboard cannot be built from."""


@dataclass(frozen=True)
class ScoreTable:
    """One measure's per-topic values: values[run, topic], NaN where the run
    has no value for the topic."""

    measure: str
    runs: tuple[str, ...]
    topics: tuple[str, ...]
    values: np.ndarray

    @classmethod
    def from_evaluation(cls, evaluation: Evaluation, measure: int = 0) -> ScoreTable:
        """The first value (P_5 of P.5,10) of one measure of an Evaluation; runs
        named by their tags, topics in trec_eval's order."""
        measured = evaluation.measures[measure]
        values = np.full((len(evaluation.run_tags), len(evaluation.topics)), np.nan)
        values[evaluation.group_run, evaluation.group_topic] = measured.per_topic[:, 0]
        return cls(measured.requested.names[0], evaluation.run_tags, evaluation.topics, values)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (a job's result; `from_dict` reads it back): NaN as null, since
        JSON has no NaN; the floats come back exactly (JSON writes their repr)."""
        values = [[None if np.isnan(v) else float(v) for v in row] for row in self.values]
        return {
            "measure": self.measure,
            "runs": list(self.runs),
            "topics": list(self.topics),
            "values": values,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScoreTable:
        values = np.array(data["values"], dtype=np.float64).reshape(
            len(data["runs"]), len(data["topics"])
        )  # None -> NaN; reshaped so that no run or no topic keeps its 2 axes
        return cls(data["measure"], tuple(data["runs"]), tuple(data["topics"]), values)


@dataclass(frozen=True)
class Options:
    """tests: some of TESTS; correction: one of CORRECTIONS; alpha: the
    significance level (confidence intervals at 1 - alpha); seed and
    n_resamples: for the bootstrap intervals and the randomisation test."""

    tests: tuple[str, ...] = ("t",)
    correction: str = "holm"
    alpha: float = 0.05
    seed: int = intervals.DEFAULT_SEED
    n_resamples: int = intervals.DEFAULT_RESAMPLES

    def __post_init__(self) -> None:
        unknown = [test for test in self.tests if test not in TESTS]
        if unknown:
            raise LeaderboardError(f"unknown test {unknown[0]!r} (known: {', '.join(TESTS)})")
        if self.correction not in CORRECTIONS:
            known = ", ".join(CORRECTIONS)
            raise LeaderboardError(f"unknown correction {self.correction!r} (known: {known})")
        if not 0 < self.alpha < 1:
            raise LeaderboardError(f"alpha must be between 0 and 1, got {self.alpha}")
        if self.n_resamples < 1:
            raise LeaderboardError(f"resamples must be at least 1, got {self.n_resamples}")
        if self.seed < 0:
            raise LeaderboardError(f"the seed must be 0 or more, got {self.seed}")


@dataclass(frozen=True)
class RunRow:
    """A run's mean over the topics compared, its t interval (ci_) and its
    percentile bootstrap interval, both at 1 - alpha."""

    run: str
    mean: float
    n_topics: int
    ci_low: float
    ci_high: float
    bootstrap_low: float
    bootstrap_high: float


@dataclass(frozen=True)
class PairRow:
    """One test of a (ranked above) against b; significant: p_adjusted <= alpha;
    identical: a and b have the same value on every topic compared, so that there
    is nothing to test (the t statistic and its p are then NaN)."""

    a: str
    b: str
    test: str
    statistic: float
    p_value: float
    p_adjusted: float
    mean_difference: float
    cohens_d: float
    significant: bool
    identical: bool = False


@dataclass(frozen=True)
class Excluded:
    """A topic left out of the comparison, and the runs without a value for it."""

    topic: str
    runs: tuple[str, ...]

    @property
    def reason(self) -> str:
        return f"no value for run {', '.join(self.runs)}: left out for every run"


@dataclass(frozen=True)
class Leaderboard:
    measure: str
    topics: tuple[str, ...]  # the topics compared
    runs: tuple[RunRow, ...]  # ranked
    pairs: tuple[PairRow, ...]  # test by test, in `options.tests` order
    excluded: tuple[Excluded, ...]
    options: Options

    def beaten(self, test: str) -> dict[str, list[str]]:
        """For each run, the runs ranked below it that it beats significantly:
        a higher mean and p_adjusted <= alpha by `test`."""
        means = {row.run: row.mean for row in self.runs}
        beaten: dict[str, list[str]] = {row.run: [] for row in self.runs}
        for pair in self.pairs:
            if pair.test == test and pair.significant and means[pair.a] > means[pair.b]:
                beaten[pair.a].append(pair.b)
        return beaten


def build_leaderboard(
    table: ScoreTable,
    options: Options | None = None,
    *,
    progress: Callable[[int], None] | None = None,
) -> Leaderboard:
    """Rank the runs of `table` and compare every pair by each of options.tests;
    `progress` is called with a count of pairs as Tukey's HSD goes through
    them in blocks (0.04 s for 80 runs, seconds only for several hundred)."""
    options = options or Options()
    if len(set(table.runs)) != len(table.runs):
        twice = next(run for run in table.runs if table.runs.count(run) > 1)
        raise LeaderboardError(f"two runs are named {twice!r}")
    if not table.runs:
        raise LeaderboardError("no runs")
    values = np.asarray(table.values, dtype=np.float64)
    missing = np.isnan(values)
    kept = ~missing.any(axis=0)
    excluded = tuple(
        Excluded(
            table.topics[topic],
            tuple(run for run, lacks in zip(table.runs, missing[:, topic], strict=True) if lacks),
        )
        for topic in np.flatnonzero(~kept)
    )
    if not kept.any():
        raise LeaderboardError("no topic has a value for every run")
    values = values[:, kept]
    topics = tuple(topic for topic, keep in zip(table.topics, kept, strict=True) if keep)

    means = intervals.topic_means(values)
    order = ranked(table.runs, means)
    runs = tuple(table.runs[run] for run in order)
    scores, means = values[order], means[order]
    confidence = 1 - options.alpha
    t_low, t_high = intervals.t_interval(scores, confidence)
    boot_low, boot_high = intervals.bootstrap_interval(
        scores, confidence, n_resamples=options.n_resamples, seed=options.seed
    )
    run_rows = tuple(
        RunRow(
            run=run,
            mean=float(means[k]),
            n_topics=len(topics),
            ci_low=float(t_low[k]),
            ci_high=float(t_high[k]),
            bootstrap_low=float(boot_low[k]),
            bootstrap_high=float(boot_high[k]),
        )
        for k, run in enumerate(runs)
    )

    a, b = paired.all_pairs(len(runs))
    diffs = scores[a] - scores[b]
    effects = paired.effect_sizes(diffs)
    identical = ~(diffs != 0).any(axis=1)
    pair_rows: list[PairRow] = []
    for test in options.tests:
        result = _run_test(test, scores, diffs, options, progress)
        adjusted = result.p_value if test == "tukey" else adjust(result.p_value, options.correction)
        pair_rows.extend(
            PairRow(
                a=runs[i],
                b=runs[j],
                test=test,
                statistic=float(statistic),
                p_value=float(p),
                p_adjusted=float(p_adjusted),
                mean_difference=float(difference),
                cohens_d=float(d),
                significant=bool(p_adjusted <= options.alpha),
                identical=bool(same),
            )
            for i, j, statistic, p, p_adjusted, difference, d, same in zip(
                a,
                b,
                result.statistic,
                result.p_value,
                adjusted,
                effects.mean_difference,
                effects.cohens_d,
                identical,
                strict=True,
            )
        )
    return Leaderboard(table.measure, topics, run_rows, tuple(pair_rows), excluded, options)


def _run_test(
    test: str,
    scores: np.ndarray,
    diffs: np.ndarray,
    options: Options,
    progress: Callable[[int], None] | None,
) -> paired.TestResult:
    match test:
        case "t":
            return paired.t_test(diffs)
        case "wilcoxon":
            return paired.wilcoxon_test(diffs)
        case "sign":
            return paired.sign_test(diffs)
        case "randomization":
            return paired.randomization_test(
                diffs, n_resamples=options.n_resamples, seed=options.seed
            )
        case "tukey":
            return tukey_hsd(scores, progress=progress)
    raise LeaderboardError(f"unknown test {test!r}")
