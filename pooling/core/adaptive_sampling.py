"""Active sampling (Li and Kanoulas, CIKM 2017): documents drawn at random, with
known inclusion probabilities, from a distribution that learns which runs are
good. Pure core, no Django.

One `ActiveSampling` samples one topic (`pooling.core.adaptive` shares the budget
over topics). Its distribution over the topic's documents is a mixture over
the runs of each run's AP prior over its ranking (Aslam, Pavlu and Yilmaz,
SIGIR 2006):

    q(d) = sum_s P(s) p_s(d),  p_s(d at rank r of N) = (1 + sum_{i=r..N} 1/i) / (2N)
    P(s) = 1/2 * 1/S + 1/2 * g_s / sum g,   g_s = sum_{d sampled} rel(d) p_s(d) / pi(d)

g_s is the Horvitz-Thompson estimate of the chance that run s's own prior
draws a relevant document (an AP-like quality); half of P stays uniform so
that every document keeps q(d) > 0, which unbiased estimates need. P (and so
q) is worked out again each time a judgment brings a relevant document into
the sample: between such finds the estimate moves only through pi.

Documents are drawn with replacement, one uniform number per draw (draw j of
the topic uses number j of the stream (seed, "active", topic, block), BLOCK
numbers a block). A draw that hits a judged document costs no judgment;
drawing goes on until an unjudged document comes up, which is the one
proposed. q changes only when a judgment is observed, so the inclusion
probability after n draws is pi(d) = 1 - prod_j (1 - q_j(d)),
kept as a sum of log(1 - q). A judgment of a document that was not proposed
(out of turn) records its label but no draw: such a document enters the
sample only if a later draw hits it.

For a standard error the draws are split by number into REPLICATES groups
(draw j in group j mod REPLICATES): `sample()` also gives, for each group,
the sample and the inclusion probabilities without that group's draws, for a
delete-a-group jackknife (`scoring.core.pool_estimates`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pooling.core.adaptive_base import RELEVANCE_LEVEL, AdaptiveStrategy, Candidates, uniforms

REPLICATES = 10
BLOCK = 1024
# A topic whose unjudged documents are so unlikely that this many draws in a
# row find none of them is done (at depth 1000 and 100 runs, q(d) >= 2.5e-6).
MAX_DRAWS = 1 << 22
# A document drawn with certainty (a topic of one document) keeps a finite log
# miss chance, so that taking a group's draws out never subtracts infinities.
Q_MAX = 1.0 - 1e-12


def ap_prior(rank: np.ndarray, length: np.ndarray) -> np.ndarray:
    """p(r) = (1 + sum_{i=r..N} 1/i) / (2N) for each (rank, list length N): sums to 1
    over r = 1..N."""
    deepest = int(length.max(initial=1))
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, deepest + 1))])
    return (1.0 + harmonic[length] - harmonic[rank - 1]) / (2.0 * length)


@dataclass(frozen=True)
class ActiveSample:
    """What an estimate is made from, per document (numbered as the candidates).

    sampled: drawn at least once; relevant: judged relevant (meaningful where
    judged); inclusion: pi(d) for the draws made (0 before any);
    replicate_sampled, replicate_inclusion: (REPLICATES, documents), the same
    without the draws of each group.
    """

    sampled: np.ndarray
    relevant: np.ndarray
    inclusion: np.ndarray
    replicate_sampled: np.ndarray
    replicate_inclusion: np.ndarray

    @staticmethod
    def concatenate(parts: list[ActiveSample]) -> ActiveSample:
        return ActiveSample(
            *(
                np.concatenate([getattr(p, name) for p in parts], axis=-1)
                for name in (
                    "sampled",
                    "relevant",
                    "inclusion",
                    "replicate_sampled",
                    "replicate_inclusion",
                )
            )
        )


class ActiveSampling(AdaptiveStrategy):
    """Active sampling on one topic (module docstring)."""

    name = "active"

    def __init__(
        self, candidates: Candidates, *, seed: int = 0, relevance_level: int = RELEVANCE_LEVEL
    ) -> None:
        super().__init__(candidates, seed=seed, relevance_level=relevance_level)
        if len(candidates.topics) != 1:
            raise ValueError(
                "active sampling samples one topic; pooling.core.adaptive shares topics"
            )
        c = candidates
        n = c.n_docs
        self.topic = c.topics[0]
        self.entry_arm = c.entry_arm
        lengths = np.diff(c.arm_entry_start)
        self.prior = ap_prior(c.entry_rank, lengths[self.entry_arm])
        self.relevant = np.zeros(n, dtype=bool)
        self.sampled = np.zeros(n, dtype=bool)
        self.draws = 0
        self.log_miss = np.zeros(n)  # sum over draws of log(1 - q_j(d))
        self.group_log_miss = np.zeros((REPLICATES, n))
        self.group_sampled = np.zeros((REPLICATES, n), dtype=bool)
        # Sampled documents judged relevant, and their entries (every arm ranking them).
        self._found = np.empty(0, dtype=np.int64)
        self._found_entries = np.empty(0, dtype=np.int64)
        self._block: tuple[int, np.ndarray] = (-1, np.empty(0))
        self._pending: tuple[int, np.ndarray] | None = None
        self._pending_at = -1
        self._distribute()

    # -- the distribution -------------------------------------------------

    def inclusion(self) -> np.ndarray:
        """pi(d) for the draws made so far."""
        return -np.expm1(self.log_miss)

    def run_weights(self) -> np.ndarray:
        """P(s) for each arm (run) of the topic."""
        arms = self.candidates.n_arms
        if arms == 0:
            return np.zeros(0)
        entries = self._found_entries
        inclusion = -np.expm1(self.log_miss[self.candidates.entry_doc[entries]])
        quality = np.bincount(
            self.entry_arm[entries], weights=self.prior[entries] / inclusion, minlength=arms
        )
        total = quality.sum()
        if total <= 0:
            return np.full(arms, 1.0 / arms)
        return 0.5 / arms + 0.5 * quality / total

    def estimated_relevant(self) -> float:
        """The Horvitz-Thompson estimate of the topic's relevant documents."""
        return float(np.sum(-1.0 / np.expm1(self.log_miss[self._found])))

    def _distribute(self) -> None:
        weights = self.run_weights()
        self.q = np.bincount(
            self.candidates.entry_doc,
            weights=weights[self.entry_arm] * self.prior,
            minlength=self.candidates.n_docs,
        )
        self._cumulative = np.cumsum(self.q)
        self._log_miss_per_draw = np.log1p(-np.minimum(self.q, Q_MAX))

    # -- drawing ----------------------------------------------------------

    def _uniforms(self, block: int) -> np.ndarray:
        if self._block[0] != block:
            self._block = (block, uniforms((self.seed, "active", self.topic, block), BLOCK))
        return self._block[1]

    def _draw(self) -> tuple[int, np.ndarray] | None:
        """(the proposed document, every document drawn until it, it last), cached
        per observation; None when the topic is done."""
        if self._pending_at == self.observed:
            return self._pending
        self._pending_at, self._pending = self.observed, None
        n = self.candidates.n_docs
        total = self._cumulative[-1] if n else 0.0
        if n == 0 or total <= 0 or self.observed == n:
            return None
        drawn: list[np.ndarray] = []
        j, size = self.draws, 4  # look at a few draws first: usually the first is new
        while j - self.draws < MAX_DRAWS:
            block, offset = divmod(j, BLOCK)
            u = self._uniforms(block)[offset : offset + size]
            docs = np.minimum(np.searchsorted(self._cumulative, u * total, side="right"), n - 1)
            fresh = np.flatnonzero(~self.judged[docs])
            if len(fresh):
                drawn.append(docs[: fresh[0] + 1])
                self._pending = (int(docs[fresh[0]]), np.concatenate(drawn))
                return self._pending
            drawn.append(docs)
            j += len(docs)
            size = min(size * 4, BLOCK)
        return None

    def next_id(self) -> int | None:
        pending = self._draw()
        return None if pending is None else pending[0]

    def _learn(self, doc: int, relevant: bool) -> None:
        self.relevant[doc] = relevant
        pending = self._draw()
        if pending is None or pending[0] != doc:
            return  # out of turn: a label, not a draw
        drawn = pending[1]
        log_miss = self._log_miss_per_draw
        if len(drawn) == 1:  # the usual case, kept cheap
            group = self.draws % REPLICATES
            self.log_miss += log_miss
            self.group_log_miss[group] += log_miss
            self.group_sampled[group, drawn[0]] = True
        else:
            self.log_miss += len(drawn) * log_miss
            groups = (self.draws + np.arange(len(drawn))) % REPLICATES
            per_group = np.bincount(groups, minlength=REPLICATES)
            for g in np.flatnonzero(per_group).tolist():
                self.group_log_miss[g] += per_group[g] * log_miss
            self.group_sampled[groups, drawn] = True
        new = drawn[~self.sampled[drawn]]
        if len(new) > 1:
            new = np.unique(new)
        self.sampled[drawn] = True
        self.draws += len(drawn)
        found = new[self.relevant[new]]
        if len(found):
            start, entries = self.candidates.doc_entries
            self._found = np.concatenate([self._found, found])
            self._found_entries = np.concatenate(
                [self._found_entries, *(entries[start[d] : start[d + 1]] for d in found.tolist())]
            )

    def observe_id(self, doc: int, relevant: bool) -> None:
        if self.judged_bytes[doc]:
            return
        found = len(self._found)
        super().observe_id(doc, relevant)
        if len(self._found) != found:
            self._distribute()

    def sample(self) -> ActiveSample:
        in_groups = self.group_sampled.sum(axis=0)
        return ActiveSample(
            sampled=self.sampled.copy(),
            relevant=self.relevant.copy(),
            inclusion=self.inclusion(),
            replicate_sampled=(in_groups[None, :] - self.group_sampled) > 0,
            replicate_inclusion=-np.expm1(self.log_miss[None, :] - self.group_log_miss),
        )
