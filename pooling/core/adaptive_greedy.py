"""Adaptive strategies that judge, in turn, the documents the runs rank best:
depth order, move-to-front, Hedge and two bandits. Pure core, no Django.

docs/adaptive_pooling.md gives each definition with its reference and every
decision its paper leaves open; `pooling.core.adaptive_base` the interface, the
candidates and how ties and random draws are made. In short:

- `DepthOrder` (depth): documents in depth order (best rank over the runs,
  then docno descending). The per-topic turns are `pooling.core.adaptive`'s.
- `MoveToFront` (mtf; Cormack, Palmer and Clarke, SIGIR 1998): every arm (a run
  on a topic) starts with priority 0. The current arm's next unjudged document
  is judged; a relevant one keeps the arm current, a non-relevant one lowers
  its priority by 1 and the arm of highest priority (then smallest tie key)
  becomes current.
- `Hedge` (hedge; Aslam, Pavlu and Savell, 2003): each run has a weight per
  topic; the next document is the unjudged one of highest weighted vote
  sum(w u) / sum(w), u = v(rank) / v(1) with v(r) = sum_{i=r..N} 1/i (0 when
  the run does not rank it; N the topic's deepest ranking). A judgment costs
  each run of the topic the loss (1 - u) / 2 if relevant, (1 + u) / 2 if not:
  w <- w * BETA ** loss.
- `MaxMean` (bandit; Losada, Parapar and Barreiro's MM-NS): each arm keeps
  discounted counts of the relevant (a) and non-relevant (b) documents it
  proposed, a <- DISCOUNT a + rel, b <- DISCOUNT b + (1 - rel); the arm of
  largest posterior mean (a + 1) / (a + b + 2) under a Beta(1, 1) prior
  proposes its next unjudged document.
- `Thompson` (thompson; their Bayesian learning automaton, BLA-NS): the same
  counts; each arm draws from Beta(a + 1, b + 1) and the largest draw proposes.

An arm's next document skips documents already judged (through another arm,
or observed out of turn); only the arm whose proposal was judged learns from
it, except under Hedge, where every judgment updates every run of its topic.
"""

from __future__ import annotations

import heapq
import math
from functools import lru_cache

import numpy as np

from pooling.core.adaptive_base import (
    RELEVANCE_LEVEL,
    AdaptiveStrategy,
    Candidates,
    random_stream,
    tie_order,
)

DISCOUNT = 0.9  # MM-NS and Thompson: weight of an arm's past judgments at each new one
BETA = 0.1  # Hedge's learning rate (Aslam, Pavlu and Savell)
LOG_BETA = math.log(BETA)


class DepthOrder(AdaptiveStrategy):
    """Documents in depth order: the smallest unjudged document number."""

    name = "depth"

    def __init__(
        self, candidates: Candidates, *, seed: int = 0, relevance_level: int = RELEVANCE_LEVEL
    ) -> None:
        super().__init__(candidates, seed=seed, relevance_level=relevance_level)
        self._next = 0

    def next_id(self) -> int | None:
        judged, n = self.judged_bytes, len(self.judged_bytes)
        while self._next < n and judged[self._next]:
            self._next += 1
        return self._next if self._next < n else None

    def _learn(self, doc: int, relevant: bool) -> None:
        pass


class _ArmStrategy(AdaptiveStrategy):
    """A strategy that picks an arm, then judges that arm's next unjudged document.

    The pending choice (arm, doc) is cached until the next observation; the
    arm that proposed an observed document is told by `_reward`.
    """

    def __init__(
        self, candidates: Candidates, *, seed: int = 0, relevance_level: int = RELEVANCE_LEVEL
    ) -> None:
        super().__init__(candidates, seed=seed, relevance_level=relevance_level)
        self._pointer = candidates.arm_entry_start[:-1].tolist()
        self._end = candidates.arm_entry_start[1:].tolist()
        self._entry_doc = candidates.entry_doc.tolist()
        self._tie = tie_order(candidates, seed, self.name)
        self._tie_list = self._tie.tolist()
        self._pending: tuple[int, int] | None = None
        self._pending_at = -1

    def _head(self, arm: int) -> int:
        """The arm's next unjudged document, -1 when it has none left."""
        pointer, end = self._pointer[arm], self._end[arm]
        judged, docs = self.judged_bytes, self._entry_doc
        while pointer < end and judged[docs[pointer]]:
            pointer += 1
        self._pointer[arm] = pointer
        return docs[pointer] if pointer < end else -1

    def _choice(self) -> tuple[int, int] | None:
        """(arm, doc) proposed now, cached per observation."""
        if self._pending_at != self.observed:
            self._pending = self._choose()
            self._pending_at = self.observed
        return self._pending

    def _choose(self) -> tuple[int, int] | None:
        raise NotImplementedError

    def next_id(self) -> int | None:
        choice = self._choice()
        return None if choice is None else choice[1]

    def _learn(self, doc: int, relevant: bool) -> None:
        choice = self._choice()
        if choice is not None and choice[1] == doc:
            self._reward(choice[0], relevant)

    def _reward(self, arm: int, relevant: bool) -> None:
        raise NotImplementedError


