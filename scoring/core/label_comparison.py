"""Run rankings under two qrels (human labels against machine labels, issue 25
item 6's calibration report): do the same runs lead, and do the leaderboard's
significant differences survive? Pure core.

- `compare_rankings`: two {run: mean score} mappings of one measure, highest
  best, compared on the runs both have. Kendall's tau is tau-b (ties counted
  as tau-b does; `scoring.core.analysis.correlation.kendall_tau`, equal to
  `scipy.stats.kendalltau`), tau_AP is Yilmaz et al.'s with the first mapping
  (human) as the reference. The order of runs is the leaderboard's
  (`analysis.ranks.ranked`: equal scores by run tag).
- `compare_significance`: two sets of pair tests, {(run_a, run_b): PairTest},
  as the leaderboard's `PairRow`s give them (`pair_tests`). A pair
  significant under both agrees (same direction) or flips (opposite); one
  significant under the first only vanishes, under the second only appears.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np

from scoring.core.analysis.correlation import kendall_tau, tau_ap
from scoring.core.analysis.ranks import ranked

TOPS = (3, 5)


@dataclass(frozen=True)
class TopOverlap:
    """The k first runs under each qrels: how many they share, and whether they
    are the same set."""

    k: int
    shared: int
    identical: bool
    first: tuple[str, ...]
    second: tuple[str, ...]


@dataclass(frozen=True)
class RankingComparison:
    """Two rankings of the runs both scorings have (n_runs of them). tau and
    tau_ap are None where undefined (fewer than two runs, or a constant scoring
    for tau); leaders are None with no runs."""

    n_runs: int
    kendall_tau_b: float | None
    tau_ap: float | None
    first_leader: str | None
    second_leader: str | None
    same_leader: bool
    tops: tuple[TopOverlap, ...]
    only_first: tuple[str, ...]
    only_second: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["tops"] = [
            {**asdict(t), "first": list(t.first), "second": list(t.second)} for t in self.tops
        ]
        data["only_first"], data["only_second"] = list(self.only_first), list(self.only_second)
        return data


def _order(scores: Mapping[str, float], runs: list[str]) -> list[str]:
    values = np.array([scores[run] for run in runs], dtype=np.float64)
    return [runs[i] for i in ranked(runs, values)]


def compare_rankings(
    first: Mapping[str, float], second: Mapping[str, float], *, tops: Iterable[int] = TOPS
) -> RankingComparison:
    """The run rankings by `first` (the reference, human qrels) and `second`."""
    runs = sorted(set(first) & set(second))
    a = {run: float(first[run]) for run in runs}
    b = {run: float(second[run]) for run in runs}
    order_a, order_b = _order(a, runs), _order(b, runs)
    overlaps = []
    for k in tops:
        top_a, top_b = tuple(order_a[:k]), tuple(order_b[:k])
        shared = len(set(top_a) & set(top_b))
        overlaps.append(TopOverlap(k, shared, set(top_a) == set(top_b), top_a, top_b))
    leader_a = order_a[0] if order_a else None
    leader_b = order_b[0] if order_b else None
    return RankingComparison(
        n_runs=len(runs),
        kendall_tau_b=kendall_tau(a, b),
        tau_ap=tau_ap(a, b),
        first_leader=leader_a,
        second_leader=leader_b,
        same_leader=leader_a is not None and leader_a == leader_b,
        tops=tuple(overlaps),
        only_first=tuple(sorted(set(first) - set(second))),
        only_second=tuple(sorted(set(second) - set(first))),
    )


@dataclass(frozen=True)
class PairTest:
    """One pair's test: significant or not, and the sign of mean(a) - mean(b)
    (-1, 0 or 1)."""

    significant: bool
    sign: int


class _PairRowLike(Protocol):
    a: str
    b: str
    test: str
    mean_difference: float
    significant: bool


def pair_tests(rows: Iterable[_PairRowLike], test: str) -> dict[tuple[str, str], PairTest]:
    """The leaderboard's pair rows of one test as {(a, b): PairTest}."""
    return {
        (row.a, row.b): PairTest(bool(row.significant), int(np.sign(row.mean_difference)))
        for row in rows
        if row.test == test
    }


@dataclass(frozen=True)
class SignificanceComparison:
    """Counts of run pairs tested under both qrels: agree (significant under
    both, same direction), flip (significant under both, opposite directions),
    vanish (significant under the first only), appear (under the second only),
    neither (significant under none). unmatched: pairs tested under one only."""

    n_pairs: int
    agree: int
    flip: int
    vanish: int
    appear: int
    neither: int
    unmatched: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _canonical(tests: Mapping[tuple[str, str], PairTest]) -> dict[tuple[str, str], PairTest]:
    """Each pair keyed (lower tag, higher tag), its sign turned to match."""
    result = {}
    for (a, b), test in tests.items():
        if a == b:
            raise ValueError(f"a pair test compares run {a!r} with itself")
        key, sign = ((a, b), test.sign) if a < b else ((b, a), -test.sign)
        if key in result:
            raise ValueError(f"runs {key[0]!r} and {key[1]!r} are tested twice")
        result[key] = PairTest(test.significant, sign)
    return result


def compare_significance(
    first: Mapping[tuple[str, str], PairTest], second: Mapping[tuple[str, str], PairTest]
) -> SignificanceComparison:
    """How the significant pairs under `first` (human qrels) fare under `second`.
    A pair may be given as (a, b) in one and (b, a) in the other."""
    a, b = _canonical(first), _canonical(second)
    common = set(a) & set(b)
    counts = {"agree": 0, "flip": 0, "vanish": 0, "appear": 0, "neither": 0}
    for key in common:
        x, y = a[key], b[key]
        if x.significant and y.significant:
            counts["agree" if x.sign == y.sign else "flip"] += 1
        elif x.significant:
            counts["vanish"] += 1
        elif y.significant:
            counts["appear"] += 1
        else:
            counts["neither"] += 1
    return SignificanceComparison(n_pairs=len(common), unmatched=len(set(a) ^ set(b)), **counts)
