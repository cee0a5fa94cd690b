"""Overlap planner: K distinct assessors per overlap item, balanced, spread, deterministic."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from judging.core import overlap
from judging.core.overlap import OverlapPlanError, OverlapSpec, plan_overlap

ASSESSORS = ["ann", "bob", "cat", "dan", "eve"]


def make_entries(sizes: dict[str, int], seed: int = 0) -> pd.DataFrame:
    """Pool entries: `sizes[topic]` documents per topic in a shuffled presentation order."""
    rng = np.random.default_rng(seed)
    frames = [
        pd.DataFrame({"query_id": topic, "doc_id": [f"{topic}-d{i}" for i in range(size)]}).assign(
            order=rng.permutation(size)
        )
        for topic, size in sizes.items()
    ]
    return pd.concat(frames, ignore_index=True)


def make_primaries(topics, assessors=ASSESSORS) -> dict[str, str]:
    return {topic: assessors[i % len(assessors)] for i, topic in enumerate(topics)}


SIZES = {"1": 40, "2": 40, "3": 25, "4": 10}


def drawn_items(entries: pd.DataFrame, spec: OverlapSpec) -> pd.DataFrame:
    """The items a plan draws for these entries (who judges them aside)."""
    topics = entries["query_id"].unique()
    primaries = dict.fromkeys(topics, ASSESSORS[0])
    return plan_overlap(entries, primaries=primaries, assessors=ASSESSORS, spec=spec).items


def make_plan(sizes=SIZES, *, k=2, fraction=0.2, topics=None, seed=1, assessors=ASSESSORS):
    spec = OverlapSpec(k=k, fraction=fraction, topics=topics, seed=seed)
    return plan_overlap(
        make_entries(sizes),
        primaries=make_primaries(sizes, assessors),
        assessors=assessors,
        spec=spec,
    )


def assert_k_distinct_assessors(plan, primaries, k):
    """Every overlap item: K - 1 extra assessors, distinct, none of them the primary."""
    extra = plan.assignments.groupby(["query_id", "doc_id"]).assessor
    assert (extra.nunique() == k - 1).all()
    assert (extra.size() == k - 1).all()
    assert len(extra.size()) == len(plan.items)
    primary = plan.assignments.query_id.map(primaries)
    assert (plan.assignments.assessor != primary).all()


def loads(plan, assessors):
    return np.array([plan.cost.per_assessor[a] for a in assessors])


def balanced_plan_exists(items, primaries, assessors, k) -> bool:
    """Reference: is there an assignment whose loads differ by at most one? (LP; the
    item/assessor incidence matrix is totally unimodular, so LP feasible = integer feasible)."""
    pairs = [
        (i, a)
        for i, topic in enumerate(items.query_id)
        for a, who in enumerate(assessors)
        if who != primaries[topic]
    ]
    total = len(items) * (k - 1)
    low, high = total // len(assessors), -(-total // len(assessors))
    a_eq = np.zeros((len(items), len(pairs)))
    a_ub = np.zeros((2 * len(assessors), len(pairs)))
    for column, (i, a) in enumerate(pairs):
        a_eq[i, column] = 1
        a_ub[a, column] = 1  # load <= high
        a_ub[len(assessors) + a, column] = -1  # -load <= -low
    b_ub = np.concatenate([np.full(len(assessors), high), np.full(len(assessors), -low)])
    result = linprog(
        np.zeros(len(pairs)),
        A_ub=a_ub,
        b_ub=b_ub,
        A_eq=a_eq,
        b_eq=np.full(len(items), k - 1),
        bounds=(0, 1),
        method="highs",
    )
    return result.status == 0


# --------------------------------------------------------------------------
# Which items


@pytest.mark.parametrize(
    ("size", "fraction", "expected"),
    [
        (10, 0.15, 2),  # 1.5 rounds up
        (10, 0.25, 3),  # 2.5 rounds up
        (10, 0.24, 2),
        (200, 0.285, 57),  # 56.99999999999999 in floats
        (10, 0.01, 1),  # at least one
        (7, 1.0, 7),
        (3, 1 / 3, 1),
    ],
)
def test_overlap_count_is_round_half_up_of_fraction_times_size(size, fraction, expected):
    sizes = overlap.overlap_sizes(make_entries({"1": size}), OverlapSpec(k=2, fraction=fraction))
    assert sizes.n_overlap.tolist() == [expected]
    items = drawn_items(make_entries({"1": size}), OverlapSpec(k=2, fraction=fraction))
    assert len(items) == expected


def test_overlap_sizes_count_extra_judgments_per_topic():
    entries = make_entries({"1": 10, "2": 20, "3": 5})
    sizes = overlap.overlap_sizes(
        entries, OverlapSpec(k=3, fraction=0.5, topics=frozenset({"1", "3"}))
    )
    assert list(sizes.columns) == list(overlap.SIZE_COLUMNS)
    assert sizes.to_dict("list") == {
        "query_id": ["1", "2", "3"],
        "n_entries": [10, 20, 5],
        "n_overlap": [5, 0, 3],
        "extra_judgments": [10, 0, 6],
    }


def test_whole_topics_are_fully_overlapped_and_others_untouched():
    plan = make_plan(k=2, fraction=1.0, topics=frozenset({"2", "4"}))
    assert set(plan.items.query_id) == {"2", "4"}
    assert len(plan.items) == 50
    assert set(plan.assignments.query_id) == {"2", "4"}
    assert_k_distinct_assessors(plan, make_primaries(SIZES), 2)


def test_overlap_items_are_spread_through_the_pool_order():
    entries = make_entries({"1": 100, "2": 97})
    items = drawn_items(entries, OverlapSpec(k=2, fraction=0.1, seed=3))
    for topic, size in (("1", 100), ("2", 97)):
        positions = np.sort(items[items.query_id == topic].primary_position.to_numpy())
        # one item in each of the ten strata of the queue: never bunched at an end
        strata = positions * 10 // size
        assert strata.tolist() == list(range(10))
        assert positions[0] < size // 10 <= positions[1]
        assert positions[-1] >= size - size // 10 - 1


def test_primary_position_is_the_place_in_the_pool_order():
    entries = make_entries({"1": 30})
    items = drawn_items(entries, OverlapSpec(k=2, fraction=0.3, seed=5))
    rank = entries.set_index("doc_id").order.rank(method="first").astype(int) - 1
    assert (items.primary_position == items.doc_id.map(rank)).all()
    assert (items.order == items.doc_id.map(entries.set_index("doc_id").order)).all()


def test_draw_is_a_sample_not_a_fixed_pattern():
    entries = make_entries({"1": 100})
    first = drawn_items(entries, OverlapSpec(k=2, fraction=0.1, seed=1))
    second = drawn_items(entries, OverlapSpec(k=2, fraction=0.1, seed=2))
    assert set(first.doc_id) != set(second.doc_id)


def test_each_item_is_about_equally_likely_to_be_drawn():
    entries = make_entries({"1": 20})
    draws = 200
    drawn = pd.concat(
        drawn_items(entries, OverlapSpec(k=2, fraction=0.25, seed=s)) for s in range(draws)
    )
    # strata of 4: each item has probability 1/4 (standard error 0.03 here)
    frequency = drawn.doc_id.value_counts().reindex(entries.doc_id, fill_value=0) / draws
    assert frequency.between(0.25 - 0.1, 0.25 + 0.1).all()


def test_topic_draw_does_not_depend_on_which_other_topics_are_chosen():
    entries = make_entries({"1": 30, "2": 30, "3": 30})
    alone = drawn_items(entries, OverlapSpec(k=2, fraction=0.2, topics=frozenset({"2"}), seed=4))
    together = drawn_items(entries, OverlapSpec(k=2, fraction=0.2, seed=4))
    assert set(alone.doc_id) == set(together[together.query_id == "2"].doc_id)


# --------------------------------------------------------------------------
# Who judges them


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_every_overlap_item_gets_k_distinct_assessors(k):
    plan = make_plan(k=k, fraction=0.3)
    assert_k_distinct_assessors(plan, make_primaries(SIZES), k)
    assert len(plan.assignments) == len(plan.items) * (k - 1)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("k", [2, 3])
def test_extra_loads_differ_by_at_most_one(seed, k):
    plan = make_plan(k=k, fraction=0.35, seed=seed)
    per_assessor = loads(plan, ASSESSORS)
    assert per_assessor.max() - per_assessor.min() <= 1


def test_balance_is_the_best_possible_when_one_assessor_is_primary_everywhere():
    entries = make_entries({"1": 20, "2": 13})
    primaries = {"1": "ann", "2": "ann"}
    plan = plan_overlap(
        entries,
        primaries=primaries,
        assessors=["ann", "bob", "cat"],
        spec=OverlapSpec(k=2, fraction=1.0),
    )
    assert plan.cost.per_assessor["ann"] == 0
    assert sorted([plan.cost.per_assessor["bob"], plan.cost.per_assessor["cat"]]) == [16, 17]


def test_rebalancing_moves_work_along_chains_until_balanced():
    # Start from the worst assignment: everything on assessor 0; item i's
    # primary is 1 + i % 3, so some moves must go through a third assessor.
    primary = np.array([1 + i % 3 for i in range(12)])
    chosen = np.zeros((12, 1), dtype=np.int64)
    overlap._rebalance(chosen, primary, 4)
    per_assessor = np.bincount(chosen.ravel(), minlength=4)
    assert per_assessor.tolist() == [3, 3, 3, 3]
    assert (chosen[:, 0] != primary).all()


@given(
    sizes=st.lists(st.integers(1, 8), min_size=1, max_size=4),
    n_assessors=st.integers(2, 5),
    primary_choice=st.lists(st.integers(0, 5), min_size=4, max_size=4),
    k=st.integers(2, 5),
    fraction=st.sampled_from([0.2, 0.5, 1.0]),
    seed=st.integers(0, 10),
)
@settings(max_examples=150, deadline=None)
def test_plans_are_valid_and_as_balanced_as_possible(
    sizes, n_assessors, primary_choice, k, fraction, seed
):
    topics = [str(t) for t in range(len(sizes))]
    assessors = ASSESSORS[:n_assessors]
    everyone = [*ASSESSORS, "outsider"]  # a primary may not take extra work at all
    primaries = {t: everyone[c] for t, c in zip(topics, primary_choice, strict=False)}
    entries = make_entries(dict(zip(topics, sizes, strict=True)), seed=seed)
    spec = OverlapSpec(k=k, fraction=fraction, seed=seed)
    fits = all(len(set(assessors) - {primaries[t]}) >= k - 1 for t in topics)
    if not fits:
        with pytest.raises(OverlapPlanError, match="besides the primary"):
            plan_overlap(entries, primaries=primaries, assessors=assessors, spec=spec)
        return
    plan = plan_overlap(entries, primaries=primaries, assessors=assessors, spec=spec)
    assert_k_distinct_assessors(plan, primaries, k)
    spread = np.ptp(loads(plan, assessors))
    if balanced_plan_exists(plan.items, primaries, assessors, k):
        assert spread <= 1
    else:
        assert spread > 1


def test_primary_outside_the_assessor_list_is_fine():
    entries = make_entries({"1": 10})
    plan = plan_overlap(
        entries,
        primaries={"1": "organiser"},
        assessors=["ann", "bob"],
        spec=OverlapSpec(k=3, fraction=0.5),
    )
    assert_k_distinct_assessors(plan, {"1": "organiser"}, 3)


# --------------------------------------------------------------------------
# Queues


def test_extra_assessor_queue_follows_the_pool_order():
    plan = make_plan(k=3, fraction=0.5)
    for _, queue in plan.assignments.groupby(["assessor", "query_id"]):
        assert queue.position.tolist() == list(range(len(queue)))
        assert queue.order.is_monotonic_increasing


def test_extra_queues_are_spread_over_the_primary_queue():
    plan = make_plan({"1": 100}, k=2, fraction=0.2, seed=2)
    place = plan.items.set_index("doc_id").primary_position
    for _, queue in plan.assignments.groupby("assessor"):
        positions = queue.doc_id.map(place)
        assert positions.min() < 50 < positions.max()


def test_assignment_columns():
    plan = make_plan()
    assert list(plan.assignments.columns) == list(overlap.ASSIGNMENT_COLUMNS)
    assert list(plan.items.columns) == list(overlap.ITEM_COLUMNS)


# --------------------------------------------------------------------------
# Cost


def test_cost_equals_what_the_plan_assigns():
    plan = make_plan(k=3, fraction=0.25)
    assigned = plan.assignments
    assert plan.cost.total == len(assigned) == sum(plan.cost.per_assessor.values())
    assert plan.cost.per_assessor == {a: int((assigned.assessor == a).sum()) for a in ASSESSORS}
    predicted = overlap.overlap_sizes(make_entries(SIZES), plan.spec)
    assert plan.cost.per_topic == dict(
        zip(predicted.query_id, predicted.extra_judgments.tolist(), strict=True)
    )
    assert plan.cost.total == predicted.extra_judgments.sum()


def test_cost_lists_every_assessor_and_serialises():
    plan = make_plan({"1": 4}, k=2, fraction=0.25)
    assert set(plan.cost.per_assessor) == set(ASSESSORS)
    assert sorted(plan.cost.per_assessor.values()) == [0, 0, 0, 0, 1]
    decoded = json.loads(json.dumps(plan.cost.to_dict()))
    assert decoded["total"] == 1
    assert decoded["per_topic"] == {"1": 1}


# --------------------------------------------------------------------------
# Determinism


def test_plan_is_deterministic_given_the_seed_and_input_order():
    first = make_plan(seed=7)
    shuffled = make_entries(SIZES).sample(frac=1.0, random_state=3)
    second = plan_overlap(
        shuffled, primaries=make_primaries(SIZES), assessors=ASSESSORS, spec=first.spec
    )
    pd.testing.assert_frame_equal(first.assignments, second.assignments)
    pd.testing.assert_frame_equal(first.items, second.items)
    other = make_plan(seed=8)
    assert not first.assignments.equals(other.assignments)


def test_spec_round_trips_through_json():
    spec = OverlapSpec(k=3, fraction=0.1, topics=frozenset({"b", "a"}), seed=9)
    data = json.loads(json.dumps(spec.to_dict()))
    assert data == {"k": 3, "fraction": 0.1, "topics": ["a", "b"], "seed": 9}
    assert OverlapSpec.from_dict(data) == spec
    assert OverlapSpec.from_dict({"k": 2}) == OverlapSpec(k=2)


def test_empty_pool_gives_an_empty_plan():
    entries = pd.DataFrame({"query_id": [], "doc_id": [], "order": []})
    plan = plan_overlap(entries, primaries={}, assessors=ASSESSORS, spec=OverlapSpec(k=2))
    assert plan.assignments.empty
    assert plan.cost.total == 0
    assert plan.cost.per_topic == {}


# --------------------------------------------------------------------------
# Validation


@pytest.mark.parametrize("k", [1, 0, -2, 2.0, True])
def test_k_below_two_or_not_an_integer_is_rejected(k):
    with pytest.raises(OverlapPlanError, match="K must be an integer of at least 2"):
        OverlapSpec(k=k)


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.01, float("nan")])
def test_fraction_outside_zero_one_is_rejected(fraction):
    with pytest.raises(OverlapPlanError, match=r"fraction must be in \(0, 1\]"):
        OverlapSpec(k=2, fraction=fraction)


def test_k_larger_than_the_available_assessors_is_rejected():
    entries = make_entries({"1": 10})
    with pytest.raises(
        OverlapPlanError,
        match=r"K=4 needs 3 assessors besides the primary of topic '1', 2 available",
    ):
        plan_overlap(
            entries,
            primaries={"1": "ann"},
            assessors=["ann", "bob", "cat"],
            spec=OverlapSpec(k=4),
        )


def test_unknown_topics_are_rejected():
    entries = make_entries({"1": 10})
    spec = OverlapSpec(k=2, topics=frozenset({"1", "99", "x"}))
    with pytest.raises(OverlapPlanError, match=r"topics not in the pool: \['99', 'x'\]"):
        plan_overlap(entries, primaries={"1": "ann"}, assessors=ASSESSORS, spec=spec)
    with pytest.raises(OverlapPlanError, match="topics not in the pool"):
        overlap.overlap_sizes(entries, spec)


def test_a_topic_without_primary_is_rejected():
    entries = make_entries({"1": 10, "2": 10})
    with pytest.raises(OverlapPlanError, match=r"topics without a primary assessor: \['2'\]"):
        plan_overlap(entries, primaries={"1": "ann"}, assessors=ASSESSORS, spec=OverlapSpec(k=2))


def test_topics_given_as_one_string_are_rejected():
    with pytest.raises(OverlapPlanError, match="not one string"):
        OverlapSpec(k=2, topics="12")  # type: ignore[arg-type]


def test_an_assessor_listed_twice_is_rejected():
    with pytest.raises(OverlapPlanError, match="listed twice"):
        plan_overlap(
            make_entries({"1": 5}),
            primaries={"1": "ann"},
            assessors=["bob", "bob"],
            spec=OverlapSpec(k=2),
        )


def test_a_duplicate_pool_entry_is_rejected():
    entries = pd.concat([make_entries({"1": 5})] * 2)
    with pytest.raises(OverlapPlanError, match="pool entry listed twice"):
        drawn_items(entries, OverlapSpec(k=2))


def test_missing_entry_columns_are_rejected():
    with pytest.raises(OverlapPlanError, match=r"lack columns \['order'\]"):
        overlap.overlap_sizes(make_entries({"1": 5}).drop(columns="order"), OverlapSpec(k=2))


def test_plan_errors_are_caught_as_value_errors_with_their_reason():
    """Views catch ValueError: a plan error must reach them with its message."""
    with pytest.raises(ValueError, match=r"K must be an integer of at least 2, got 1"):
        OverlapSpec(k=1)
    with pytest.raises(ValueError, match=r"fraction must be in \(0, 1\], got 1.5"):
        OverlapSpec(k=2, fraction=1.5)