class MoveToFront(_ArmStrategy):
    """Cormack, Palmer and Clarke's move-to-front (module docstring)."""

    name = "mtf"

    def __init__(
        self, candidates: Candidates, *, seed: int = 0, relevance_level: int = RELEVANCE_LEVEL
    ) -> None:
        super().__init__(candidates, seed=seed, relevance_level=relevance_level)
        self.priority = [0] * candidates.n_arms
        self.current: int | None = None
        # (-priority, tie place, arm); an entry whose priority is out of date is stale.
        self._heap = [(0, place, arm) for arm, place in enumerate(self._tie_list)]
        heapq.heapify(self._heap)

    def _choose(self) -> tuple[int, int] | None:
        if self.current is not None:
            doc = self._head(self.current)
            if doc >= 0:
                return self.current, doc
        heap = self._heap
        while heap:
            negative, _, arm = heap[0]
            if -negative == self.priority[arm]:
                doc = self._head(arm)
                if doc >= 0:
                    return arm, doc
            heapq.heappop(heap)  # out of date, or nothing left to judge
        return None

    def _reward(self, arm: int, relevant: bool) -> None:
        if relevant:
            self.current = arm
            return
        self.priority[arm] -= 1
        heapq.heappush(self._heap, (-self.priority[arm], self._tie_list[arm], arm))
        self.current = None


class MaxMean(_ArmStrategy):
    """Losada, Parapar and Barreiro's MM-NS (module docstring)."""

    name = "bandit"

    def __init__(
        self, candidates: Candidates, *, seed: int = 0, relevance_level: int = RELEVANCE_LEVEL
    ) -> None:
        super().__init__(candidates, seed=seed, relevance_level=relevance_level)
        self.relevant = [0.0] * candidates.n_arms
        self.non_relevant = [0.0] * candidates.n_arms
        self._version = [0] * candidates.n_arms
        # (-mean, tie place, arm, version); an entry of an older version is stale.
        self._heap = [(-0.5, place, arm, 0) for arm, place in enumerate(self._tie_list)]
        heapq.heapify(self._heap)

    def mean(self, arm: int) -> float:
        a, b = self.relevant[arm], self.non_relevant[arm]
        return (a + 1.0) / (a + b + 2.0)

    def _choose(self) -> tuple[int, int] | None:
        heap = self._heap
        while heap:
            _, _, arm, version = heap[0]
            if version == self._version[arm]:
                doc = self._head(arm)
                if doc >= 0:
                    return arm, doc
            heapq.heappop(heap)
        return None

    def _reward(self, arm: int, relevant: bool) -> None:
        self.relevant[arm] = DISCOUNT * self.relevant[arm] + (1.0 if relevant else 0.0)
        self.non_relevant[arm] = DISCOUNT * self.non_relevant[arm] + (0.0 if relevant else 1.0)
        self._version[arm] += 1
        entry = (-self.mean(arm), self._tie_list[arm], arm, self._version[arm])
        heapq.heappush(self._heap, entry)


class Thompson(_ArmStrategy):
    """Thompson sampling over the discounted counts of `MaxMean` (module docstring).

    Each choice draws one Beta(a + 1, b + 1) per arm, in arm order, from the
    strategy's stream (seed, "thompson", topic), or (seed, "thompson", "") over
    several topics, continued from choice to choice. A
    choice is made once per judgment observed (an observation asks for the
    pending choice, to know whether it proposed the document), so the same
    judgments give the same draws and the same choices.
    """

    name = "thompson"

    def __init__(
        self, candidates: Candidates, *, seed: int = 0, relevance_level: int = RELEVANCE_LEVEL
    ) -> None:
        super().__init__(candidates, seed=seed, relevance_level=relevance_level)
        self.relevant = np.zeros(candidates.n_arms)
        self.non_relevant = np.zeros(candidates.n_arms)
        self._alive = np.ones(candidates.n_arms, dtype=bool)
        topics = candidates.topics
        self._stream = random_stream((seed, "thompson", topics[0] if len(topics) == 1 else ""))

    def _choose(self) -> tuple[int, int] | None:
        draws = self._stream.beta(self.relevant + 1.0, self.non_relevant + 1.0)
        while self._alive.any():
            best = np.max(draws[self._alive])
            tied = np.flatnonzero(self._alive & (draws == best))
            arm = int(tied[np.argmin(self._tie[tied])])
            doc = self._head(arm)
            if doc >= 0:
                return arm, doc
            self._alive[arm] = False
        return None

    def _reward(self, arm: int, relevant: bool) -> None:
        self.relevant[arm] = DISCOUNT * self.relevant[arm] + (1.0 if relevant else 0.0)
        self.non_relevant[arm] = DISCOUNT * self.non_relevant[arm] + (0.0 if relevant else 1.0)


