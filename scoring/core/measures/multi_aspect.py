"""Multi-aspect measures of the TREC 2019 Decision track: cam, cam_map, nlre and
nwcs over two aspects, cam_three_ndcg, cam_map_three, nlre_three and nwcs_three
over three.

The track scored runs with an extension of trec_eval 9 (lcschv/Trec_eval_extension);
these follow the workbench's definitions of them (shared/semantics/multi-aspect.md),
which equal the extension's values at 4 decimals except where marked:

- Aspects are qrels columns: `relevance`, `aspect_2` and `aspect_3` (see
  `scoring.core.qrels.TWO_ASPECT_QRELS`). A negative value is a code for "no value"
  (-1 not judged because not relevant, -2 should have been judged).
- cam: sum over aspects of w x nDCG_a, trec_eval's ndcg on the aspect's labels
  (linear gains, or gains from `-m cam.1=3,2=7`), w = 0.5 or 0.3333 (the
  extension's constant: a perfect run scores 0.9999). **Difference 1**: an aspect
  with no positive value in the topic counts 0; the extension stops with no output.
- cam_map: sum over aspects of w x AP_a at the relevance level (-l); kept quirk:
  the topic scores 0 unless its last aspect has a relevant document retrieved.
- nlre: 1 - LRE / C(n), where LRE sums the local rank errors of adjacent documents
  against each aspect's ideal order of the retrieved documents (label descending,
  run order among equals). Nothing relevant retrieved scores 1; n <= 3 may score
  below 0. Both are the extension's.
- nwcs: WCS over the ideal WCS of the topic's judged documents (sums of their
  values, cut at n). **Difference 2**: negative codes count 0 in the ideal too
  (the extension adds them raw, and scores above 1 on Decision-track qrels).
  The three-aspect weights are the extension's: 0.3333333, 0.33333 and 0.333333
  for the run, 0.33333333 for the ideal.

The extension computes cam, nlre and nwcs in 32-bit floats (nlre accumulates its
error in one); so does this module, step by step, so that printed values agree.
With -c a topic missing from a run scores 0. Run scores are ranked as 32-bit
floats (`EvalOptions.single_precision_scores`), as the extension stores them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from itertools import pairwise

import numpy as np

from scoring.core.measures.base import Measure
from scoring.core.measures.gains import topic_gains
from scoring.core.measures.numerics import log2_table, sequential_sum
from scoring.core.measures.params import Params, ParamStyle
from scoring.core.measures.rankings import NONPOOL, PAD, UNJUDGED, Judgments, Rankings, per_batch

TWO = ("relevance", "aspect_2")
THREE = ("relevance", "aspect_2", "aspect_3")
_CAM_WEIGHT = {TWO: 0.5, THREE: 0.3333}
# nlre's u, v (and x): the extension's float constants; its normaliser adds them as doubles.
_LRE_OFFSET = {TWO: np.float32(0.5), THREE: np.float32(0.333333)}
_NORMALISER_OFFSET = {TWO: 0.5 + 0.5, THREE: 0.33333 + 0.333333 + 0.33333}
_WCS_WEIGHTS = {TWO: (0.5, 0.5), THREE: (0.3333333, 0.33333, 0.333333)}
_IDEAL_WCS_WEIGHT = {TWO: 0.5, THREE: 0.33333333}

type Aspects = tuple[str, ...]
type AspectCompute = Callable[[Rankings, Params, Aspects], np.ndarray]


@per_batch
def _codes(rankings: Rankings, column: str) -> np.ndarray:
    """Each ranked document's value in one aspect (depth, groups): the value, UNJUDGED
    for a negative code, NONPOOL when the qrels do not list it, PAD below num_ret."""
    if column == "relevance":
        return rankings.label
    values = rankings.column(column)
    assert rankings.judgment_row is not None  # there is a column
    codes = np.where(values < 0, UNJUDGED, values)
    codes = np.where(rankings.judgment_row >= 0, codes, NONPOOL)
    return np.where(rankings.valid, codes, PAD)


def _values(rankings: Rankings, column: str) -> np.ndarray:
    """The aspect's value where there is one, 0 elsewhere (no value, padding)."""
    return np.maximum(_codes(rankings, column), 0)


