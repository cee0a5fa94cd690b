"""Discounted and normalised gain: ndcg, dcg, ideal_dcg, ndcg_cut, ndcg_rel,
Rndcg, G, binG.

Gains are per label (see gains.py); parameters are label=gain pairs
(`-m ndcg.1=3,2=9`), except for ndcg_cut, which uses the labels as gains.
The discount of rank r is log2(r + 1).
"""

from __future__ import annotations

import numpy as np

from scoring.core.measures.base import Measure
from scoring.core.measures.gains import Pairs, TopicGains, topic_gains
from scoring.core.measures.numerics import c_log2, log2_table, sum_at
from scoring.core.measures.params import DEFAULT_CUTOFFS, Params, ParamStyle
from scoring.core.measures.rankings import Rankings, per_batch


@per_batch
def _gain(rankings: Rankings, pairs: Pairs) -> np.ndarray:
    """The gain of each ranked document (depth, groups)."""
    return rankings.per_topic(topic_gains(rankings.judgments, pairs).table)


@per_batch
def _dcg_so_far(rankings: Rankings, pairs: Pairs) -> np.ndarray:
    """DCG down to each rank (depth, groups), added rank after rank."""
    return np.cumsum(_gain(rankings, pairs) / rankings.discount, axis=0)


def _dcg_total(rankings: Rankings, pairs: Pairs) -> np.ndarray:
    return rankings.last(_dcg_so_far(rankings, pairs))


def _dcg(rankings: Rankings, params: Params) -> np.ndarray:
    return _dcg_total(rankings, params.pairs)


def _ideal_dcg(rankings: Rankings, params: Params) -> np.ndarray:
    return topic_gains(rankings.judgments, params.pairs).ideal_dcg[rankings.topic]


def _ndcg(rankings: Rankings, params: Params) -> np.ndarray:
    ideal = _ideal_dcg(rankings, params)
    return np.where(ideal > 0, _dcg_total(rankings, params.pairs) / ideal, 0.0)


def _ndcg_at_cutoffs(rankings: Rankings, params: Params) -> np.ndarray:
    deepest = min(max(params.cutoffs), rankings.depth)
    label = rankings.label[:deepest]
    gain = np.where(label > 0, label, 0).astype(np.float64)
    dcg = rankings.at_cutoffs(np.cumsum(gain / rankings.discount[:deepest], axis=0), params.cutoffs)
    ideal = topic_gains(rankings.judgments, ()).ideal_dcg_at(
        rankings.topic[:, None], np.array(params.cutoffs)[None, :]
    )
    return np.where(ideal > 0, dcg / ideal, dcg)


def _ndcg_over_relevant(rankings: Rankings, params: Params) -> np.ndarray:
    """ndcg averaged at each document with a positive gain; one not retrieved
    counts the ndcg at the end of the ranking."""
    gains = topic_gains(rankings.judgments, params.pairs)
    cells = np.nonzero(_gain(rankings, params.pairs) > 0)
    ranks, groups = cells
    topic = rankings.topic
    ideal_ranks = np.minimum(ranks + 1, gains.ideal_length[topic[groups]])
    ideal_so_far = gains.ideal_dcg_at(topic[groups], ideal_ranks)
    dcg_so_far = _dcg_so_far(rankings, params.pairs)[cells]
    total = sum_at(rankings.label.shape, cells, dcg_so_far / ideal_so_far)
    num_rel = gains.ideal_length[topic]
    missed = (num_rel - np.bincount(groups, minlength=len(topic))).astype(np.float64)
    total = total + missed * _dcg_total(rankings, params.pairs) / gains.ideal_dcg[topic]
    return np.where(total > 0, total / num_rel, 0.0)


