"""The built-in `lexical` machine assessor's maths: BM25 of each pooled document
against the topic, mapped onto the schema's grades by cut points. Pure core.

A baseline that needs no model (issue 25 item 7), named as such wherever it is
reported: term overlap is not relevance.

- `bm25_scores`: BM25 with Anserini's defaults k1 = 0.9, b = 0.4 and Lucene's
  (>= 8) formula: for each query token t (a repeated token counts again),
  idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl)), with Lucene's
  idf(t) = log(1 + (N - n_t + 0.5) / (n_t + 0.5)), never negative. Unlike
  Lucene, document lengths are exact (Lucene stores them lossily in one byte),
  and there is no (k1 + 1) factor in the numerator (Lucene 8 dropped it: a
  constant factor changes no order and no fitted cut), and no stemming
  (Anserini's default analyzer adds Porter's). The documents given are
  the collection: N, n_t and avgdl come from them (the topic's pool).
- `grades_from_scores`: a document's grade is levels[k], k the number of cut
  points its score is strictly above.
- `default_thresholds`: the cut points with no human labels (rule in its docstring).
- `fit_thresholds`: the cut points that maximise plain accuracy against human
  grades (rule in its docstring).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import pairwise

import numpy as np

K1 = 0.9
B = 0.4

# A small English stop list (Lucene's EnglishAnalyzer's, which Anserini uses).
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)

_TOKEN = re.compile(r"\w+", re.UNICODE)

# The share of documents above the lowest grade when no human labels exist.
DEFAULT_ABOVE_LOWEST = 0.3


def tokens(text: str) -> list[str]:
    """Lower-case \\w+ tokens (Unicode), stop words removed."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOP_WORDS]


def bm25_scores(query: str, documents: Mapping[str, str]) -> dict[str, float]:
    """BM25 (k1 = 0.9, b = 0.4, Anserini's defaults; Lucene's idf) of each
    document against the query, the documents given being the collection.

    An empty collection gives {}; a query with no tokens (or only stop words)
    scores every document 0.
    """
    bags = {doc_id: Counter(tokens(text)) for doc_id, text in documents.items()}
    if not bags:
        return {}
    n_docs = len(bags)
    lengths = {doc_id: sum(bag.values()) for doc_id, bag in bags.items()}
    average = sum(lengths.values()) / n_docs
    query_tokens = tokens(query)
    idf = {}
    for term in set(query_tokens):
        having = sum(1 for bag in bags.values() if term in bag)
        idf[term] = math.log(1 + (n_docs - having + 0.5) / (having + 0.5))
    scores = {}
    for doc_id, bag in bags.items():
        norm = K1 * (1 - B + B * lengths[doc_id] / average) if average > 0 else K1
        score = 0.0
        for term in query_tokens:
            tf = bag.get(term, 0)
            if tf:
                score += idf[term] * tf / (tf + norm)
        scores[doc_id] = score
    return scores


def _check_levels(levels: Sequence[int]) -> list[int]:
    result = [int(level) for level in levels]
    if len(result) < 2 or result != sorted(set(result)):
        raise ValueError(f"levels must be at least two distinct grades, ascending; got {result}")
    return result


def grades_from_scores(
    scores: Mapping[str, float], levels: Sequence[int], thresholds: Sequence[float]
) -> dict[str, int]:
    """Each document's grade: levels[k], k the number of cut points its score is
    strictly above (so a score equal to a cut point stays below it)."""
    grades = _check_levels(levels)
    cuts = [float(t) for t in thresholds]
    if len(cuts) != len(grades) - 1:
        raise ValueError(f"{len(grades)} levels need {len(grades) - 1} cut points, got {len(cuts)}")
    if cuts != sorted(cuts):
        raise ValueError(f"cut points must be ascending, got {cuts}")
    return {doc_id: grades[sum(score > cut for cut in cuts)] for doc_id, score in scores.items()}


def default_thresholds(scores: Sequence[float], levels: Sequence[int]) -> list[float]:
    """The cut points with no human labels: the top 30% of the scores get a
    grade above the lowest, shared evenly by the higher grades.

    Cut k (k = 1 .. L - 1 of L levels) is the (1 - 0.3 * (L - k) / (L - 1))
    quantile of the scores (linear interpolation): binary, the 0.7 quantile
    (the top 30% relevant); three grades, the 0.7 and 0.85 quantiles. As grades
    go to scores strictly above a cut, tied scores stay together (all-zero
    scores all get the lowest grade). With no scores every cut is 0.
    """
    count = len(_check_levels(levels))
    if len(scores) == 0:
        return [0.0] * (count - 1)
    values = np.asarray(scores, dtype=np.float64)
    quantiles = [1 - DEFAULT_ABOVE_LOWEST * (count - k) / (count - 1) for k in range(1, count)]
    return [float(q) for q in np.quantile(values, quantiles)]