def _cam(rankings: Rankings, params: Params, aspects: Aspects) -> np.ndarray:
    """Weighted nDCG of each aspect, added up in a 32-bit float as the extension does."""
    total = np.zeros(len(rankings.num_ret), dtype=np.float32)
    for column in aspects:
        gains = topic_gains(rankings.judgments, params.pairs, column=column)
        label_values = rankings.judgments.label_counts(column).label_values
        gain = gains.table[rankings.topic, np.searchsorted(label_values, _codes(rankings, column))]
        dcg = rankings.last(np.cumsum(gain / rankings.discount, axis=0))
        ideal = gains.ideal_dcg[rankings.topic]
        by_aspect = np.where(ideal > 0, dcg / ideal, 0.0).astype(np.float32)  # difference 1
        total = (total + _CAM_WEIGHT[aspects] * by_aspect.astype(np.float64)).astype(np.float32)
    return total.astype(np.float64)


def _cam_map(rankings: Rankings, params: Params, aspects: Aspects) -> np.ndarray:
    total = np.zeros(len(rankings.num_ret))
    found = np.zeros(len(rankings.num_ret), dtype=np.int64)
    for column in aspects:
        relevant = (_codes(rankings, column) >= rankings.level) & rankings.valid
        so_far = np.cumsum(relevant, axis=0)
        precision_sum = sequential_sum(np.where(relevant, so_far / rankings.rank, 0.0))
        found = rankings.last(so_far)
        num_rel = rankings.judgments.label_counts(column).at_least(rankings.level)[rankings.topic]
        total = np.where(found > 0, total + _CAM_WEIGHT[aspects] * (precision_sum / num_rel), total)
    return np.where(found > 0, total, 0.0)  # the last aspect's documents decide (kept quirk)


