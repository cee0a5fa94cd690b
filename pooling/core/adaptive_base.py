"""What every adaptive pooling strategy shares: the candidate documents, the state
machine's interface, and seeded randomness. Pure core, no Django.

An adaptive strategy chooses the next document to judge from the judgments made
so far (docs/adaptive_pooling.md). Each is a deterministic state machine over
`Candidates`, the documents the runs rank within the pool's depth:

    strategy = make_strategy("mtf", candidates, seed=7)       # pooling.core.adaptive
    strategy.next_document()          # ("301", "FT934-5418"), or None when done
    strategy.observe("301", "FT934-5418", 2)                   # its label
    rebuilt = replay(make_strategy("mtf", candidates, seed=7), judgments)

`next_document` changes nothing: asked twice, it names the same document until
a judgment is observed. `observe` takes a label (relevant when >= the relevance
level) or a bool, for any candidate document, in any order: a judgment of a
document other than the one proposed (a second assessor, an import) is learnt
from as each strategy's docstring says. A document observed twice counts once.
So a strategy is rebuilt by observing the judgments again in their recorded
order, and nothing but (topic, docno) ever leaves it: no run, no rank.

Internally documents and arms are integers (`next_id`, `observe_id`): the
simulator replays hundreds of thousands of judgments through them.

Candidates: documents are numbered topic by topic (topics in `topic_sort_key`
order), and within a topic in *depth order*: best rank over the runs
(ranked by the decided rule, `workbench.core.ranking_rule`), then docno descending in
byte order. An arm is one run on one topic: its documents in rank order.
Arms are numbered topic by topic, runs in byte order of their tags.

Randomness: a tie between arms goes to the arm with the smaller *tie key*, a
BLAKE2b hash of (seed, strategy, topic, run tag), so ties do not depend on
which other runs or topics exist. Random draws come from PCG64 streams seeded
from a BLAKE2b hash of their name (seed, purpose, ...), as pools draw
(`pooling.core.strategies`).
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pooling.core.ranking import RankedRuns
from workbench.core.topic_ids import topic_sort_key

RELEVANCE_LEVEL = 1  # trec_eval's default -l: a label of 1 or more is relevant

type Label = bool | int | np.integer


class UnknownDocument(ValueError):
    """A judgment of a (topic, docno) that is not among the candidates."""


# --------------------------------------------------------------------------
# Candidates


@dataclass(frozen=True, eq=False)
class Candidates:
    """The documents an adaptive pool may choose from, and each run's ranking of them.

    topics, runs: names, in their order (module docstring).
    doc_topic, docno, best_rank: per document (docno an object array of str).
    topic_doc_start: the documents of topic t are topic_doc_start[t]:[t + 1].
    arm_topic, arm_run: per arm; topic_arm_start: the arms of topic t.
    arm_entry_start: the entries of arm a are arm_entry_start[a]:[a + 1];
    entry_doc, entry_rank: per entry (the arm's documents in rank order; the
    rank is the run's, 1-based).
    """

    topics: tuple[str, ...]
    runs: tuple[str, ...]
    doc_topic: np.ndarray
    docno: np.ndarray
    best_rank: np.ndarray
    topic_doc_start: np.ndarray
    arm_topic: np.ndarray
    arm_run: np.ndarray
    topic_arm_start: np.ndarray
    arm_entry_start: np.ndarray
    entry_doc: np.ndarray
    entry_rank: np.ndarray

    @classmethod
    def from_ranked(
        cls,
        ranked: RankedRuns,
        *,
        depth: int | None = None,
        topics: Iterable[str] | None = None,
    ) -> Candidates:
        """The documents ranked within `depth` (None: every rank kept in `ranked`)
        by some run, on `topics` (None: every topic of the runs)."""
        table = ranked.table
        if depth is not None:
            ranked.require_depth(depth)
            table = table.filter(pc.less_equal(table.column("rank"), depth))
        if topics is not None:
            wanted = pa.array(sorted(set(topics)), pa.string())
            table = table.filter(pc.is_in(table.column("query_id"), value_set=wanted))
        table = table.combine_chunks()
        topic_names, topic = _codes(table.column("query_id"), key=topic_sort_key)
        run_names, run = _codes(table.column("run_id"))
        docnos, doc_code = _codes(table.column("doc_id"))
        rank = np.asarray(table.column("rank").to_numpy(), dtype=np.int64)
        return cls._build(topic_names, run_names, docnos, topic, run, doc_code, rank)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> Candidates:
        """From ranked rows: run_id, query_id, doc_id (str) and rank (int, 1-based,
        each (run, topic) ranked 1..n without gaps, as `pooling.core.ranking` ranks)."""
        return cls.from_ranked(RankedRuns(pa.Table.from_pandas(frame, preserve_index=False), None))

    @classmethod
    def _build(
        cls,
        topic_names: list[str],
        run_names: list[str],
        docnos: list[str],
        topic: np.ndarray,
        run: np.ndarray,
        doc_code: np.ndarray,
        rank: np.ndarray,
    ) -> Candidates:
        """From the code of each ranked row's topic, run and docno (their places in
        topic_names, run_names and docnos, docnos in byte order) and its rank."""
        pair = topic * len(docnos) + doc_code
        pairs, row_doc = np.unique(pair, return_inverse=True)
        best = np.full(len(pairs), np.iinfo(np.int64).max)
        np.minimum.at(best, row_doc, rank)
        pair_topic, pair_doc = pairs // max(len(docnos), 1), pairs % max(len(docnos), 1)
        # Depth order: topic, best rank, then docno descending.
        order = np.lexsort((-pair_doc, best, pair_topic))
        doc_id = np.empty(len(pairs), dtype=np.int64)
        doc_id[order] = np.arange(len(pairs))
        entry_doc = doc_id[row_doc.ravel()]
        arm_key = topic * len(run_names) + run
        arm_keys, row_arm = np.unique(arm_key, return_inverse=True)
        row_arm = row_arm.ravel()
        by_arm = np.lexsort((rank, row_arm))
        arm_topic = arm_keys // max(len(run_names), 1)
        return cls(
            topics=tuple(topic_names),
            runs=tuple(run_names),
            doc_topic=pair_topic[order],
            docno=np.array(docnos, dtype=object)[pair_doc[order]],
            best_rank=best[order],
            topic_doc_start=_starts(pair_topic[order], len(topic_names)),
            arm_topic=arm_topic,
            arm_run=arm_keys % max(len(run_names), 1),
            topic_arm_start=_starts(arm_topic, len(topic_names)),
            arm_entry_start=_starts(row_arm[by_arm], len(arm_keys)),
            entry_doc=entry_doc[by_arm],
            entry_rank=rank[by_arm],
        )

    @property
    def n_docs(self) -> int:
        return len(self.docno)

    @property
    def n_arms(self) -> int:
        return len(self.arm_topic)

    @cached_property
    def entry_arm(self) -> np.ndarray:
        """The arm of each entry."""
        return np.repeat(np.arange(self.n_arms), np.diff(self.arm_entry_start))

    @cached_property
    def doc_entries(self) -> tuple[np.ndarray, np.ndarray]:
        """(start, entries): the entries of document d (every arm that ranks it),
        entries[start[d]:start[d + 1]], by arm."""
        entries = np.argsort(self.entry_doc, kind="stable")
        return _starts(self.entry_doc[entries], self.n_docs), entries

    @cached_property
    def _index(self) -> dict[tuple[str, str], int]:
        topic = [self.topics[t] for t in self.doc_topic.tolist()]
        return {(t, str(d)): i for i, (t, d) in enumerate(zip(topic, self.docno, strict=True))}

    def doc_id(self, topic: str, docno: str) -> int:
        """The number of a candidate document; UnknownDocument if it is none."""
        try:
            return self._index[topic, docno]
        except KeyError:
            raise UnknownDocument(
                f"topic {topic!r}, docno {docno!r} is not a candidate document of this pool"
            ) from None

    def name_of(self, doc: int) -> tuple[str, str]:
        """(topic, docno) of a document number."""
        return self.topics[int(self.doc_topic[doc])], str(self.docno[doc])

    def topic_slice(self, topic: int) -> Candidates:
        """Topic `topic` alone, its documents and arms numbered from 0."""
        d0, d1 = (int(x) for x in self.topic_doc_start[topic : topic + 2])
        a0, a1 = (int(x) for x in self.topic_arm_start[topic : topic + 2])
        e0, e1 = int(self.arm_entry_start[a0]), int(self.arm_entry_start[a1])
        return Candidates(
            topics=(self.topics[topic],),
            runs=self.runs,
            doc_topic=np.zeros(d1 - d0, dtype=np.int64),
            docno=self.docno[d0:d1],
            best_rank=self.best_rank[d0:d1],
            topic_doc_start=np.array([0, d1 - d0], dtype=np.int64),
            arm_topic=np.zeros(a1 - a0, dtype=np.int64),
            arm_run=self.arm_run[a0:a1],
            topic_arm_start=np.array([0, a1 - a0], dtype=np.int64),
            arm_entry_start=self.arm_entry_start[a0 : a1 + 1] - e0,
            entry_doc=self.entry_doc[e0:e1] - d0,
            entry_rank=self.entry_rank[e0:e1],
        )


def _codes(
    column: pa.ChunkedArray, key: Callable[[str], Any] | None = None
) -> tuple[list[str], np.ndarray]:
    """The distinct strings of a column, sorted (by `key`, else in byte order), and
    each row's place among them."""
    encoded = pc.dictionary_encode(column)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    values = encoded.dictionary.to_pylist()
    if key is None:
        order = np.asarray(pc.sort_indices(encoded.dictionary).to_numpy(), dtype=np.int64)
    else:
        order = np.array(sorted(range(len(values)), key=lambda i: key(values[i])), dtype=np.int64)
    place = np.empty(len(values), dtype=np.int64)
    place[order] = np.arange(len(values))
    indices = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return [values[i] for i in order.tolist()], place[indices]