def _ndcg_at_r_levels(rankings: Rankings, params: Params) -> np.ndarray:
    """ndcg averaged at each rank where the ideal gain changes, and at num_ret
    when the ideal ranking ends above it."""
    gains = topic_gains(rankings.judgments, params.pairs)
    dcg_so_far = _dcg_so_far(rankings, params.pairs)
    topic, num_ret = rankings.topic, rankings.num_ret
    total = np.zeros(len(num_ret))
    count = np.zeros(len(num_ret))
    for changes in gains.gain_changes:
        rank = changes[topic]
        counted = rank > 0
        dcg = rankings.at_ranks(dcg_so_far, np.minimum(rank, num_ret)[:, None])[:, 0]
        total = np.where(counted, total + dcg / gains.ideal_dcg_at(topic, rank), total)
        count += counted
    # trec_eval's first loop ends after the ideal's last step, or at once for a first gain <= 0.
    first_loop = np.where(gains.top[topic] > 0, gains.ideal_length[topic] + 1, 0)
    ideal = gains.ideal_dcg[topic]
    tail = (first_loop < num_ret) & (ideal > 0)
    total = np.where(tail, total + rankings.last(dcg_so_far) / ideal, total)
    count += tail
    return np.where(rankings.num_rel > 0, total / count, 0.0)


def _normalised_gain(rankings: Rankings, params: Params) -> np.ndarray:
    """G: each gain over log2(2 + ideal gain so far - gain so far), normalised by
    the ideal's total gain; the ideal gain so far counts at least 1 a rank."""
    gains: TopicGains = topic_gains(rankings.judgments, params.pairs)
    gain = _gain(rankings, params.pairs)
    depth, topic = rankings.depth, rankings.topic
    ideal = np.zeros((depth, len(topic)))
    shared = min(depth, len(gains.ideal_gain))
    ideal[:shared] = gains.ideal_gain[:shared, topic]
    cost = np.where(ideal < 1.0, 1.0, ideal)  # 0 below the ideal's end: 1 there too
    cells = np.nonzero(gain != 0)
    argument = (2 + np.cumsum(cost, axis=0)[cells]) - np.cumsum(gain, axis=0)[cells]
    total = sum_at(gain.shape, cells, gain[cells] / c_log2(argument))
    ideal_total = gains.ideal_gain_total[topic]
    return np.where(ideal_total > 0, total / ideal_total, 0.0)


def _binary_gain(rankings: Rankings, params: Params) -> np.ndarray:
    """binG: 1 / log2(2 + non-relevant documents above) at each relevant one, over R."""
    cells = np.nonzero(rankings.relevant)
    nonrelevant_above = cells[0] - (rankings.relevant_so_far[cells] - 1)
    log2 = log2_table(rankings.depth + 2)
    total = sum_at(rankings.label.shape, cells, 1.0 / log2[2 + nonrelevant_above])
    found = rankings.last(rankings.relevant_so_far)
    return np.where(found > 0, total / rankings.num_rel, 0.0)


DCG = Measure("dcg", _dcg, "Discounted cumulative gain.", params=ParamStyle.PAIRS)
IDEAL_DCG = Measure(
    "ideal_dcg",
    _ideal_dcg,
    "Discounted cumulative gain of the ideal ranking.",
    params=ParamStyle.PAIRS,
)
NDCG = Measure("ndcg", _ndcg, "Normalised discounted cumulative gain.", params=ParamStyle.PAIRS)
NDCG_REL = Measure(
    "ndcg_rel",
    _ndcg_over_relevant,
    "ndcg averaged over the relevant documents.",
    params=ParamStyle.PAIRS,
)
RNDCG = Measure(
    "Rndcg",
    _ndcg_at_r_levels,
    "ndcg averaged at the R levels of each gain.",
    params=ParamStyle.PAIRS,
)
NDCG_CUT = Measure(
    "ndcg_cut",
    _ndcg_at_cutoffs,
    "ndcg at cutoffs, with the labels as gains.",
    params=ParamStyle.CUTOFFS,
    defaults=DEFAULT_CUTOFFS,
)
G = Measure(
    "G", _normalised_gain, "Normalised gain (experimental in trec_eval).", params=ParamStyle.PAIRS
)
BING = Measure("binG", _binary_gain, "Binary G: binary gains (experimental in trec_eval).")