def _ideal_positions(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """0-based position of each document in its group's ideal order (depth, groups):
    value descending, run order among equals."""
    keys = np.where(valid, -values, np.iinfo(np.int64).max)
    order = np.argsort(keys, axis=0, kind="stable")
    positions = np.empty_like(order)
    np.put_along_axis(positions, order, np.arange(len(order))[:, None], axis=0)
    return positions


def _nlre(rankings: Rankings, params: Params, aspects: Aspects) -> np.ndarray:
    """1 - LRE / C(n); LRE is accumulated in a 32-bit float, one rank at a time."""
    offset = _LRE_OFFSET[aspects]
    baseline = offset
    for _ in aspects[1:]:
        baseline = np.float32(baseline * offset)
    errors = []
    for column in aspects:
        positions = _ideal_positions(_values(rankings, column), rankings.valid)
        errors.append(np.maximum(positions[:-1] - positions[1:], 0).astype(np.float32))
    discount = rankings.discount[:-1, 0]
    lre = np.zeros(len(rankings.num_ret), dtype=np.float32)
    for i in range(rankings.depth - 1):
        product = offset + errors[0][i]
        for error in errors[1:]:
            product = product * (offset + error[i])
        step = (product - baseline).astype(np.float64) / discount[i]
        lre = np.where(i + 1 < rankings.num_ret, (lre + step).astype(np.float32), lre)
    normaliser = np.array([_normaliser(int(n), aspects) for n in rankings.num_ret], np.float32)
    return (np.float32(1.0) - lre / normaliser).astype(np.float64)


@lru_cache(maxsize=4096)
def _normaliser(n: int, aspects: Aspects) -> np.float32:
    """C(n): the largest LRE of n documents, accumulated in a 32-bit float."""
    if n <= 2:
        return np.float32(1.0)
    if n == 3:
        return np.float32(2.0)
    total = np.float32(0.0)
    for j in range(n // 2):
        span = n - 2 * j - 1
        term = (span ** len(aspects) + _NORMALISER_OFFSET[aspects] * span) / (1 + math.log2(1 + j))
        total = np.float32(float(total) + term)
    return total


def _nwcs(rankings: Rankings, params: Params, aspects: Aspects) -> np.ndarray:
    weights = _WCS_WEIGHTS[aspects]
    weighted = weights[0] * _values(rankings, aspects[0])
    for weight, column in zip(weights[1:], aspects[1:], strict=True):
        weighted = weighted + weight * _values(rankings, column)
    wcs = rankings.last(np.cumsum(weighted / rankings.discount, axis=0))
    ideal = _ideal_wcs(rankings.judgments, aspects)
    ideal_wcs = ideal.at(rankings.topic, rankings.num_ret)
    nwcs = np.where(ideal_wcs > 0, wcs / ideal_wcs, 0.0)
    return nwcs.astype(np.float32).astype(np.float64)


class _IdealWcs:
    """Per topic, the ideal WCS down to each rank: the sums of the values of every
    judged document, negative codes as 0 (difference 2), best first."""

    def __init__(self, judgments: Judgments, aspects: Aspects) -> None:
        sums = np.stack(
            [
                np.maximum(
                    judgments.row_label if column == "relevance" else judgments.columns[column], 0
                )
                for column in aspects
            ]
        ).sum(axis=0)
        order = np.lexsort((-sums, judgments.row_topic))
        topic, sums = judgments.row_topic[order], sums[order]
        self.start = np.searchsorted(topic, np.arange(len(judgments.topics) + 1))
        rank = np.arange(len(topic)) - self.start[topic]
        terms = _IDEAL_WCS_WEIGHT[aspects] * sums / log2_table(len(rank) + 2)[rank + 2]
        self.so_far = np.concatenate(
            [np.cumsum(terms[start:stop]) for start, stop in pairwise(self.start)] or [np.zeros(0)]
        )

    def at(self, topic: np.ndarray, n: np.ndarray) -> np.ndarray:
        """The ideal WCS of the first n ranks (the ideal is padded with zeros)."""
        length = self.start[topic + 1] - self.start[topic]
        taken = np.minimum(n, length)
        values = self.so_far[np.maximum(self.start[topic] + taken - 1, 0)]
        return np.where(taken > 0, values, 0.0)


def _ideal_wcs(judgments: Judgments, aspects: Aspects) -> _IdealWcs:
    key = ("ideal wcs", aspects)
    if key not in judgments.derived:
        judgments.derived[key] = _IdealWcs(judgments, aspects)
    ideal = judgments.derived[key]
    assert isinstance(ideal, _IdealWcs)
    return ideal


def _measure(
    name: str, doc: str, compute: AspectCompute, aspects: Aspects, *, gains: bool = False
) -> Measure:
    def compute_aspects(rankings: Rankings, params: Params) -> np.ndarray:
        return compute(rankings, params, aspects)

    return Measure(
        name,
        compute_aspects,
        doc,
        params=ParamStyle.PAIRS if gains else ParamStyle.NONE,
        reset_for_missing_topic=True,
    )


CAM = _measure("cam", "CAM of nDCG: 0.5 nDCG(a1) + 0.5 nDCG(a2).", _cam, TWO, gains=True)
CAM_MAP = _measure("cam_map", "CAM of AP: 0.5 AP(a1) + 0.5 AP(a2).", _cam_map, TWO)
NLRE = _measure("nlre", "Normalised local rank error over two aspects.", _nlre, TWO)
NWCS = _measure("nwcs", "Normalised weighted cumulative score over two aspects.", _nwcs, TWO)
CAM_THREE_NDCG = _measure(
    "cam_three_ndcg", "CAM of nDCG over three aspects (weights 0.3333).", _cam, THREE, gains=True
)
CAM_MAP_THREE = _measure(
    "cam_map_three", "CAM of AP over three aspects (weights 0.3333).", _cam_map, THREE
)
NLRE_THREE = _measure("nlre_three", "Normalised local rank error over three aspects.", _nlre, THREE)
NWCS_THREE = _measure(
    "nwcs_three", "Normalised weighted cumulative score over three aspects.", _nwcs, THREE
)
