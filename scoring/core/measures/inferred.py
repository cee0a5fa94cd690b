"""Inferred measures from stratified pools, as NIST's sample_eval.pl computes them:
infAP (xinfAP), infNDCG, iprec@rec, iP10, iP50, iP1000, inum_rel_ret, inum_rel, num_ret.

Yilmaz, Kanoulas and Aslam, "A simple and efficient sampling method for
estimating AP and NDCG" (SIGIR 2008). The qrels are stratified (see
`sampling`, which also estimates R and the ideal DCG); a run's first 1000
documents are scored. Among the pooled documents of the first k, per stratum
s: d_s pooled, n_s sampled, r_s sampled relevant; d = sum of d_s.

- E(k) = sum_s d_s (r_s + 0.00001) / (n_s + 0.00003), the relevant documents
  estimated in the first k (a stratum with none sampled counts a third of its
  documents). inum_rel_ret = E(n); iP_c = E(min(c, n)) / c.
- At a sampled relevant document of rank k, the precision
  1/k + (d/k) sum_s (d_s/d) (r_s + 0.00001) / (n_s + 0.00003), counts above k.
  infAP = sum_s (k_s / pi_s / R) x (the mean of those precisions over the k_s
  sampled relevant documents of stratum s, retrieved or not).
- infNDCG = d x sum_s (d_s/d) x DCG_s / n_s / ideal DCG, DCG_s the DCG of the
  sampled relevant documents of stratum s (gain = label), counts over the run.
- iprec@rec x (summary only): walking up from the last rank with the best
  precision E(j)/j seen so far, each recall level x R above E(k) takes that
  best precision at rank k, one level per rank (the script's walk, kept); the
  levels left at the top take the best of all, levels above E(n) take 0.
- inum_rel: R; its summary adds up every qrels topic, retrieved or not.
- num_ret: the documents of the run (all of them); its summary adds up the
  documents scored (at most 1000 a topic). Both are the script's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scoring.core.measures.base import Measure, ValueKind
from scoring.core.measures.numerics import sequential_sum
from scoring.core.measures.params import Params
from scoring.core.measures.rankings import NONPOOL, Rankings, per_batch
from scoring.core.measures.sampling import MAX_RESULTS, perl_log2, stratum_estimates
from scoring.core.measures.summary import SummaryContext, total

CUTOFFS = (10, 50, MAX_RESULTS)
RECALL_LEVELS = tuple(level / 10 for level in range(11))
# The script's smoothing of a stratum's precision: (r_s + 0.00001) / (n_s + 0.00003).
_RELEVANT_PRIOR = 0.00001
_SAMPLED_PRIOR = 0.00003


@dataclass(frozen=True)
class _Estimates:
    """Per group: infAP, infNDCG, E(k) at the cutoffs, E(n), and iprec@rec (11 levels)."""

    inf_ap: np.ndarray
    inf_ndcg: np.ndarray
    precision: np.ndarray
    relevant_retrieved: np.ndarray
    interpolated: np.ndarray


class _ScoredRun:
    """The first 1000 documents of each group (depth, groups): their labels, which
    are pooled, sampled and relevant, and their stratum (-1 for none)."""

    def __init__(self, rankings: Rankings, strata: int, row_stratum: np.ndarray) -> None:
        depth = min(rankings.depth, MAX_RESULTS)
        self.n = np.minimum(rankings.num_ret, MAX_RESULTS)
        self.label, valid = rankings.label[:depth], rankings.valid[:depth]
        self.pooled = valid & (self.label != NONPOOL)
        self.sampled = valid & (self.label >= 0)
        self.relevant = valid & (self.label > 0)
        self.stratum = rankings.per_judgment(row_stratum, -1)[:depth]
        self.strata = strata
        self.pooled_above = np.cumsum(self.pooled, axis=0) - self.pooled
        # By rank, then group: sums over them go down each run, as the script's do.
        self.relevant_cells = np.nonzero(self.relevant)

    def per_stratum(
        self, cells: tuple[np.ndarray, ...], weights: np.ndarray | None = None
    ) -> np.ndarray:
        """(groups, strata) how many of `cells` (or the sum of their weights) each has."""
        groups = len(self.n)
        keys = cells[1] * self.strata + self.stratum[cells]
        return np.bincount(keys, weights, groups * self.strata).reshape(groups, self.strata)


@per_batch
def _estimates(rankings: Rankings) -> _Estimates:
    design = stratum_estimates(rankings.judgments)
    run = _ScoredRun(rankings, design.n_strata, design.row_stratum)
    so_far, precision = _relevant_so_far(run)
    topic = rankings.topic
    sampled_relevant = design.relevant[topic]
    precision_sums = run.per_stratum(run.relevant_cells, precision)
    stratum_ap = np.where(
        sampled_relevant != 0, precision_sums / np.maximum(sampled_relevant, 1), 0.0
    )
    cutoffs = np.array(CUTOFFS)
    return _Estimates(
        inf_ap=sequential_sum((design.ap_weight[topic] * stratum_ap).T),
        inf_ndcg=_inferred_ndcg(run, design.ideal_dcg[topic]),
        precision=rankings.at_ranks(so_far, np.minimum(cutoffs[None, :], run.n[:, None])) / cutoffs,
        relevant_retrieved=rankings.at_ranks(so_far, run.n[:, None])[:, 0],
        interpolated=_interpolated(so_far, run.n, design.num_rel[topic]),
    )


def _relevant_so_far(run: _ScoredRun) -> tuple[np.ndarray, np.ndarray]:
    """E(k) at each rank (depth, groups), and the precision at each relevant cell."""
    cells = run.relevant_cells
    so_far = np.zeros(run.label.shape)
    precision_above = np.zeros(len(cells[0]))
    for s in range(run.strata):
        in_stratum = run.stratum == s
        docs = np.cumsum(in_stratum, axis=0, dtype=np.int32)
        judged = np.cumsum(in_stratum & run.sampled, axis=0, dtype=np.int32)
        found = np.cumsum(in_stratum & run.relevant, axis=0, dtype=np.int32)
        so_far += docs * (found + _RELEVANT_PRIOR) / (judged + _SAMPLED_PRIOR)
        own = in_stratum[cells]  # above a relevant document: the counts before its own
        share = (docs[cells] - own) / np.maximum(run.pooled_above[cells], 1)
        found_above, judged_above = found[cells] - own, judged[cells] - own
        above = share * (found_above + _RELEVANT_PRIOR) / (judged_above + _SAMPLED_PRIOR)
        precision_above += np.where(share != 0, above, 0.0)
    ranks = cells[0] + 1.0
    return so_far, 1 / ranks + (run.pooled_above[cells] / ranks) * precision_above


def _inferred_ndcg(run: _ScoredRun, ideal: np.ndarray) -> np.ndarray:
    cells = run.relevant_cells
    gains = run.per_stratum(cells, run.label[cells] / perl_log2(len(run.label) + 2)[cells[0] + 2])
    docs, judged = run.per_stratum(np.nonzero(run.pooled)), run.per_stratum(np.nonzero(run.sampled))
    pooled = docs.sum(axis=1)
    share = docs / np.maximum(pooled, 1)[:, None]
    terms = np.where(judged != 0, share * gains / np.maximum(judged, 1), 0.0)
    dcg = pooled * sequential_sum(terms.T)
    return np.where(ideal != 0, dcg / np.where(ideal != 0, ideal, 1), 0.0)


def _interpolated(so_far: np.ndarray, n: np.ndarray, num_rel: np.ndarray) -> np.ndarray:
    """(groups, 11) the script's interpolated precision at recall levels 0, 0.1, ... 1."""
    depth, groups = so_far.shape
    if depth == 0:
        return np.zeros((groups, len(RECALL_LEVELS)))
    columns = np.arange(groups)
    row = np.arange(depth)[:, None]
    precision = np.where(row < n, so_far / (row + 1.0), 0.0)
    best = np.maximum.accumulate(precision[::-1], axis=0)[::-1]  # from each rank down
    best_of_all = best[0]
    levels = np.array(RECALL_LEVELS)[None, :] * num_rel[:, None]
    last = so_far[np.maximum(n - 1, 0), columns]
    level = np.count_nonzero(levels <= last[:, None], axis=1) - 1  # the first one reached
    values = np.zeros((groups, len(RECALL_LEVELS)))
    bound = n.copy()
    walking = level >= 0
    for _ in RECALL_LEVELS:
        target = levels[columns, np.maximum(level, 0)]
        below = (row < bound) & (so_far < target)
        credited = walking & below.any(axis=0)
        rank = depth - 1 - np.argmax(below[::-1], axis=0)
        values[credited, level[credited]] = best[rank[credited], columns[credited]]
        level = np.where(credited, level - 1, level)
        bound = np.where(credited, rank, bound)
        walking = credited & (level >= 0)
    return np.where(np.arange(len(RECALL_LEVELS)) <= level[:, None], best_of_all[:, None], values)


