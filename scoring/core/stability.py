"""Is the budget enough? How the ranking of the runs settles as judging proceeds. Pure core.

The labels are taken in the order they were first made. At each checkpoint
(after every tenth of them, by default) the runs are scored on the labels
made by then, and that ranking of the runs is compared with the ranking
under every label made so far by Kendall's tau-b
(`scoring.core.analysis.correlation.kendall_tau`). A label counts with the value it
has now: revisions are not replayed backwards, because the question is
whether *more* judgments still change the ranking.

Frames: labels have `query_id, doc_id, relevance` and `labelled_at` (any
orderable value; rows that have none, such as imported qrels, come first,
in the order given). A `score` callable turns a labels frame into each
run's mean score.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pandas as pd

from scoring.core.analysis.correlation import kendall_tau

Scores = Mapping[str, float]
DEFAULT_STEPS = 10
SETTLED_TAU = 0.9  # Voorhees' customary line for "the same ranking"


@dataclass(frozen=True)
class Checkpoint:
    labelled: int  # labels made by this checkpoint
    share: float  # of every label made so far
    scores: dict[str, float]
    tau: float | None  # against the ranking now; None when undefined


@dataclass(frozen=True)
class Stability:
    measure: str
    checkpoints: list[Checkpoint]

    @property
    def now(self) -> Checkpoint:
        return self.checkpoints[-1]

    def settled_at(self, threshold: float = SETTLED_TAU) -> Checkpoint | None:
        """The first checkpoint before now from which tau stays at or above
        `threshold` (now's own tau, 1 by definition, says nothing)."""
        settled = None
        for checkpoint in self.checkpoints[:-1]:
            if checkpoint.tau is not None and checkpoint.tau >= threshold:
                settled = settled or checkpoint
            else:
                settled = None
        return settled


def checkpoint_sizes(total: int, steps: int = DEFAULT_STEPS) -> list[int]:
    """How many labels each checkpoint holds: ceil(total * k / steps), k = 1..steps,
    without repeats; the last is `total`."""
    if total <= 0:
        return []
    return sorted({math.ceil(total * k / steps) for k in range(1, steps + 1)})


def ranking_stability(
    labels: pd.DataFrame,
    score: Callable[[pd.DataFrame], Scores],
    *,
    measure: str,
    steps: int = DEFAULT_STEPS,
) -> Stability:
    """Score the runs at each checkpoint and compare each ranking with the one now."""
    ordered = _in_labelling_order(labels)
    sizes = checkpoint_sizes(len(ordered), steps)
    scored = [dict(score(ordered.iloc[:size])) for size in sizes]
    now = scored[-1] if scored else {}
    checkpoints = [
        Checkpoint(
            labelled=size,
            share=size / len(ordered),
            scores=scores,
            tau=kendall_tau(scores, now),
        )
        for size, scores in zip(sizes, scored, strict=True)
    ]
    return Stability(measure=measure, checkpoints=checkpoints)


@dataclass(frozen=True)
class Spread:
    """A run's mean over topics and its standard error (sd / sqrt(topics))."""

    mean: float
    stderr: float | None
    topics: int


def spread_over_topics(per_topic: pd.DataFrame) -> dict[str, Spread]:
    """Per run: the mean of `value` over its topics and the standard error of that
    mean, from a frame of `run_id, query_id, value` (one row per topic)."""
    result = {}
    for run, values in per_topic.groupby("run_id", sort=True)["value"]:
        n = len(values)
        stderr = float(values.std(ddof=1)) / math.sqrt(n) if n > 1 else None
        result[str(run)] = Spread(float(values.mean()), stderr, n)
    return result


def _in_labelling_order(labels: pd.DataFrame) -> pd.DataFrame:
    """Rows without a time first (in the order given), then by time; stable."""
    untimed = labels["labelled_at"].isna()
    return pd.concat(
        [labels[untimed], labels[~untimed].sort_values("labelled_at", kind="stable")],
        ignore_index=True,
    )
