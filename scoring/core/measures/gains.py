"""Gains per relevance label, and the ideal ranking built from them.

trec_eval's gain measures (ndcg, ndcg_rel, Rndcg, G, rbp) share one set-up
per topic: a gain for each label 0 .. highest judged label (the label itself
by default, or as given by `-m ndcg.1=3,2=9` pairs, which may also name
other labels), sorted by gain with C's qsort and a comparator that returns
the difference of two gains converted to an int. The ideal ranking then
takes the gains from the top of that order, each as many times as the topic
has judged documents with that label, and stops at the first gain that is
not positive.

The labels below the highest that no document has and no pair names are in
trec_eval's table too, with no documents, and they count: the top entry
(whose gain decides whether there is an ideal ranking at all) may be one of
them, and with a comparator that is not transitive (1.5 and 1 compare equal,
as do 1 and 0.5, but not 1.5 and 0.5) the place each entry ends up in
depends on every other. So they are kept, as ranges of labels
(`AbsentLabels`), and the table is sorted range by range: a run of entries
in order is left alone, which is all a merge sort does with it, and a merge
takes as many entries of a range as compare alike in one step. The cost
follows the number of pairs and judged labels, not the largest label
(trec_eval itself allocates a count for every label up to it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from functools import cached_property
from itertools import pairwise
from typing import NamedTuple

import numpy as np

from scoring.core.measures.numerics import log2_table, sequential_sum
from scoring.core.measures.rankings import Judgments, LabelCounts

Pairs = tuple[tuple[str, float], ...]
_C_INTEGER = re.compile(r"[+-]?[0-9]+")
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


class GainLevel(NamedTuple):
    level: int
    gain: float
    documents: int  # judged documents of the topic with this label


class AbsentLabels(NamedTuple):
    """Labels low .. high that no judged document has and no pair names: each
    an entry of its own, with the label as its gain and no documents."""

    low: int
    high: int


type Segment = GainLevel | AbsentLabels


def c_int(value: float) -> int:
    """C's conversion of a double to an int, as x86-64 does it (cvttsd2si):
    toward zero, and INT_MIN for NaN or a value out of range."""
    if math.isnan(value):
        return _INT_MIN
    whole = math.trunc(value) if math.isfinite(value) else _INT_MIN
    return whole if _INT_MIN <= whole <= _INT_MAX else _INT_MIN


def c_divide(numerator: float, denominator: float) -> float:
    """IEEE division, as C does it: x/0 is an infinity, 0/0 NaN."""
    if denominator == 0:
        if numerator == 0 or math.isnan(numerator):
            return math.nan
        return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)
    return numerator / denominator


def compare_gains(first: float, second: float) -> int:
    """trec_eval's comp_rel_gain: the difference of the gains, as an int."""
    return c_int(first - second)


