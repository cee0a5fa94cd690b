"""Rank-biased precision: rbp, rbp_resid.

Parameters are name=value pairs: `p` the persistence (default 0.9), and
gains per label as for ndcg (`-m rbp.p=0.95,2=3`).
"""

from __future__ import annotations

import numpy as np

from scoring.core.measures.base import Measure
from scoring.core.measures.gains import topic_gains
from scoring.core.measures.numerics import sequential_sum
from scoring.core.measures.params import Params, ParamStyle
from scoring.core.measures.rankings import Rankings

DEFAULT_PERSISTENCE = 0.9


def _persistence(params: Params) -> float:
    """The last `p=` pair, as trec_eval reads them all in turn."""
    values = [value for name, value in params.pairs if name == "p"]
    return values[-1] if values else DEFAULT_PERSISTENCE


def _powers(p: float, count: int) -> np.ndarray:
    """p^0 .. p^(count-1) by repeated multiplication, as trec_eval computes them (count, 1)."""
    factors = np.full(count, p)
    factors[:1] = 1.0
    return np.cumprod(factors)[:, None]


def _rbp(rankings: Rankings, params: Params) -> np.ndarray:
    p = _persistence(params)
    gains = rankings.per_topic(topic_gains(rankings.judgments, params.pairs, unit_range=True).table)
    return (1.0 - p) * sequential_sum(gains * _powers(p, rankings.depth))


def _rbp_residual(rankings: Rankings, params: Params) -> np.ndarray:
    """How much rbp could still grow: the weight of the unjudged documents and of
    all ranks below the last one."""
    p = _persistence(params)
    powers = _powers(p, rankings.depth + 1)
    unjudged = (rankings.label < 0) & rankings.valid
    below_last = powers[rankings.num_ret, 0]
    residual = below_last + (1 - p) * sequential_sum(np.where(unjudged, powers[:-1], 0.0))
    return np.where(unjudged.any(axis=0), residual, 0.0)


RBP = Measure(
    "rbp",
    _rbp,
    "Rank-biased precision (persistence p=0.9); gains rescaled to [0, 1] when needed.",
    params=ParamStyle.PAIRS,
)
RBP_RESID = Measure(
    "rbp_resid",
    _rbp_residual,
    "The rbp residual: how much unjudged documents and those below rank num_ret could add.",
    params=ParamStyle.PAIRS,
    reset_for_missing_topic=True,
)
