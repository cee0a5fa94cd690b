"""Precision and recall at cutoffs, over the whole set, and at R:
P, relative_P, recall, success, Rprec, Rprec_mult, recip_rank, utility,
set_P, set_relative_P, set_recall, set_map, set_F."""

from __future__ import annotations

import numpy as np

from scoring.core.measures.base import Measure
from scoring.core.measures.numerics import c_long
from scoring.core.measures.params import DEFAULT_CUTOFFS, ParamError, Params, ParamStyle
from scoring.core.measures.rankings import Rankings


def _relevant_at(rankings: Rankings, params: Params) -> np.ndarray:
    """(groups, cutoffs) relevant documents among the first `cutoff` (or all) ranked."""
    return rankings.at_cutoffs(rankings.relevant_so_far, params.cutoffs)


def _precision(rankings: Rankings, params: Params) -> np.ndarray:
    return _relevant_at(rankings, params) / np.array(params.cutoffs, dtype=np.float64)


def _relative_precision(rankings: Rankings, params: Params) -> np.ndarray:
    num_rel = rankings.num_rel[:, None]
    best = np.minimum(np.array(params.cutoffs)[None, :], num_rel)
    return np.where(num_rel > 0, _relevant_at(rankings, params) / best, 0.0)


def _recall(rankings: Rankings, params: Params) -> np.ndarray:
    num_rel = rankings.num_rel[:, None]
    return np.where(num_rel > 0, _relevant_at(rankings, params) / num_rel, 0.0)


def _success(rankings: Rankings, params: Params) -> np.ndarray:
    return (_relevant_at(rankings, params) > 0).astype(np.float64)


def _r_precision(rankings: Rankings, params: Params) -> np.ndarray:
    taken = np.minimum(rankings.num_ret, rankings.num_rel)
    found = rankings.at_ranks(rankings.relevant_so_far, taken[:, None])[:, 0]
    return np.where(taken > 0, found / rankings.num_rel, 0.0)


def _precision_at_r_multiples(rankings: Rankings, params: Params) -> np.ndarray:
    """Precision at round-up(fraction x R) documents; trec_eval rounds up with +0.9."""
    num_ret = rankings.num_ret[:, None]
    cutoffs = c_long(np.array(params.numbers)[None, :] * rankings.num_rel[:, None] + 0.9)
    # trec_eval counts down from its num_rel_ret at each document passed that meets
    # the level test; the two differ only for a level below 0.
    counted = rankings.relevant_so_far
    so_far = rankings.num_rel_ret - (rankings.last(counted) - counted)
    taken = np.clip(cutoffs, 0, num_ret)
    found = rankings.at_ranks(so_far, taken)
    inside = np.where((cutoffs >= 1) & (found > 0), found / cutoffs, 0.0)
    beyond = rankings.num_rel_ret[:, None] / cutoffs
    return np.where(cutoffs > num_ret, beyond, inside)


def _reciprocal_rank(rankings: Rankings, params: Params) -> np.ndarray:
    first = np.argmax(rankings.relevant, axis=0) if rankings.depth else rankings.num_ret
    return np.where(rankings.relevant.any(axis=0), 1.0 / (first + 1.0), 0.0)


def _utility(rankings: Rankings, params: Params) -> np.ndarray:
    if len(params.numbers) != 4:
        raise ParamError(f"utility takes 4 coefficients, got {len(params.numbers)}")
    a, b, c, d = params.numbers
    found, num_ret, num_rel = rankings.num_rel_ret, rankings.num_ret, rankings.num_rel
    rest = rankings.options.num_docs_in_collection + found - num_ret - num_rel
    return a * found + b * (num_ret - found) + c * (num_rel - found) + d * rest


def _set_precision(rankings: Rankings, params: Params) -> np.ndarray:
    return np.where(rankings.num_ret > 0, rankings.num_rel_ret / rankings.num_ret, 0.0)


def _set_relative_precision(rankings: Rankings, params: Params) -> np.ndarray:
    num_ret, num_rel = rankings.num_ret, rankings.num_rel
    best = np.minimum(num_ret, num_rel)
    return np.where((num_ret > 0) & (num_rel > 0), rankings.num_rel_ret / best, 0.0)


def _set_recall(rankings: Rankings, params: Params) -> np.ndarray:
    return np.where(rankings.num_rel > 0, rankings.num_rel_ret / rankings.num_rel, 0.0)


def _set_map(rankings: Rankings, params: Params) -> np.ndarray:
    found = rankings.num_rel_ret.astype(np.float64)
    num_ret, num_rel = rankings.num_ret, rankings.num_rel
    value = (found * found) / (num_ret.astype(np.float64) * num_rel.astype(np.float64))
    return np.where((num_ret > 0) & (num_rel > 0), value, 0.0)


def _set_f(rankings: Rankings, params: Params) -> np.ndarray:
    found = rankings.num_rel_ret
    precision = found / rankings.num_ret
    recall = found / rankings.num_rel
    beta = params.numbers[0]
    return np.where(found > 0, (beta + 1.0) * precision * recall / (beta * precision + recall), 0.0)


P = Measure(
    "P",
    _precision,
    "Precision at cutoffs; missing documents count as non-relevant.",
    params=ParamStyle.CUTOFFS,
    defaults=DEFAULT_CUTOFFS,
)
RELATIVE_P = Measure(
    "relative_P",
    _relative_precision,
    "Precision at cutoffs relative to the best possible: min(cutoff, R).",
    params=ParamStyle.CUTOFFS,
    defaults=DEFAULT_CUTOFFS,
)
RECALL = Measure(
    "recall",
    _recall,
    "Recall at cutoffs.",
    params=ParamStyle.CUTOFFS,
    defaults=DEFAULT_CUTOFFS,
)
SUCCESS = Measure(
    "success",
    _success,
    "1 if a relevant document is among the first cutoff ones, else 0.",
    params=ParamStyle.CUTOFFS,
    defaults=Params(numbers=(1.0, 5.0, 10.0)),
)
RPREC = Measure("Rprec", _r_precision, "Precision after R (num_rel) documents.")
RPREC_MULT = Measure(
    "Rprec_mult",
    _precision_at_r_multiples,
    "Precision at multiples of R.",
    params=ParamStyle.FRACTIONS,
    defaults=Params(numbers=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
)
RECIP_RANK = Measure(
    "recip_rank", _reciprocal_rank, "Reciprocal rank of the first relevant document."
)
UTILITY = Measure(
    "utility",
    _utility,
    "a*rel_ret + b*nonrel_ret + c*rel_not_ret + d*nonrel_not_ret (d needs -N).",
    params=ParamStyle.NUMBERS,
    defaults=Params(numbers=(1.0, -1.0, 0.0, 0.0)),
    reset_for_missing_topic=True,
)
SET_P = Measure("set_P", _set_precision, "Precision over all retrieved documents.")
SET_RELATIVE_P = Measure(
    "set_relative_P",
    _set_relative_precision,
    "Set precision relative to the best possible: min(num_ret, R).",
)
SET_RECALL = Measure("set_recall", _set_recall, "Recall over all retrieved documents.")
SET_MAP = Measure("set_map", _set_map, "set_P x set_recall.")
SET_F = Measure(
    "set_F",
    _set_f,
    "Weighted harmonic mean of set precision and recall: (b+1)PR / (bP + R).",
    params=ParamStyle.NUMBERS,
    defaults=Params(numbers=(1.0,)),
)