class GainTable:
    """trec_eval's gain table of one topic, in the order its qsort leaves it.

    segments: GainLevel entries and ranges of absent labels, in sorted order.
    scale: (low, high) when the gains are mapped onto [0, 1] (rbp), else None.
    """

    def __init__(self, segments: list[Segment], scale: tuple[float, float] | None = None) -> None:
        self.segments = segments
        self.scale = scale
        self._first_gain: dict[int, float] = {}
        for segment in segments:
            if isinstance(segment, GainLevel):
                self._first_gain.setdefault(segment.level, self._scaled(segment.gain))
        ranges = [segment for segment in segments if isinstance(segment, AbsentLabels)]
        self._ranges = sorted(ranges)

    def _scaled(self, gain: float) -> float:
        if self.scale is None:
            return gain
        low, high = self.scale
        return c_divide(gain - low, high - low)

    def gain_of(self, label: int) -> float:
        """The gain of a judgment: that of the first entry with its label, else 0."""
        if label in self._first_gain:
            return self._first_gain[label]
        for absent in self._ranges:  # few: between the judged and the named labels
            if absent.low <= label <= absent.high:
                return self._scaled(float(label))
        return 0.0

    @property
    def top(self) -> float:
        """The gain of the last entry (0 for an empty table)."""
        if not self.segments:
            return 0.0
        last = self.segments[-1]
        return self._scaled(last.gain if isinstance(last, GainLevel) else float(last.high))

    def entries(self) -> Iterator[GainLevel]:
        """Every entry, absent labels written out (for tests: as the C table holds them)."""
        for segment in self.segments:
            if isinstance(segment, GainLevel):
                yield segment._replace(gain=self._scaled(segment.gain))
            else:
                for label in range(segment.low, segment.high + 1):
                    yield GainLevel(label, self._scaled(float(label)), 0)

    def unit_range(self) -> GainTable:
        """rbp's gains: mapped linearly onto [0, 1] when any lies outside it.

        (trec_eval leaves its running min and max uninitialised; its outputs
        match the true min and max of the gains.)
        """
        gains = [
            gain
            for segment in self.segments
            for gain in (
                (segment.gain,)
                if isinstance(segment, GainLevel)
                else (float(segment.low), float(segment.high))
            )
        ]
        # As C's running min and max: a NaN gain never compares, so never counts.
        gains = [gain for gain in gains if not math.isnan(gain)]
        if not gains or (min(gains) >= 0 and max(gains) <= 1):
            return self
        return GainTable(self.segments, (min(gains), max(gains)))

    def ideal_walk(self) -> tuple[float, list[float]]:
        """(first gain, walk): the gain the ideal ranking holds at each rank.

        The walk lists the positive gains and ends with the gain (<= 0, or 0 once
        the table is exhausted) at which trec_eval stops; it is empty when the
        first gain, that of the top entry, is not positive.
        """
        top = self.top
        if not top > 0:
            return top, []
        walk: list[float] = []
        for segment in reversed(self.segments):
            if isinstance(segment, AbsentLabels) or segment.documents == 0:
                continue
            gain = self._scaled(segment.gain)
            if not gain > 0:
                return top, [*walk, gain]
            walk.extend([gain] * segment.documents)
        return top, [*walk, 0.0]


def gain_table(pairs: Pairs, level_counts: dict[int, int], num_rel_levels: int) -> GainTable:
    """trec_eval's gain table of one topic (setup_gains), sorted as its qsort sorts it.

    level_counts: the judged documents at each label of the topic (labels >= 0
    with documents); num_rel_levels: the highest of them + 1.
    """
    given = [GainLevel(int(name), gain, 0) for name, gain in pairs if _C_INTEGER.fullmatch(name)]
    named: dict[int, int] = {}
    for index, entry in enumerate(given):
        named.setdefault(entry.level, index)
    judged: list[Segment] = []  # then, in label order, the labels no pair names
    low = 0  # the first label of the current range of absent ones
    for label in sorted(level_counts):
        if label in named:  # the first pair naming it gets its documents
            given[named[label]] = given[named[label]]._replace(documents=level_counts[label])
            continue
        judged.extend(_absent(low, label - 1, named))
        judged.append(GainLevel(label, float(label), level_counts[label]))
        low = label + 1
    judged.extend(_absent(low, num_rel_levels - 1, named))
    return GainTable(_merge_sort([*given, *judged]))


def _absent(low: int, high: int, named: dict[int, int]) -> Iterator[AbsentLabels]:
    """The labels low .. high that no pair names, as ranges."""
    for label in sorted(level for level in named if low <= level <= high):
        if low < label:
            yield AbsentLabels(low, label - 1)
        low = label + 1
    if low <= high:
        yield AbsentLabels(low, high)


def _size(segment: Segment) -> int:
    return 1 if isinstance(segment, GainLevel) else segment.high - segment.low + 1


def _first(segment: Segment) -> float:
    return segment.gain if isinstance(segment, GainLevel) else float(segment.low)


def _last(segment: Segment) -> float:
    return segment.gain if isinstance(segment, GainLevel) else float(segment.high)