def _all_topics_num_rel(values: np.ndarray, context: SummaryContext) -> np.ndarray:
    """R added up over every qrels topic, whichever topics the run has."""
    num_rel = stratum_estimates(context.judgments).num_rel
    return np.full((values.shape[1], 1), sequential_sum(num_rel[:, None])[0])


def _scored_total(values: np.ndarray, context: SummaryContext) -> np.ndarray:
    return total(np.minimum(values, MAX_RESULTS), context)


def _inf_ap(rankings: Rankings, params: Params) -> np.ndarray:
    return _estimates(rankings).inf_ap


def _inf_ndcg(rankings: Rankings, params: Params) -> np.ndarray:
    return _estimates(rankings).inf_ndcg


def _interpolated_precision(rankings: Rankings, params: Params) -> np.ndarray:
    return _estimates(rankings).interpolated


def _precision_at_cutoffs(rankings: Rankings, params: Params) -> np.ndarray:
    return _estimates(rankings).precision


def _relevant_retrieved(rankings: Rankings, params: Params) -> np.ndarray:
    return _estimates(rankings).relevant_retrieved


def _num_rel(rankings: Rankings, params: Params) -> np.ndarray:
    return stratum_estimates(rankings.judgments).num_rel[rankings.topic]


def _num_ret(rankings: Rankings, params: Params) -> np.ndarray:
    return rankings.num_ret.astype(np.float64)


