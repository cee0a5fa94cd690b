"""Average precision and interpolated precision:
map, gm_map, map_cut, yaap, iprec_at_recall, 11pt_avg."""

from __future__ import annotations

import numpy as np

from scoring.core.measures.base import Measure
from scoring.core.measures.numerics import MIN_GEO_MEAN, c_log, lround, sequential_sum
from scoring.core.measures.params import DEFAULT_CUTOFFS, Params, ParamStyle
from scoring.core.measures.rankings import Rankings, per_batch
from scoring.core.measures.summary import geometric_mean

_ELEVEN_POINTS = Params(numbers=tuple(point / 10 for point in range(11)))


@per_batch
def _precision_terms(rankings: Rankings) -> np.ndarray:
    """Precision at each relevant document, 0 elsewhere (depth, groups)."""
    return np.where(rankings.relevant, rankings.relevant_so_far / rankings.rank, 0.0)


def _precision_sum(rankings: Rankings) -> np.ndarray:
    return sequential_sum(_precision_terms(rankings))


@per_batch
def _average_precision(rankings: Rankings) -> np.ndarray:
    found = rankings.last(rankings.relevant_so_far)
    return np.where(found > 0, _precision_sum(rankings) / rankings.num_rel, 0.0)


def _map(rankings: Rankings, params: Params) -> np.ndarray:
    return _average_precision(rankings)


def _log_average_precision(rankings: Rankings, params: Params) -> np.ndarray:
    average = _average_precision(rankings)
    return c_log(np.where(average > MIN_GEO_MEAN, average, MIN_GEO_MEAN))


def _map_at_cutoffs(rankings: Rankings, params: Params) -> np.ndarray:
    sums = rankings.at_cutoffs(np.cumsum(_precision_terms(rankings), axis=0), params.cutoffs)
    num_rel = rankings.num_rel[:, None]
    return np.where(num_rel > 0, sums / num_rel, 0.0)


def _yaap(rankings: Rankings, params: Params) -> np.ndarray:
    total = _precision_sum(rankings)
    return c_log((1.0 + total) / (1.0 + rankings.num_rel - total))


@per_batch
def _interpolated_precision(rankings: Rankings, fractions: tuple[float, ...]) -> np.ndarray:
    """(groups, fractions) trec_eval 10.0's interpolated precision at recall points.

    A fraction f stands for the lround(f x R)-th relevant document; the value
    there is the best precision at or below it. trec_eval visits the points
    from the last one up while it walks the ranking upwards, so a point it
    cannot reach in that order (0, or one above the point before) gets the
    value where the walk ends, and points beyond the relevant documents
    retrieved are 0.
    """
    found = rankings.num_rel_ret
    points = lround(np.array(fractions)[None, :] * rankings.num_rel[:, None])
    ones = np.ones((len(found), 1), dtype=np.int64)
    best = _best_precision_at(rankings, np.hstack([np.clip(points, 1, None), ones]))
    ended = np.where(found > 0, best[:, -1], found / rankings.num_ret)  # 0/0 for no documents
    values = np.zeros(points.shape)
    skipping = np.ones(len(found), dtype=bool)
    stuck = np.zeros(len(found), dtype=bool)
    last = found.copy()
    for column in reversed(range(points.shape[1])):
        point = points[:, column]
        skipping &= point > found
        reached = ~skipping & ~stuck & (point >= 1) & (point <= last)
        stuck |= ~skipping & ~reached
        value = np.where(reached, best[:, column], ended)
        values[:, column] = np.where(skipping, 0.0, value)
        last = np.where(reached, point, last)
    return values


def _best_precision_at(rankings: Rankings, k: np.ndarray) -> np.ndarray:
    """(groups, n) best precision at or below each group's k-th relevant document.

    trec_eval counts relevant documents down from its num_rel_ret; the k-th is
    where that count reaches k (the k-th found, unless the level is below 0).
    Meaningless where k is not between 1 and num_rel_ret.
    """
    values, first = _best_precision_at_relevant(rankings)
    if not len(values):
        return np.zeros(k.shape)
    return values[np.clip(first[:, None] + k - 1, 0, len(values) - 1)]


@per_batch
def _best_precision_at_relevant(rankings: Rankings) -> tuple[np.ndarray, np.ndarray]:
    """The best precision at or below each relevant document, group after group,
    and where trec_eval's first relevant document is in that array for each group."""
    counted = rankings.relevant_so_far
    found = rankings.last(counted)
    so_far = rankings.num_rel_ret - (found - counted)
    precision = np.where(rankings.valid & (so_far > 0), so_far / rankings.rank, 0.0)
    best_below = np.maximum.accumulate(precision[::-1], axis=0)[::-1]
    groups, ranks = np.nonzero(rankings.relevant.T)
    offsets = np.cumsum(found) - found
    return best_below[ranks, groups], offsets + found - rankings.num_rel_ret


def _iprec_at_recall(rankings: Rankings, params: Params) -> np.ndarray:
    return _interpolated_precision(rankings, params.numbers)


def _eleven_point_average(rankings: Rankings, params: Params) -> np.ndarray:
    values = _interpolated_precision(rankings, params.numbers)
    return sequential_sum(values[:, ::-1].T) / len(params.numbers)  # last point first


MAP = Measure("map", _map, "Mean average precision.")
GM_MAP = Measure(
    "gm_map",
    _log_average_precision,
    "Geometric mean of average precision (floored at 0.00001); summary only.",
    summary=geometric_mean,
    per_query=False,
)
MAP_CUT = Measure(
    "map_cut",
    _map_at_cutoffs,
    "Average precision of the first cutoff documents, over R.",
    params=ParamStyle.CUTOFFS,
    defaults=DEFAULT_CUTOFFS,
)
YAAP = Measure(
    "yaap",
    _yaap,
    "Yet another average precision: log((1 + sum) / (1 + R - sum)).",
)
IPREC_AT_RECALL = Measure(
    "iprec_at_recall",
    _iprec_at_recall,
    "Interpolated precision at recall points (rounded with lround, as 10.0 does).",
    params=ParamStyle.FRACTIONS,
    defaults=_ELEVEN_POINTS,
)
ELEVEN_PT_AVG = Measure(
    "11pt_avg",
    _eleven_point_average,
    "Interpolated precision averaged over recall points.",
    params=ParamStyle.NUMBERS,
    defaults=_ELEVEN_POINTS,
)
