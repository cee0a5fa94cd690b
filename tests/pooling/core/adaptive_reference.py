"""Slow, plainly written adaptive pooling strategies, from their definitions in
docs/adaptive_pooling.md, for the tests to check `pooling.core.adaptive` against.

Everything is Python lists and dicts: each arm (topic, run) is the run's
docnos on the topic in rank order (ranked by `brute_force_ranks`, which sorts
in plain Python), cut at the depth. Each function returns the judgments in the
order the strategy makes them, as (topic, docno), until nothing is left or
`limit` judgments are made. The random streams are the production ones
(`uniforms`, and `random_stream` for Thompson): what is checked is what is
done with them.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from pooling.core.adaptive_base import random_stream, uniforms
from tests.pooling.generated_runs import brute_force_ranks
from workbench.core.topic_ids import topic_sort_key

type Arm = tuple[str, str]  # (topic, run)
type Doc = tuple[str, str]  # (topic, docno)


class Lists:
    """The arms, in order (topics by topic_sort_key, runs by tag), and their lists."""

    def __init__(self, runs: pd.DataFrame, depth: int | None, labels: dict[Doc, int], level: int):
        lists: dict[Arm, list[tuple[int, str]]] = {}
        for (run, topic, doc), rank in brute_force_ranks(runs).items():
            if depth is None or rank <= depth:
                lists.setdefault((topic, run), []).append((rank, doc))
        self.arms = sorted(lists, key=lambda arm: (topic_sort_key(arm[0]), arm[1]))
        self.docs = {arm: [doc for _, doc in sorted(lists[arm])] for arm in self.arms}
        self.topics = sorted({topic for topic, _ in self.arms}, key=topic_sort_key)
        self.relevant = {doc: label >= level for doc, label in labels.items()}

    def is_relevant(self, doc: Doc) -> bool:
        return self.relevant.get(doc, False)

    def arms_of(self, topic: str) -> list[Arm]:
        return [arm for arm in self.arms if arm[0] == topic]

    def rank(self, arm: Arm, docno: str) -> int | None:
        docs = self.docs[arm]
        return docs.index(docno) + 1 if docno in docs else None

    def depth_order(self, topic: str) -> list[str]:
        """The topic's documents by best rank, then docno descending (byte order)."""
        best: dict[str, int] = {}
        for arm in self.arms_of(topic):
            for rank, doc in enumerate(self.docs[arm], start=1):
                best[doc] = min(best.get(doc, rank), rank)
        by_docno = sorted(best, key=lambda d: d.encode(), reverse=True)
        return sorted(by_docno, key=lambda d: best[d])  # stable: docno order among equals

    def doc_order(self) -> dict[Doc, int]:
        """Every document's number: topic by topic, each in depth order."""
        order = [(t, d) for t in self.topics for d in self.depth_order(t)]
        return {doc: k for k, doc in enumerate(order)}


def tie_key(seed: int, strategy: str, arm: Arm) -> int:
    text = json.dumps([seed, strategy, arm[0], arm[1]], separators=(",", ":")).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=16).digest(), "little")


def next_unjudged(lists: Lists, arm: Arm, judged: set[Doc]) -> str | None:
    for doc in lists.docs[arm]:
        if (arm[0], doc) not in judged:
            return doc
    return None


def in_turns(lists: Lists, one_topic: Callable[[str], list[Doc]], limit: int) -> list[Doc]:
    """The equal allocation: each topic's own sequence, the topic with the fewest
    judgments so far (then the first) taking the next turn."""
    sequences = {topic: one_topic(topic) for topic in lists.topics}
    taken = dict.fromkeys(lists.topics, 0)
    made: list[Doc] = []
    while len(made) < limit:
        open_topics = [t for t in lists.topics if taken[t] < len(sequences[t])]
        if not open_topics:
            break
        topic = min(open_topics, key=lambda t: (taken[t], lists.topics.index(t)))
        made.append(sequences[topic][taken[topic]])
        taken[topic] += 1
    return made


# --------------------------------------------------------------------------
# The strategies


def depth(lists: Lists, seed: int, limit: int) -> list[Doc]:
    return in_turns(lists, lambda t: [(t, d) for d in lists.depth_order(t)], limit)


