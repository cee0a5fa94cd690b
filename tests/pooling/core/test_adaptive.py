"""Adaptive pooling strategies (pure core): each against a slow reference written
from its definition, position by position, on generated runs; rebuilding a
strategy from its judgments; the interface a live pool will use."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pooling.core.adaptive import (
    ALLOCATIONS,
    STRATEGIES,
    ActiveTurns,
    Candidates,
    UnknownDocument,
    make_strategy,
    replay,
)
from pooling.core.adaptive_greedy import MaxMean
from pooling.core.adaptive_sampling import ap_prior
from pooling.core.ranking import rank_runs
from tests.pooling.core import adaptive_reference as reference
from tests.pooling.generated_runs import runs_from_text

TOPICS = ["1", "2", "10"]  # "2" before "10": topics in numeric order
DOCNOS = ["a", "B", "b", "b10", "b9", "c", "d", "e"]  # byte order: B < a < b < b10 < b9 < ...
LIMIT = 40


@st.composite
def pools(draw) -> tuple[pd.DataFrame, dict[tuple[str, str], int], int | None, int]:
    """Small runs with many score ties (a run may lack a topic), labels for some
    documents (0-2; the others are not relevant), a depth and a seed."""
    topics = TOPICS[: draw(st.integers(1, 3))]
    rows = []
    for run in range(draw(st.integers(1, 5))):
        for topic in topics:
            docs = draw(st.lists(st.sampled_from(DOCNOS), max_size=8, unique=True))
            scores = draw(
                st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=len(docs), max_size=len(docs))
            )
            rows += [
                (f"run{run}", topic, doc, score) for doc, score in zip(docs, scores, strict=True)
            ]
    if not rows:
        rows = [("run0", topics[0], "a", 1.0)]
    labels = draw(
        st.dictionaries(
            st.tuples(st.sampled_from(topics), st.sampled_from(DOCNOS)), st.integers(0, 2)
        )
    )
    depth = draw(st.one_of(st.none(), st.integers(1, 4)))
    frame = pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"])
    return frame, labels, depth, draw(st.integers(0, 3))


def candidates_of(frame: pd.DataFrame, depth: int | None) -> Candidates:
    return Candidates.from_ranked(rank_runs(frame), depth=depth)


def judge(strategy, labels, limit=LIMIT) -> list[tuple[str, str]]:
    """Ask for documents and observe their labels until none is left or `limit`."""
    made: list[tuple[str, str]] = []
    while len(made) < limit and (doc := strategy.next_document()) is not None:
        made.append(doc)
        strategy.observe(*doc, labels.get(doc, 0))
    return made


@pytest.mark.parametrize("allocation", ALLOCATIONS)
@pytest.mark.parametrize("name", STRATEGIES)
@settings(max_examples=30, deadline=None)
@given(pool=pools())
def test_each_strategy_judges_in_the_order_its_definition_gives(name, allocation, pool):
    frame, labels, depth, seed = pool
    strategy = make_strategy(name, candidates_of(frame, depth), allocation=allocation, seed=seed)
    lists = reference.Lists(frame, depth, labels, 1)
    references = reference.EQUAL if allocation == "equal" else reference.REFERENCES
    assert judge(strategy, labels) == references[name](lists, seed, LIMIT)


@settings(max_examples=30, deadline=None)
@given(pool=pools())
def test_active_inclusion_probabilities_are_one_minus_the_chance_every_draw_missed(pool):
    frame, labels, depth, seed = pool
    strategy = make_strategy("active", candidates_of(frame, depth), seed=seed)
    judge(strategy, labels, limit=6)
    assert isinstance(strategy, ActiveTurns)
    sample = strategy.sample()
    lists = reference.Lists(frame, depth, labels, 1)
    c = strategy.candidates
    for topic_index, part in enumerate(strategy.parts):
        topic = c.topics[topic_index]
        _, state = reference.active_topic(lists, seed, topic, part.observed)
        first = int(c.topic_doc_start[topic_index])
        for local, docno in enumerate(lists.depth_order(topic)):
            assert sample.sampled[first + local] == (docno in state["sampled"])
            assert math.isclose(
                sample.inclusion[first + local], state["inclusion"][docno], rel_tol=1e-9
            )


@pytest.mark.parametrize("allocation", ALLOCATIONS)
@pytest.mark.parametrize("name", STRATEGIES)
@settings(max_examples=20, deadline=None)
@given(pool=pools(), data=st.data())
def test_a_strategy_rebuilt_from_its_judgments_continues_as_the_original(
    name, allocation, pool, data
):
    """Some judgments out of turn (a second assessor, an import), some labels
    observed twice: replaying them in order gives the same next choices."""
    frame, labels, depth, seed = pool
    candidates = candidates_of(frame, depth)
    original = make_strategy(name, candidates, allocation=allocation, seed=seed)
    recorded = []
    everything = [candidates.name_of(doc) for doc in range(candidates.n_docs)]
    for _ in range(data.draw(st.integers(0, 12))):
        proposed = original.next_document()
        if proposed is None:
            break
        doc = data.draw(st.sampled_from([proposed, *everything]))
        recorded.append((*doc, labels.get(doc, 0)))
        original.observe(*recorded[-1])
    rebuilt = replay(make_strategy(name, candidates, allocation=allocation, seed=seed), recorded)
    assert judge(rebuilt, labels) == judge(original, labels)


@pytest.mark.parametrize("name", STRATEGIES)
def test_asking_twice_names_the_same_document_until_a_judgment_is_observed(name):
    frame = runs_from_text(
        "1 Q0 a 1 3 A\n1 Q0 b 2 2 A\n1 Q0 c 3 1 A\n2 Q0 x 1 2 A\n2 Q0 y 2 1 A\n",
        "1 Q0 c 1 3 B\n1 Q0 d 2 2 B\n2 Q0 y 1 2 B\n2 Q0 z 2 1 B\n",
    )
    strategy = make_strategy(name, candidates_of(frame, None), allocation="adaptive", seed=5)
    first = strategy.next_document()
    assert first is not None
    assert [strategy.next_document() for _ in range(3)] == [first] * 3
    strategy.observe(*first, 1)
    assert strategy.next_document() != first


def test_candidates_are_numbered_by_topic_then_best_rank_then_docno_descending():
    frame = runs_from_text(
        "10 Q0 a 1 3 A\n10 Q0 b 2 2 A\n2 Q0 x 1 9 A\n2 Q0 w 2 8 A\n",
        "10 Q0 c 1 5 B\n10 Q0 b 2 4 B\n2 Q0 v 1 1 B\n",
    )
    candidates = candidates_of(frame, None)
    names = [candidates.name_of(doc) for doc in range(candidates.n_docs)]
    assert names == [("2", "x"), ("2", "v"), ("2", "w"), ("10", "c"), ("10", "a"), ("10", "b")]
    assert candidates.best_rank.tolist() == [1, 1, 2, 1, 1, 2]
    assert candidates.runs == ("A", "B")
    # arms: (2, A), (2, B), (10, A), (10, B), each in rank order
    arms = [
        [candidates.name_of(int(d))[1] for d in candidates.entry_doc[s:e]]
        for s, e in itertools.pairwise(candidates.arm_entry_start.tolist())
    ]
    assert arms == [["x", "w"], ["v"], ["a", "b"], ["c", "b"]]


def test_depth_cuts_the_candidates_at_the_runs_rank():
    frame = runs_from_text("1 Q0 a 1 3 A\n1 Q0 b 2 2 A\n1 Q0 c 3 1 A\n", "1 Q0 c 1 3 B\n")
    candidates = candidates_of(frame, 1)
    assert sorted(candidates.docno.tolist()) == ["a", "c"]


def test_a_label_counts_as_relevant_from_the_relevance_level():
    """Move-to-front stays on a run while it finds relevant documents: with level
    2, a grade of 1 ends its turn."""
    frame = runs_from_text("1 Q0 a 1 3 A\n1 Q0 b 2 2 A\n", "1 Q0 c 1 3 B\n1 Q0 d 2 2 B\n")
    turns = {}
    for level in (1, 2):
        strategy = make_strategy("mtf", candidates_of(frame, None), relevance_level=level)
        first = strategy.next_document()
        assert first is not None
        strategy.observe(*first, 1)
        second = strategy.next_document()
        assert second is not None
        turns[level] = (first[1] in "ab") == (second[1] in "ab")  # the same run again?
    assert turns == {1: True, 2: False}


def test_a_document_observed_twice_is_learnt_from_once():
    frame = runs_from_text("1 Q0 a 1 3 A\n1 Q0 b 2 2 A\n", "1 Q0 c 1 3 B\n1 Q0 d 2 2 B\n")
    once = make_strategy("bandit", candidates_of(frame, None))
    twice = make_strategy("bandit", candidates_of(frame, None))
    doc = once.next_document()
    assert doc is not None
    once.observe(*doc, 0)
    twice.observe(*doc, 0)
    twice.observe(*doc, 1)
    assert (once.observed, twice.observed) == (1, 1)
    assert judge(once, {}) == judge(twice, {})


def test_a_judgment_of_a_document_no_run_offers_is_refused():
    strategy = make_strategy("mtf", candidates_of(runs_from_text("1 Q0 a 1 3 A\n"), None))
    with pytest.raises(UnknownDocument, match="topic '1', docno 'zz'"):
        strategy.observe("1", "zz", 1)
    with pytest.raises(UnknownDocument, match="topic '9'"):
        strategy.observe("9", "a", 1)


def test_an_unknown_strategy_or_allocation_names_the_known_ones():
    candidates = candidates_of(runs_from_text("1 Q0 a 1 3 A\n"), None)
    with pytest.raises(ValueError, match="unknown strategy 'greedy' \\(strategies: depth, mtf"):
        make_strategy("greedy", candidates)
    with pytest.raises(ValueError, match="unknown allocation 'fair' \\(one of equal, adaptive\\)"):
        make_strategy("mtf", candidates, allocation="fair")


def test_every_strategy_judges_each_candidate_once_and_then_stops():
    frame = runs_from_text(
        "1 Q0 a 1 3 A\n1 Q0 b 2 2 A\n2 Q0 x 1 2 A\n", "1 Q0 b 1 3 B\n1 Q0 c 2 2 B\n2 Q0 y 1 1 B\n"
    )
    for name, allocation in itertools.product(STRATEGIES, ALLOCATIONS):
        strategy = make_strategy(name, candidates_of(frame, None), allocation=allocation)
        made = judge(strategy, {("1", "a"): 1})
        assert sorted(made) == [("1", "a"), ("1", "b"), ("1", "c"), ("2", "x"), ("2", "y")]
        assert strategy.next_document() is None


def test_the_ap_prior_of_a_ranking_sums_to_one_and_falls_with_rank():
    for length in (1, 2, 10, 1000):
        prior = ap_prior(np.arange(1, length + 1), np.full(length, length))
        assert math.isclose(prior.sum(), 1.0)
        assert np.all(np.diff(prior) < 0)
    assert math.isclose(ap_prior(np.array([1]), np.array([2]))[0], (1 + 1 + 0.5) / 4)


def test_mm_ns_discounts_an_arms_earlier_judgments_at_each_new_one():
    """Relevant, relevant, not relevant: a = 0.9 (0.9 * 1 + 1) = 1.71, b = 1, and the
    posterior mean under Beta(1, 1) is (a + 1) / (a + b + 2)."""
    frame = runs_from_text("1 Q0 a 1 3 A\n1 Q0 b 2 2 A\n1 Q0 c 3 1 A\n1 Q0 d 4 0 A\n")
    strategy = make_strategy("bandit", candidates_of(frame, None), allocation="adaptive")
    judge(strategy, {("1", "a"): 1, ("1", "b"): 1}, limit=3)
    assert isinstance(strategy, MaxMean)
    assert math.isclose(strategy.mean(0), (1.71 + 1) / (1.71 + 1 + 2))