def _merge_sort(segments: list[Segment]) -> list[Segment]:
    """glibc's qsort of the entries, range by range: a top-down merge sort, which
    gives one order even for a comparator that is not transitive."""
    return _sort(segments, sum(map(_size, segments)))


def _sort(segments: list[Segment], n: int) -> list[Segment]:
    # Entries whose gains never decrease: every comparison a merge makes of them
    # (one on the left with one on the right) is <= 0, so the sort leaves them.
    if n <= 1 or all(_last(a) <= _first(b) for a, b in pairwise(segments)):
        return segments
    half = n // 2
    left, right = _split(segments, half)
    return _merge(_sort(left, half), _sort(right, n - half))


def _split(segments: list[Segment], at: int) -> tuple[list[Segment], list[Segment]]:
    """The first `at` entries, and the others."""
    for index, segment in enumerate(segments):
        if at == 0:
            return segments[:index], segments[index:]
        size = _size(segment)
        if at < size:  # inside a range of absent labels
            assert isinstance(segment, AbsentLabels)
            head = AbsentLabels(segment.low, segment.low + at - 1)
            tail = AbsentLabels(segment.low + at, segment.high)
            return [*segments[:index], head], [tail, *segments[index + 1 :]]
        at -= size
    return list(segments), []


def _merge(left: list[Segment], right: list[Segment]) -> list[Segment]:
    """glibc's msort merge: the left entry first while compare(left, right) <= 0.

    The entries of a range come in one step, as many as the comparison with
    the other side's first entry lets through (`_taken_from_left`,
    `_taken_from_right`).
    """
    merged: list[Segment] = []
    left, right = list(left), list(right)
    i = j = 0
    while i < len(left) and j < len(right):
        a, b = left[i], right[j]
        if compare_gains(_first(a), _first(b)) <= 0:
            if isinstance(a, GainLevel):
                merged.append(a)
                i += 1
                continue
            taken = _taken_from_left(a, _first(b))
            merged.append(AbsentLabels(a.low, taken))
            if taken == a.high:
                i += 1
            else:
                left[i] = AbsentLabels(taken + 1, a.high)
        else:
            if isinstance(b, GainLevel):
                merged.append(b)
                j += 1
                continue
            taken = _taken_from_right(b, _first(a))
            merged.append(AbsentLabels(b.low, taken))
            if taken == b.high:
                j += 1
            else:
                right[j] = AbsentLabels(taken + 1, b.high)
    return merged + left[i:] + right[j:]


def _taken_from_left(labels: AbsentLabels, other: float) -> int:
    """The last label of the run from labels.low on for which compare(label, other)
    <= 0 (true at labels.low), the left range's entries the merge takes in turn.

    The difference label - other rises with the label; its conversion to int is
    <= 0 below 1 and again from 2**31 on (INT_MIN), and NaN gives INT_MIN: a
    range starting at 2**31 or at NaN goes whole, else up to the difference 1.
    """
    start = float(labels.low) - other
    if math.isnan(start) or start >= 2**31:
        return labels.high
    return _last_holding(labels, lambda label: float(label) - other < 1)


def _taken_from_right(labels: AbsentLabels, other: float) -> int:
    """The last label of the run from labels.low on for which compare(other, label)
    > 0 (true at labels.low): other - label falls as the label rises, from
    below 2**31 (where the int would be INT_MIN), and the run ends below 1."""
    return _last_holding(labels, lambda label: other - float(label) >= 1)


def _last_holding(labels: AbsentLabels, holds: Callable[[int], bool]) -> int:
    """The last label for which `holds`, true at labels.low and false after it
    stops being true (a binary search)."""
    low, high = labels.low, labels.high
    if holds(high):
        return high
    while high - low > 1:  # holds(low), not holds(high)
        middle = (low + high) // 2
        if holds(middle):
            low = middle
        else:
            high = middle
    return low


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
            table = gain_table(pairs, counts.level_counts(topic), int(counts.num_rel_levels[topic]))
            if unit_range:
                table = table.unit_range()
            self.table[topic] = [table.gain_of(label) for label in labels]
            top, walk = table.ideal_walk()
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