def mtf(lists: Lists, seed: int, limit: int, arms: list[Arm] | None = None) -> list[Doc]:
    """Move-to-front over `arms` (all by default)."""
    arms = lists.arms if arms is None else arms
    priority = dict.fromkeys(arms, 0)
    current: Arm | None = None
    judged: set[Doc] = set()
    made: list[Doc] = []
    while len(made) < limit:
        if current is None or next_unjudged(lists, current, judged) is None:
            live = [arm for arm in arms if next_unjudged(lists, arm, judged) is not None]
            if not live:
                break
            current = min(live, key=lambda arm: (-priority[arm], tie_key(seed, "mtf", arm)))
        doc = (current[0], next_unjudged(lists, current, judged))
        assert doc[1] is not None
        judged.add(doc)
        made.append(doc)
        if not lists.is_relevant(doc):
            priority[current] -= 1
            current = None
    return made


DISCOUNT = 0.9


def max_mean(lists: Lists, seed: int, limit: int, arms: list[Arm] | None = None) -> list[Doc]:
    """MM-NS over `arms`: the largest (a + 1) / (a + b + 2), counts discounted."""
    arms = lists.arms if arms is None else arms
    a = dict.fromkeys(arms, 0.0)
    b = dict.fromkeys(arms, 0.0)
    judged: set[Doc] = set()
    made: list[Doc] = []
    while len(made) < limit:
        live = [arm for arm in arms if next_unjudged(lists, arm, judged) is not None]
        if not live:
            break
        arm = min(
            live,
            key=lambda x: (-((a[x] + 1.0) / (a[x] + b[x] + 2.0)), tie_key(seed, "bandit", x)),
        )
        doc = (arm[0], next_unjudged(lists, arm, judged))
        judged.add(doc)
        made.append(doc)
        relevant = lists.is_relevant(doc)
        a[arm] = DISCOUNT * a[arm] + (1.0 if relevant else 0.0)
        b[arm] = DISCOUNT * b[arm] + (0.0 if relevant else 1.0)
    return made


def thompson(lists: Lists, seed: int, limit: int, arms: list[Arm] | None = None) -> list[Doc]:
    """Thompson sampling over `arms`: a Beta(a + 1, b + 1) draw for every arm at
    every judgment, from one stream; the largest draw among arms with a document
    left proposes."""
    arms = lists.arms if arms is None else arms
    topics = {arm[0] for arm in arms}
    stream = random_stream((seed, "thompson", next(iter(topics)) if len(topics) == 1 else ""))
    a = [0.0] * len(arms)
    b = [0.0] * len(arms)
    judged: set[Doc] = set()
    made: list[Doc] = []
    while len(made) < limit:
        live = [k for k, arm in enumerate(arms) if next_unjudged(lists, arm, judged) is not None]
        if not live:
            break
        draws = stream.beta(np.array(a) + 1.0, np.array(b) + 1.0)
        k = min(live, key=lambda k: (-draws[k], tie_key(seed, "thompson", arms[k])))
        doc = (arms[k][0], next_unjudged(lists, arms[k], judged))
        judged.add(doc)
        made.append(doc)
        relevant = lists.is_relevant(doc)
        a[k] = DISCOUNT * a[k] + (1.0 if relevant else 0.0)
        b[k] = DISCOUNT * b[k] + (0.0 if relevant else 1.0)
    return made


LOG_BETA = math.log(0.1)


def hedge_value(rank: int | None, deepest: int) -> float:
    """v(rank) / v(1), v(r) = sum_{i=r..deepest} 1/i, 0 for a document not ranked."""
    if rank is None:
        return 0.0
    tail = math.fsum(1.0 / i for i in range(rank, deepest + 1))
    return tail / math.fsum(1.0 / i for i in range(1, deepest + 1))


def hedge(lists: Lists, seed: int, limit: int, topics: list[str] | None = None) -> list[Doc]:
    """Hedge over `topics` (all by default): the unjudged document of largest
    weighted vote, over every topic; ties to the earlier document."""
    topics = lists.topics if topics is None else topics
    number = lists.doc_order()
    arms = {t: lists.arms_of(t) for t in topics}
    deepest = {t: max(len(lists.docs[arm]) for arm in arms[t]) for t in topics}
    log_weight = {arm: 0.0 for t in topics for arm in arms[t]}
    judged: set[Doc] = set()
    made: list[Doc] = []
    while len(made) < limit:
        best: tuple[float, int, Doc] | None = None
        for t in topics:
            logs = np.array([log_weight[arm] for arm in arms[t]])
            weight = np.exp(logs - logs.max())
            total = math.fsum(weight.tolist())
            for docno in lists.depth_order(t):
                if (t, docno) in judged:
                    continue
                vote = 0.0
                for w, arm in zip(weight.tolist(), arms[t], strict=True):
                    rank = lists.rank(arm, docno)
                    if rank is not None:
                        vote += w * hedge_value(rank, deepest[t])
                vote /= total
                key = (-vote, number[t, docno], (t, docno))
                if best is None or key < best:
                    best = key
        if best is None:
            break
        doc = best[2]
        judged.add(doc)
        made.append(doc)
        relevant = lists.is_relevant(doc)
        for arm in arms[doc[0]]:
            u = hedge_value(lists.rank(arm, doc[1]), deepest[doc[0]])
            loss = (1.0 - u) / 2.0 if relevant else (1.0 + u) / 2.0
            log_weight[arm] = log_weight[arm] + loss * LOG_BETA
    return made