def fit_thresholds(
    scores: Sequence[float], grades: Sequence[int], levels: Sequence[int]
) -> list[float]:
    """The L - 1 ascending cut points that maximise balanced accuracy (the mean
    over the grades the humans used of the share of that grade's documents to
    which `grades_from_scores` gives it) on the labelled documents; scores[i] is
    the score of the document labelled grades[i]. Balanced, not plain: with 90%
    of the documents not relevant, plain accuracy is best served by calling
    everything not relevant, a baseline that tells nothing.

    Exact, by dynamic programming over the distinct scores in ascending order
    and the grades the humans used. A fitted cut lies halfway between the two
    distinct scores it separates (at the lower of two adjacent floats; 1 below
    the lowest score when every document is above it, at the highest when
    none is). Deterministic: among equally accurate cuts, each level starts
    as late (as high) as possible.

    Sparse labels: a gap between two consecutive levels is fitted only when the
    humans used both; any other gap (a level the humans never used, fewer than
    two levels used, no labels at all) takes `default_thresholds(scores, levels)`'s
    cut, moved if need be between its fitted neighbours so that the cuts stay ascending.
    """
    all_levels = _check_levels(levels)
    if len(scores) != len(grades):
        raise ValueError(f"{len(scores)} scores but {len(grades)} grades")
    unknown = sorted({int(g) for g in grades} - set(all_levels))
    if unknown:
        raise ValueError(f"grades {unknown} are not among the levels {all_levels}")
    defaults = default_thresholds(scores, all_levels)
    present = sorted({int(g) for g in grades})
    if len(present) < 2:
        return defaults
    fitted = _fit_present(np.asarray(scores, dtype=np.float64), [int(g) for g in grades], present)
    index = {level: i for i, level in enumerate(all_levels)}
    cuts: list[float | None] = [None] * (len(all_levels) - 1)
    for (low, high), fitted_cut in zip(pairwise(present), fitted, strict=True):
        if index[high] == index[low] + 1:
            cuts[index[low]] = fitted_cut
    result = []
    for k, cut in enumerate(cuts):
        if cut is not None:
            result.append(cut)
            continue
        below = [c for c in cuts[:k] if c is not None]
        above = [c for c in cuts[k + 1 :] if c is not None]
        value = defaults[k]
        if below:
            value = max(value, max(below))
        if above:
            value = min(value, min(above))
        result.append(value)
    return result


def _fit_present(scores: np.ndarray, grades: list[int], present: list[int]) -> list[float]:
    """Cut points between consecutive `present` grades maximising balanced accuracy."""
    distinct, group = np.unique(scores, return_inverse=True)
    m, levels = len(distinct), len(present)
    position = {level: j for j, level in enumerate(present)}
    counts = np.zeros((m, levels), dtype=object)
    for g, grade in zip(group, grades, strict=True):
        counts[int(g), position[grade]] += 1
    # A match of grade j weighs 1 / n_j, scaled to exact integers (Python ints:
    # the product of the other grades' sizes), so that ties stay exact.
    sizes = counts.sum(axis=0)
    total = math.prod(sizes)
    counts = counts * np.array([total // size for size in sizes], dtype=object)
    # best[j][g]: most weighted matches with groups < g at levels <= j, nondecreasing.
    best = np.zeros((levels, m + 1), dtype=object)
    best[0, 1:] = np.cumsum(counts[:, 0])
    for j in range(1, levels):
        for g in range(1, m + 1):
            best[j, g] = max(best[j - 1, g], best[j, g - 1] + counts[g - 1, j])
    # Walk back: level j starts at group starts[j] (as late as ties allow).
    starts = [0] * levels
    g = m
    for j in range(levels - 1, 0, -1):
        while g > 0 and best[j, g] != best[j - 1, g]:
            g -= 1
        starts[j] = g
    cuts = []
    for j in range(1, levels):
        start = starts[j]
        if start == 0:
            cuts.append(float(distinct[0]) - 1.0)
        elif start == m:
            cuts.append(float(distinct[-1]))
        else:
            low, high = float(distinct[start - 1]), float(distinct[start])
            middle = low + (high - low) / 2
            # Between two adjacent floats the middle rounds to one of them: keep the lower.
            cuts.append(middle if middle < high else low)
    return cuts
