"""Measures for incomplete judgments, that skip unjudged documents:
bpref, gm_bpref, infAP."""

from __future__ import annotations

import numpy as np

from scoring.core.measures.base import Measure
from scoring.core.measures.numerics import MIN_GEO_MEAN, c_log, sum_at
from scoring.core.measures.params import Params
from scoring.core.measures.rankings import UNJUDGED, Rankings, per_batch
from scoring.core.measures.summary import geometric_mean

INFAP_EPSILON = 0.00001


def _judged_relevant(rankings: Rankings) -> tuple[np.ndarray, ...]:
    """(ranks, groups) of the judged relevant documents."""
    label = rankings.label
    return np.nonzero((label >= 0) & (label >= rankings.level))


def _judged_nonrelevant_so_far(rankings: Rankings) -> np.ndarray:
    label = rankings.label
    return np.cumsum((label >= 0) & (label < rankings.level), axis=0)


@per_batch
def _bpref_value(rankings: Rankings) -> np.ndarray:
    """Per relevant document: 1 - (non-relevant above it, at most R) / min(R, non-relevant)."""
    cells = _judged_relevant(rankings)
    groups = cells[1]
    num_rel = rankings.num_rel
    above = _judged_nonrelevant_so_far(rankings)[cells]
    judged_nonrel = rankings.judgments.num_nonrel[rankings.topic]
    penalty = np.minimum(above, num_rel[groups]) / np.minimum(judged_nonrel, num_rel)[groups]
    total = sum_at(rankings.label.shape, cells, np.where(above > 0, 1.0 - penalty, 1.0))
    return np.where(num_rel > 0, total / num_rel, total)


def _bpref(rankings: Rankings, params: Params) -> np.ndarray:
    return _bpref_value(rankings)


def _log_bpref(rankings: Rankings, params: Params) -> np.ndarray:
    value = _bpref_value(rankings)
    return c_log(np.where(value > MIN_GEO_MEAN, value, MIN_GEO_MEAN))


def _inferred_ap(rankings: Rankings, params: Params) -> np.ndarray:
    """infAP as trec_eval computes it: at the relevant document of rank j+1,
    1/(j+1) + j/(j+1) x (judged + pooled above)/j x (rel above + e)/(judged above + 2e)."""
    cells = _judged_relevant(rankings)
    ranks = cells[0]
    label = rankings.label
    rel = np.cumsum((label >= 0) & (label >= rankings.level), axis=0)[cells] - 1
    nonrel = _judged_nonrelevant_so_far(rankings)[cells]
    pooled = np.cumsum(label == UNJUDGED, axis=0)[cells]
    j = ranks.astype(np.float64)
    term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rel + nonrel + pooled) / j) * (
        (rel + INFAP_EPSILON) / (rel + nonrel + 2 * INFAP_EPSILON)
    )
    total = sum_at(label.shape, cells, np.where(ranks == 0, 1.0, term))
    num_rel = rankings.num_rel
    return np.where(num_rel > 0, total / num_rel, total)


BPREF = Measure(
    "bpref",
    _bpref,
    "Binary preference: judged non-relevant documents ranked above each relevant one.",
)
GM_BPREF = Measure(
    "gm_bpref",
    _log_bpref,
    "Geometric mean of bpref (floored at 0.00001); summary only.",
    summary=geometric_mean,
    per_query=False,
)
INFAP = Measure(
    "infAP",
    _inferred_ap,
    "Inferred average precision (qrels labels below 0: pooled, not judged).",
)