def per_topic(strategy: Callable[..., list[Doc]]) -> Callable[[Lists, int, int], list[Doc]]:
    """The equal allocation of an arm strategy: one per topic, in turns."""

    def run(lists: Lists, seed: int, limit: int) -> list[Doc]:
        def one(topic: str) -> list[Doc]:
            if strategy is hedge:
                return hedge(lists, seed, limit, topics=[topic])
            return strategy(lists, seed, limit, arms=lists.arms_of(topic))

        return in_turns(lists, one, limit)

    return run


# --------------------------------------------------------------------------
# Active sampling


def active_topic(lists: Lists, seed: int, topic: str, limit: int) -> tuple[list[Doc], dict]:
    """Active sampling on one topic: the judgments, and the final state (sampled
    documents, their inclusion probabilities, the number of draws)."""
    arms = lists.arms_of(topic)
    docs = lists.depth_order(topic)
    prior = {}
    for arm in arms:
        n = len(lists.docs[arm])
        harmonic = [0.0]
        for i in range(1, n + 1):
            harmonic.append(harmonic[-1] + 1.0 / i)
        for rank, doc in enumerate(lists.docs[arm], start=1):
            prior[arm, doc] = (1.0 + harmonic[n] - harmonic[rank - 1]) / (2.0 * n)
    log_miss = dict.fromkeys(docs, 0.0)
    sampled: set[str] = set()
    judged: set[str] = set()
    made: list[Doc] = []
    draws = 0

    def distribution() -> list[float]:
        quality = {}
        for arm in arms:
            quality[arm] = sum(
                prior[arm, d] / -math.expm1(log_miss[d])
                for d in lists.docs[arm]
                if d in sampled and lists.is_relevant((topic, d))
            )
        total = sum(quality.values())
        weight = {
            arm: 1.0 / len(arms) if total <= 0 else 0.5 / len(arms) + 0.5 * quality[arm] / total
            for arm in arms
        }
        return [sum(weight[arm] * prior.get((arm, d), 0.0) for arm in arms) for d in docs]

    q = distribution()
    while len(made) < limit and len(judged) < len(docs):
        total = sum(q)
        drawn = []
        while True:
            u = uniforms((seed, "active", topic, draws // 1024), 1024)[draws % 1024]
            draws += 1
            target, running, pick = u * total, 0.0, len(docs) - 1
            for k, weight in enumerate(q):
                running += weight
                if running > target:
                    pick = k
                    break
            drawn.append(docs[pick])
            if docs[pick] not in judged:
                break
        for k, d in enumerate(docs):
            log_miss[d] += len(drawn) * math.log1p(-min(q[k], 1.0 - 1e-12))
        new_relevant = any(d not in sampled and lists.is_relevant((topic, d)) for d in drawn)
        sampled.update(drawn)
        judged.add(drawn[-1])
        made.append((topic, drawn[-1]))
        if new_relevant:
            q = distribution()
    inclusion = {d: -math.expm1(log_miss[d]) for d in docs}
    return made, {"sampled": sampled, "inclusion": inclusion, "draws": draws}


def active(lists: Lists, seed: int, limit: int) -> list[Doc]:
    return in_turns(lists, lambda t: active_topic(lists, seed, t, limit)[0], limit)


REFERENCES: dict[str, Callable[[Lists, int, int], list[Doc]]] = {
    "depth": depth,
    "mtf": mtf,
    "hedge": hedge,
    "bandit": max_mean,
    "thompson": thompson,
    "active": active,
}
EQUAL: dict[str, Callable[[Lists, int, int], list[Doc]]] = {
    "depth": depth,
    "mtf": per_topic(mtf),
    "hedge": per_topic(hedge),
    "bandit": per_topic(max_mean),
    "thompson": per_topic(thompson),
    "active": active,
}
