"""A live adaptive pool's state: one strategy per topic, advanced by the judgments.
Pure core, no Django.

A live pool (docs/adaptive_pooling.md, "Live adaptive pools") draws each
topic's next document when its assessor asks for one. The strategy is the
topic's own (the `equal` allocation: an assessor works on one topic, so the
budget is shared over topics beforehand, `PoolSpec.topic_budgets`) and it
learns the topic's drawn documents in the order they were drawn, each with
its label now. Rebuilding it from scratch at every request would replay the
whole topic; `LiveTopic` keeps the strategy and the judgments it has learnt,
and learns only the new ones when what it learnt is still a prefix of the
judgments now. A label changed or undone anywhere before that breaks the
prefix, and the strategy is rebuilt: correct whatever happened, fast in the
usual case (one new judgment since the last request).

    live = LiveTopic(candidates.topic_slice(t), "mtf", seed=7)
    live.advance([("FT934-5418", True), ("LA010189-0001", False)])
    live.next_docno()                            # "FT922-1234", or None
"""

from __future__ import annotations

from collections.abc import Sequence

from pooling.core.adaptive import STRATEGIES
from pooling.core.adaptive_base import RELEVANCE_LEVEL, AdaptiveStrategy, Candidates
from pooling.core.adaptive_sampling import ActiveSampling

# (docno, relevant) of a topic's drawn documents, in the order they were drawn.
type Learnt = Sequence[tuple[str, bool]]


class LiveTopic:
    """One topic's strategy and the judgments it has learnt (module docstring)."""

    def __init__(
        self,
        candidates: Candidates,
        strategy: str,
        *,
        seed: int = 0,
        relevance_level: int = RELEVANCE_LEVEL,
    ) -> None:
        if len(candidates.topics) != 1:
            raise ValueError("a LiveTopic holds one topic (Candidates.topic_slice)")
        self.candidates = candidates
        self.kind = STRATEGIES[strategy]
        self.seed = seed
        self.relevance_level = relevance_level
        self.rebuilds = 0
        self._reset()

    def _reset(self) -> None:
        self.strategy: AdaptiveStrategy = self.kind(
            self.candidates, seed=self.seed, relevance_level=self.relevance_level
        )
        self.learnt: list[tuple[str, bool]] = []

    def advance(self, judgments: Learnt) -> AdaptiveStrategy:
        """Learn `judgments` (the topic's, in draw order), from scratch unless what
        was learnt before is a prefix of them; returns the strategy."""
        n = len(self.learnt)
        if len(judgments) < n or list(judgments[:n]) != self.learnt:
            self.rebuilds += 1
            self._reset()
            n = 0
        topic = self.candidates.topics[0]
        for docno, relevant in judgments[n:]:
            self.strategy.observe(topic, docno, bool(relevant))
            self.learnt.append((docno, bool(relevant)))
        return self.strategy

    def next_docno(self) -> str | None:
        """The docno the strategy proposes next, None when it has none left."""
        proposed = self.strategy.next_document()
        return None if proposed is None else proposed[1]

    def inclusion(self) -> dict[str, float]:
        """For active sampling, each candidate's inclusion probability for the draws
        made so far (what sample_eval-style estimates divide by); empty otherwise."""
        if not isinstance(self.strategy, ActiveSampling):
            return {}
        probability = self.strategy.inclusion()
        return dict(zip(self.candidates.docno.tolist(), probability.tolist(), strict=True))


def live_candidates(candidates: Candidates) -> dict[str, Candidates]:
    """Each topic's candidates, by topic id, numbered from 0 (as `LiveTopic` takes them)."""
    return {topic: candidates.topic_slice(t) for t, topic in enumerate(candidates.topics)}


def relevant_of(label: int | None, relevance_level: int = RELEVANCE_LEVEL) -> bool:
    """A stored label as the strategy learns it: None (set aside, never judged) is not relevant."""
    return label is not None and int(label) >= relevance_level
