"""Gains per relevance label, and the ideal ranking built from them.

trec_eval's gain measures (ndcg, ndcg_rel, Rndcg, G, rbp) share one set-up
per topic: a gain for each label 0 .. highest judged label (the label itself
by default, or as given by `-m ndcg.1=3,2=9` pairs, which may also name
other labels), sorted by gain with C's qsort and a comparator that truncates
the difference to an int. The ideal ranking then takes the gains from the
top of that order, each as many times as the topic has judged documents
with that label, and stops at the first gain that is not positive.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from scoring.measures.numerics import log2_table, sequential_sum
from scoring.measures.rankings import Judgments, LabelCounts

Pairs = tuple[tuple[str, float], ...]
_C_INTEGER = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class GainLevel:
    level: int
    gain: float
    count: int  # judged documents of the topic with this label


def gain_levels(pairs: Pairs, level_counts: dict[int, int], num_rel_levels: int) -> list[GainLevel]:
    """trec_eval's gain table of one topic, in the order its qsort leaves it."""
    levels = [GainLevel(int(name), gain, 0) for name, gain in pairs if _C_INTEGER.fullmatch(name)]
    for label in range(num_rel_levels):
        count = level_counts.get(label, 0)
        given = next((i for i, entry in enumerate(levels) if entry.level == label), None)
        if given is None:
            levels.append(GainLevel(label, float(label), count))
        else:
            levels[given] = replace(levels[given], count=count)
    return merge_sort(levels, lambda a, b: int(a.gain - b.gain))


def merge_sort[T](items: Sequence[T], compare: Callable[[T, T], int]) -> list[T]:
    """glibc's qsort (a top-down merge sort): the same order even for a comparator
    that is not transitive, such as trec_eval's truncated gain difference."""
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    left, right = merge_sort(items[:half], compare), merge_sort(items[half:], compare)
    merged: list[T] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if compare(left[i], right[j]) <= 0:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            j += 1
    return merged + left[i:] + right[j:]


def gain_of(levels: Sequence[GainLevel], label: int) -> float:
    """The gain of a judgment: that of the first entry with its label, else 0."""
    return next((entry.gain for entry in levels if entry.level == label), 0.0)


def ideal_walk(levels: Sequence[GainLevel]) -> tuple[float, list[float]]:
    """(first gain, walk): the gain the ideal ranking holds at each rank.

    The walk lists the positive gains and ends with the gain (<= 0, or 0 once
    the table is exhausted) at which trec_eval stops; it is empty when the
    first gain, that of the top entry, is not positive.
    """
    top = levels[-1].gain if levels else 0.0
    if not top > 0:
        return top, []
    walk: list[float] = []
    for entry in reversed(levels):
        if entry.count == 0:
            continue
        if not entry.gain > 0:
            return top, [*walk, entry.gain]
        walk.extend([entry.gain] * entry.count)
    return top, [*walk, 0.0]


class TopicGains:
    """One gain setting applied to every topic of the qrels, for one label column.

    table: (topics, label values) the gain of each judgment a ranking can hold.
    """

    def __init__(self, counts: LabelCounts, pairs: Pairs, *, unit_range: bool = False) -> None:
        n_topics, labels = counts.n_topics, counts.label_values.tolist()
        self.table = np.zeros((n_topics, len(labels)))
        self.top = np.zeros(n_topics)
        self.walks: list[np.ndarray] = []
        for topic in range(n_topics):
            levels = gain_levels(
                pairs, counts.level_counts(topic), int(counts.num_rel_levels[topic])
            )
            if unit_range:
                levels = _rescaled_to_unit_range(levels)
            self.table[topic] = [gain_of(levels, label) for label in labels]
            top, walk = ideal_walk(levels)
            self.top[topic] = top
            self.walks.append(np.array(walk, dtype=np.float64))

    @cached_property
    def ideal_length(self) -> np.ndarray:
        """Number of positive gains in each topic's ideal ranking."""
        return np.array([max(len(walk) - 1, 0) for walk in self.walks], dtype=np.int64)

    @cached_property
    def ideal_gain(self) -> np.ndarray:
        """(ranks, topics) the positive ideal gains, 0 below them."""
        matrix = np.zeros((int(self.ideal_length.max(initial=0)), len(self.walks)))
        for topic, (walk, length) in enumerate(zip(self.walks, self.ideal_length, strict=True)):
            matrix[:length, topic] = walk[:length]
        return matrix

    @cached_property
    def ideal_dcg_so_far(self) -> np.ndarray:
        """(ranks, topics) ideal DCG down to each rank; past a topic's last ideal
        document the rows repeat its total. One row at least (zeros without gains)."""
        gains = self.ideal_gain
        discount = log2_table(len(gains) + 2)[2:, None]
        if not len(gains):
            return np.zeros((1, len(self.walks)))
        return np.cumsum(gains / discount, axis=0)

    @cached_property
    def ideal_dcg(self) -> np.ndarray:
        return self.ideal_dcg_so_far[-1]

    def ideal_dcg_at(self, topic: np.ndarray, ranks: np.ndarray) -> np.ndarray:
        """Ideal DCG of the first `ranks` ideal documents, per topic; 0 for 0 ranks."""
        cumulative = self.ideal_dcg_so_far
        row = np.minimum(ranks, len(cumulative)) - 1
        return np.where(ranks > 0, cumulative[np.maximum(row, 0), topic], 0.0)

    @cached_property
    def ideal_gain_total(self) -> np.ndarray:
        return sequential_sum(self.ideal_gain)

    @cached_property
    def gain_changes(self) -> np.ndarray:
        """(changes, topics) how many ideal documents precede each change of gain; -1 pads.

        A change before the first document is left out: it has no ideal DCG yet.
        """
        changes = []
        for top, walk in zip(self.top, self.walks, strict=True):
            before = np.concatenate([[top], walk[:-1]])
            ranks = np.flatnonzero(walk != before)
            changes.append(ranks[ranks > 0])
        matrix = np.full((max(map(len, changes), default=0), len(changes)), -1, dtype=np.int64)
        for topic, ranks in enumerate(changes):
            matrix[: len(ranks), topic] = ranks
        return matrix


def _rescaled_to_unit_range(levels: list[GainLevel]) -> list[GainLevel]:
    """rbp's gains: mapped linearly onto [0, 1] when any lies outside it.

    (trec_eval leaves its running min and max uninitialised; its outputs match
    the true min and max of the gains.)
    """
    if not levels:
        return levels
    low = min(entry.gain for entry in levels)
    high = max(entry.gain for entry in levels)
    if low >= 0 and high <= 1:
        return levels
    return [replace(entry, gain=(entry.gain - low) / (high - low)) for entry in levels]


def topic_gains(
    judgments: Judgments, pairs: Pairs, *, unit_range: bool = False, column: str = "relevance"
) -> TopicGains:
    """The (cached) gains of `pairs` for every topic of `judgments`, on the labels of
    `column` (relevance, or another label column such as an aspect)."""
    key = ("gains", pairs, unit_range, column)
    if key not in judgments.derived:
        counts = judgments.label_counts(column)
        judgments.derived[key] = TopicGains(counts, pairs, unit_range=unit_range)
    gains = judgments.derived[key]
    assert isinstance(gains, TopicGains)
    return gains
