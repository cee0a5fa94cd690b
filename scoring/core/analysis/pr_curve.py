"""A run's interpolated precision-recall curve on one topic, at every recall level
it reaches. Pure core: NumPy, no Django.

trec_eval's `iprec_at_recall` gives the curve at 11 levels only; this is the
whole curve those 11 points are read from. The run is ranked by the decided
rule (`workbench.core.ranking_rule`: score descending, then docno descending) and cut
at `max_docs` (trec_eval's -M, 1000 by default). At the k-th relevant
document retrieved, recall is k / R (R: the topic's relevant documents) and
precision k / rank; the interpolated precision at recall r is the highest
precision at any rank whose recall is r or more (0 past the last recall
reached).

trec_eval 10's iprec_at_recall reads this curve at lround(f x R) / R rather
than at f (its level f stands for the lround(f x R)-th relevant document):
with R = 2, its 0.6 and 0.7 are this curve at 0.5. The leaderboard's 11-point
picture keeps trec_eval's numbers; this curve is the one-topic picture.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from workbench.core.ranking_rule import rank_order


@dataclass(frozen=True)
class PrecisionRecall:
    """recall: 0, then k / R for each relevant document retrieved (ascending);
    precision: the interpolated precision at each of those recall levels."""

    recall: np.ndarray
    precision: np.ndarray

    def curve_at(self, levels: Sequence[float]) -> np.ndarray:
        """The interpolated precision at each of `levels` (0 past the last recall)."""
        # The first point whose recall is at least the level: the curve is a
        # non-increasing step function of recall.
        at = np.searchsorted(self.recall, np.asarray(levels, dtype=np.float64), side="left")
        padded = np.append(self.precision, 0.0)
        return padded[np.minimum(at, len(self.precision))]


def precision_recall(
    docnos: Sequence[str],
    scores: Sequence[float],
    relevant: Collection[str],
    *,
    max_docs: int = 1000,
) -> PrecisionRecall:
    """The curve of one run's ranking of one topic (`docnos` with their `scores`,
    each docno once) against the topic's `relevant` documents."""
    if max_docs < 1:
        raise ValueError(f"max_docs must be at least 1, not {max_docs}")
    n_relevant = len(relevant)
    if not n_relevant:
        return PrecisionRecall(np.array([0.0]), np.array([0.0]))
    ranked = rank_order(
        np.zeros(len(docnos), dtype=np.int64),
        np.asarray(scores, dtype=np.float64),
        np.asarray(list(docnos), dtype=str),
        max_depth=max_docs,
    )
    hits = np.array([docnos[row] in relevant for row in ranked.order], dtype=bool)
    found = np.cumsum(hits)
    ranks = np.arange(1, len(hits) + 1)
    precision_at_hit = (found / ranks)[hits]
    # Interpolated: the best precision at this recall or any higher one.
    interpolated = np.maximum.accumulate(precision_at_hit[::-1])[::-1]
    recall = np.arange(1, len(precision_at_hit) + 1) / n_relevant
    top = interpolated[0] if len(interpolated) else 0.0
    return PrecisionRecall(np.concatenate([[0.0], recall]), np.concatenate([[top], interpolated]))
