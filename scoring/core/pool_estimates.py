"""Estimate each run's map from an active sample, with a standard error. Pure core.

Active sampling (`pooling.core.adaptive_sampling`) judges documents drawn with
known inclusion probabilities pi. From the sample S of a topic, as statAP
(Pavlu and Aslam, 2007) and Li and Kanoulas (CIKM 2017) estimate:

    R     = sum_{d in S} rel(d) / pi(d)
    AP(s) = 1/R sum_{d in S, ranked by s} rel(d) / (pi(d) r(d))
                 * (1 + sum_{d' in S ranked above d by s} rel(d') / pi(d'))

(r(d): d's rank in s, over the whole run; the document itself counts once,
not 1/pi, as it is known to be in the sample; pairs are treated as if drawn
independently, pi(d, d') = pi(d) pi(d')). AP is 0 where R is. map is the mean
of AP over every topic of the qrels (trec_eval -c).

The standard error is a delete-a-group jackknife over the draws: with the
draws in G groups (draw j in group j mod G), map_g is the estimate from the
sample and inclusion probabilities without group g's draws, and
se^2 = (G - 1) / G * sum_g (map_g - mean_g map_g)^2.

Only the candidates can be sampled: a relevant document that no run ranks
within the pool's depth is missing from R, so the estimate is of map over
what the pool can reach; Q's map counts it. `ActiveEstimate` reports both
errors against map under Q.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pooling.core.adaptive import ActiveSample, Candidates
from scoring.core.measures.rankings import JudgedRankings


@dataclass(frozen=True)
class ActiveEstimate:
    """Per run (as the simulation's run tags): the estimate, its standard error, and
    its error against map under the qrels (`error`) and under the qrels' labels
    of the candidates alone (`pool_error`: what judging every candidate would
    give, the most any sample of them can estimate). Over runs: root mean square
    errors, mean standard error, and the share of runs whose error is within one
    and two standard errors, against each."""

    estimate: np.ndarray
    standard_error: np.ndarray
    error: np.ndarray
    pool_error: np.ndarray

    @property
    def rmse(self) -> float:
        return float(np.sqrt(np.mean(self.error**2)))

    @property
    def pool_rmse(self) -> float:
        return float(np.sqrt(np.mean(self.pool_error**2)))

    @property
    def mean_standard_error(self) -> float:
        return float(np.mean(self.standard_error))

    def within(self, standard_errors: float, *, pool: bool = False) -> float:
        """The share of runs whose error is at most that many standard errors."""
        error = self.pool_error if pool else self.error
        return float(np.mean(np.abs(error) <= standard_errors * self.standard_error))


class MapEstimator:
    """statAP's map for every run from an `ActiveSample` (module docstring)."""

    def __init__(self, ranked: JudgedRankings, candidates_below: int, candidates: Candidates):
        assert ranked.row_judgment is not None
        row = ranked.row_judgment
        kept = (row >= 0) & (row < candidates_below)  # ranked documents that are candidates
        self.row_doc = row[kept]
        self.row_group = ranked.row_group[kept]
        self.row_rank = (ranked.row_rank[kept] + 1).astype(np.float64)
        code = {topic: k for k, topic in enumerate(ranked.judgments.topics)}
        self.doc_topic = np.array([code[t] for t in candidates.topics], dtype=np.int64)[
            candidates.doc_topic
        ]
        self.group_run = ranked.group_run
        self.group_topic = ranked.group_topic
        self.n_runs = len(ranked.run_tags)
        self.n_topics = len(ranked.judgments.topics)
        # Each candidate's ranked rows: order[start[d]:start[d + 1]].
        order = np.argsort(self.row_doc, kind="stable")
        start = np.searchsorted(self.row_doc[order], np.arange(candidates.n_docs + 1))
        self._doc_rows = (start, order)

    def mean_ap(
        self,
        sampled: np.ndarray,
        relevant: np.ndarray,
        inclusion: np.ndarray,
        rows: np.ndarray | None = None,
    ) -> np.ndarray:
        """Each run's estimated map from one sample (module docstring). `rows`: the
        ranked rows of (at least) every sampled relevant document, in row order
        (`rows_of`); found here when not given."""
        found = sampled & relevant
        weight = np.zeros(len(found))
        weight[found] = 1.0 / inclusion[found]
        total = np.bincount(self.doc_topic, weights=weight, minlength=self.n_topics)
        if rows is None:
            rows = self.rows_of(found)
        rows = rows[found[self.row_doc[rows]]]
        w, group, rank = weight[self.row_doc[rows]], self.row_group[rows], self.row_rank[rows]
        running = np.cumsum(w)
        first = np.r_[True, group[1:] != group[:-1]] if len(group) else np.zeros(0, bool)
        lengths = np.diff(np.r_[np.flatnonzero(first), len(group)])
        above = running - w - np.repeat((running - w)[first], lengths)
        terms = w / rank * (1.0 + above)
        # (bincount of nothing gives integers)
        numerator = np.bincount(group, weights=terms, minlength=len(self.group_run)).astype(float)
        recall_base = total[self.group_topic]
        ap = np.divide(numerator, recall_base, out=np.zeros_like(numerator), where=recall_base > 0)
        return np.bincount(self.group_run, weights=ap, minlength=self.n_runs) / max(
            self.n_topics, 1
        )

    def rows_of(self, docs: np.ndarray) -> np.ndarray:
        """The ranked rows of the documents `docs` (a mask), in row order."""
        start, order = self._doc_rows
        chosen = np.flatnonzero(docs)
        lengths = start[chosen + 1] - start[chosen]
        offsets = np.repeat(start[chosen] - (np.cumsum(lengths) - lengths), lengths)
        return np.sort(order[np.arange(int(lengths.sum())) + offsets])

    def estimate(
        self, sample: ActiveSample, truth: np.ndarray, pool_truth: np.ndarray
    ) -> ActiveEstimate:
        """The estimate and its jackknife standard error, against map under the
        qrels (`truth`) and under their labels of the candidates (`pool_truth`)."""
        rows = self.rows_of(sample.sampled & sample.relevant)  # replicates sample less
        estimate = self.mean_ap(sample.sampled, sample.relevant, sample.inclusion, rows)
        groups = len(sample.replicate_sampled)
        replicates = np.array(
            [
                self.mean_ap(
                    sample.replicate_sampled[g],
                    sample.relevant,
                    sample.replicate_inclusion[g],
                    rows,
                )
                for g in range(groups)
            ]
        )
        spread = replicates - replicates.mean(axis=0)
        standard_error = np.sqrt((groups - 1) / groups * np.sum(spread**2, axis=0))
        return ActiveEstimate(estimate, standard_error, estimate - truth, estimate - pool_truth)