@lru_cache(maxsize=64)
def hedge_values(deepest: int) -> np.ndarray:
    """u(r) = v(r) / v(1) for r = 1..deepest (index r - 1), v(r) = sum_{i=r..deepest} 1/i,
    each sum exactly rounded (math.fsum)."""
    tails = [math.fsum(1.0 / i for i in range(r, deepest + 1)) for r in range(1, deepest + 1)]
    return np.array([tail / tails[0] for tail in tails])


class Hedge(AdaptiveStrategy):
    """Aslam, Pavlu and Savell's Hedge (module docstring): a run's weight on a topic
    is kept as its logarithm; the vote of each document is recomputed for a
    topic when one of its documents is judged."""

    name = "hedge"

    def __init__(
        self, candidates: Candidates, *, seed: int = 0, relevance_level: int = RELEVANCE_LEVEL
    ) -> None:
        super().__init__(candidates, seed=seed, relevance_level=relevance_level)
        c = candidates
        self.log_weight = np.zeros(c.n_arms)
        lengths = np.diff(c.arm_entry_start)
        deepest = np.zeros(len(c.topics), dtype=np.int64)
        np.maximum.at(deepest, c.arm_topic, lengths)
        self.entry_value = np.empty(len(c.entry_doc))
        for topic in range(len(c.topics)):
            e0 = c.arm_entry_start[c.topic_arm_start[topic]]
            e1 = c.arm_entry_start[c.topic_arm_start[topic + 1]]
            if e1 > e0:
                self.entry_value[e0:e1] = hedge_values(int(deepest[topic]))[c.entry_rank[e0:e1] - 1]
        # Per topic: its arms, its documents, and its entries' arm, document and u.
        self._topic = []
        for topic in range(len(c.topics)):
            a0, a1 = (int(x) for x in c.topic_arm_start[topic : topic + 2])
            d0, d1 = (int(x) for x in c.topic_doc_start[topic : topic + 2])
            e0, e1 = int(c.arm_entry_start[a0]), int(c.arm_entry_start[a1])
            self._topic.append(
                (
                    a0,
                    a1,
                    d0,
                    d1,
                    c.entry_arm[e0:e1] - a0,
                    c.entry_doc[e0:e1] - d0,
                    self.entry_value[e0:e1],
                )
            )
        self.best_vote = np.full(len(c.topics), -np.inf)
        self.best_doc = np.full(len(c.topics), -1, dtype=np.int64)
        for topic in range(len(c.topics)):
            self._vote(topic)

    def votes(self, topic: int) -> np.ndarray:
        """Each document's weighted vote on a topic (judged ones too)."""
        a0, a1, d0, d1, arm, doc, value = self._topic[topic]
        log_weight = self.log_weight[a0:a1]
        weight = np.exp(log_weight - log_weight.max()) if a1 > a0 else log_weight
        # bincount adds each document's terms in entry order, that is arm by arm.
        total = np.bincount(doc, weights=weight[arm] * value, minlength=d1 - d0)
        return total / math.fsum(weight.tolist())

    def _vote(self, topic: int) -> None:
        d0, d1 = self._topic[topic][2:4]
        votes = self.votes(topic)
        votes[self.judged[d0:d1]] = -np.inf
        best = int(np.argmax(votes)) if d1 > d0 else 0
        if d1 > d0 and votes[best] > -np.inf:
            self.best_vote[topic], self.best_doc[topic] = votes[best], d0 + best
        else:
            self.best_vote[topic], self.best_doc[topic] = -np.inf, -1

    def next_id(self) -> int | None:
        best = self.best_vote.max(initial=-np.inf)
        if best == -np.inf:
            return None
        return int(self.best_doc[self.best_vote == best].min())

    def _learn(self, doc: int, relevant: bool) -> None:
        c = self.candidates
        topic = int(c.doc_topic[doc])
        a0, a1 = c.topic_arm_start[topic], c.topic_arm_start[topic + 1]
        value = np.zeros(a1 - a0)
        start, entries = c.doc_entries
        mine = entries[start[doc] : start[doc + 1]]
        value[c.entry_arm[mine] - a0] = self.entry_value[mine]
        loss = (1.0 - value) / 2.0 if relevant else (1.0 + value) / 2.0
        self.log_weight[a0:a1] += loss * LOG_BETA

    def observe_id(self, doc: int, relevant: bool) -> None:
        if self.judged_bytes[doc]:
            return
        super().observe_id(doc, relevant)
        self._vote(int(self.candidates.doc_topic[doc]))