INF_AP = Measure("infAP", _inf_ap, "Inferred AP of a stratified sample (xinfAP).")
INF_NDCG = Measure("infNDCG", _inf_ndcg, "Inferred nDCG of a stratified sample.")
IPREC_AT_RECALL = Measure(
    "iprec_at_recall",
    _interpolated_precision,
    "Inferred interpolated precision at recall 0, 0.1, ... 1; summary only.",
    per_query=False,
    value_names=tuple(f"iprec@rec{level:4.2f}" for level in RECALL_LEVELS),
)
IP = Measure(
    "iP",
    _precision_at_cutoffs,
    "Inferred precision at 10, 50 and 1000 documents.",
    value_names=tuple(f"iP{cutoff}" for cutoff in CUTOFFS),
)
INUM_REL_RET = Measure(
    "inum_rel_ret",
    _relevant_retrieved,
    "Estimated relevant documents retrieved; the summary is a sum.",
    summary=total,
)
INUM_REL = Measure(
    "inum_rel",
    _num_rel,
    "Estimated relevant documents; the summary adds up every qrels topic.",
    summary=_all_topics_num_rel,
)
NUM_RET = Measure(
    "num_ret",
    _num_ret,
    "Documents retrieved; the summary adds up those scored (1000 a topic at most).",
    summary=_scored_total,
    kind=ValueKind.COUNT,
)