def _starts(sorted_codes: np.ndarray, n: int) -> np.ndarray:
    """CSR offsets (n + 1) of codes 0..n-1 in a sorted array."""
    return np.searchsorted(sorted_codes, np.arange(n + 1)).astype(np.int64)


# --------------------------------------------------------------------------
# Randomness


def _entropy(name: Sequence[object]) -> int:
    text = json.dumps(list(name), separators=(",", ":")).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=16).digest(), "little")


def random_stream(name: Sequence[object]) -> np.random.Generator:
    """The PCG64 stream called `name`: independent of every other name."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(_entropy(name))))


def uniforms(name: Sequence[object], size: int) -> np.ndarray:
    """`size` uniform doubles in [0, 1) from the raw 64-bit outputs of the stream
    `name` (the top 53 bits each): stable across NumPy releases."""
    raw = np.random.PCG64(np.random.SeedSequence(_entropy(name))).random_raw(size)
    return (np.asarray(raw, dtype=np.uint64) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def tie_order(candidates: Candidates, seed: int, strategy: str) -> np.ndarray:
    """The place of each arm when arms tie: by its tie key (module docstring)."""
    keys = [
        _entropy((seed, strategy, candidates.topics[t], candidates.runs[r]))
        for t, r in zip(candidates.arm_topic.tolist(), candidates.arm_run.tolist(), strict=True)
    ]
    place = np.empty(len(keys), dtype=np.int64)
    place[sorted(range(len(keys)), key=lambda arm: (keys[arm], arm))] = np.arange(len(keys))
    return place


# --------------------------------------------------------------------------
# The state machine


class AdaptiveStrategy(ABC):
    """The next document to judge, from the judgments observed so far.

    judged: whether each document has been observed (a NumPy view of
    `judged_bytes`, which the per-judgment loops read faster). observed: how
    many documents have been.
    """

    name: ClassVar[str]

    def __init__(
        self, candidates: Candidates, *, seed: int = 0, relevance_level: int = RELEVANCE_LEVEL
    ) -> None:
        self.candidates = candidates
        self.seed = seed
        self.relevance_level = relevance_level
        self.judged_bytes = bytearray(candidates.n_docs)
        self.judged = np.frombuffer(self.judged_bytes, dtype=np.bool_)
        self.observed = 0

    @abstractmethod
    def next_id(self) -> int | None:
        """The number of the next document to judge, None when there is none.
        Changes nothing the strategy decides by."""

    def observe_id(self, doc: int, relevant: bool) -> None:
        """Learn a judgment of document `doc`; a document already observed is ignored."""
        if self.judged_bytes[doc]:
            return
        self._learn(doc, bool(relevant))
        self.judged_bytes[doc] = 1
        self.observed += 1

    @abstractmethod
    def _learn(self, doc: int, relevant: bool) -> None:
        """Update the state for a judgment of `doc`, before it is marked judged."""

    def next_document(self) -> tuple[str, str] | None:
        """(topic, docno) of the next document to judge, None when there is none."""
        doc = self.next_id()
        return None if doc is None else self.candidates.name_of(doc)

    def observe(self, topic: str, docno: str, label: Label) -> None:
        """Learn a judgment: `label` is a bool, or a grade (relevant when at least
        the relevance level). UnknownDocument for a document not among the candidates."""
        relevant = label if isinstance(label, bool) else int(label) >= self.relevance_level
        self.observe_id(self.candidates.doc_id(topic, docno), relevant)


def replay(
    strategy: AdaptiveStrategy, judgments: Iterable[tuple[str, str, Label]]
) -> AdaptiveStrategy:
    """Observe (topic, docno, label) judgments in their recorded order; returns the strategy."""
    for topic, docno, label in judgments:
        strategy.observe(topic, docno, label)
    return strategy
