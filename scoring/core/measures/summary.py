"""How trec_eval summarises a measure over the topics of a run.

Each function takes the per-topic values of every run, shaped (topics,
runs, values) with 0 where a run lacks a topic, and returns (runs, values).
Sums run over topics in trec_eval's topic order, one term at a time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scoring.core.measures.numerics import libm, sequential_sum
from scoring.core.measures.rankings import Judgments


@dataclass(frozen=True)
class SummaryContext:
    """num_queries: (runs,) topics each run's values are averaged over."""

    num_queries: np.ndarray
    complete: bool
    judgments: Judgments
    run_tags: tuple[str, ...]


def mean(values: np.ndarray, context: SummaryContext) -> np.ndarray:
    totals = sequential_sum(values)
    queries = context.num_queries[:, None].astype(np.float64)
    return np.divide(totals, queries, out=totals, where=queries > 0)


def total(values: np.ndarray, context: SummaryContext) -> np.ndarray:
    return sequential_sum(values)


def geometric_mean(values: np.ndarray, context: SummaryContext) -> np.ndarray:
    """exp of the mean; the per-topic values are already logarithms. A run
    without topics keeps its sum, 0, as in trec_eval."""
    means = mean(values, context)
    return np.where(context.num_queries[:, None] > 0, libm(math.exp, means), means)
