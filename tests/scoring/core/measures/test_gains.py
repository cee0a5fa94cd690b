"""trec_eval's gain table and ideal ranking, and that its cost does not follow the labels."""

import math
import re
import time

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from scoring.core.measures.columns import PlainQrels
from scoring.core.measures.gains import (
    AbsentLabels,
    GainLevel,
    c_divide,
    c_int,
    compare_gains,
    gain_table,
    topic_gains,
)
from scoring.core.measures.rankings import Judgments


def merge_sort(items, compare):
    """glibc's qsort, a top-down merge sort, entry by entry (the reference)."""
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    left, right = merge_sort(items[:half], compare), merge_sort(items[half:], compare)
    merged = []
    i = j = 0
    while i < len(left) and j < len(right):
        if compare(left[i], right[j]) <= 0:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            j += 1
    return merged + left[i:] + right[j:]


def _sorted_gains(*gains: float) -> list[float]:
    pairs = tuple((str(100 + i), gain) for i, gain in enumerate(gains))
    return [entry.gain for entry in gain_table(pairs, {}, 0).entries()]


def test_the_table_is_sorted_as_glibc_qsort_does_with_a_truncating_comparator():
    assert _sorted_gains(3.0, 9.0, 4.5, 0.0) == [0.0, 3.0, 4.5, 9.0]
    # 4.5 and 4 compare equal and keep their order; so do 1.5 and 0.9 below,
    # while 0.9 < 2.2: not transitive, and the merge order decides.
    assert _sorted_gains(4.5, 4.0) == [4.5, 4.0]
    assert _sorted_gains(1.5, 2.2, 0.9) == [1.5, 0.9, 2.2]


def test_gain_levels_default_to_the_label_and_take_given_pairs():
    table = gain_table((("2", 9.0), ("p", 0.5), ("7", 1.5)), {0: 4, 1: 2, 2: 1}, 3)
    # Label 7 is named but not judged: no documents. 1.5 and 1.0 compare equal
    # (the difference truncates to 0), so the merge keeps 1.5 first.
    assert list(table.entries()) == [
        GainLevel(0, 0.0, 4),
        GainLevel(7, 1.5, 0),
        GainLevel(1, 1.0, 2),
        GainLevel(2, 9.0, 1),
    ]


def test_ideal_walk_takes_gains_from_the_top_and_stops_at_the_first_not_positive():
    table = gain_table((("5", 3.0), ("2", 9.0)), {0: 4, 1: 2, 2: 1}, 3)
    assert table.ideal_walk() == (9.0, [9.0, 1.0, 1.0, 0.0])
    negative_first = gain_table((("1", -1.0),), {0: 1, 1: 2}, 2)
    assert negative_first.ideal_walk() == (0.0, [])


def test_labels_no_document_has_are_kept_as_ranges():
    table = gain_table((), {0: 3, 1000: 1, 2_147_483_647: 2}, 2_147_483_648)
    assert table.segments == [
        GainLevel(0, 0.0, 3),
        AbsentLabels(1, 999),
        GainLevel(1000, 1000.0, 1),
        AbsentLabels(1001, 2_147_483_646),
        GainLevel(2_147_483_647, 2_147_483_647.0, 2),
    ]
    assert table.gain_of(5) == 5.0
    assert table.gain_of(-1) == 0.0
    assert table.ideal_walk() == (2_147_483_647.0, [2_147_483_647.0] * 2 + [1000.0, 0.0])


def test_an_absent_label_can_be_the_top_of_the_table():
    # Label 5 judged but given the gain 0: the top entry is absent label 4.
    table = gain_table((("5", 0.0),), {0: 1, 5: 2}, 6)
    assert table.top == 4.0
    assert table.ideal_walk() == (4.0, [0.0])


def test_a_gain_table_costs_its_pairs_and_judged_labels_not_its_largest_label():
    pairs = (("1", 0.5), ("3", 2.5), ("2147483000", -7.25), ("x", 1.0), ("7", 1e12))
    start = time.perf_counter()
    for _ in range(20):
        table = gain_table(pairs, {0: 10, 3: 4, 40_000: 2, 2_147_483_647: 1}, 2_147_483_648)
        table.unit_range().ideal_walk()
    assert time.perf_counter() - start < 0.5
    assert len(table.segments) < 5 * 32 * 2  # pairs x log2(labels), not labels


def test_the_comparator_converts_as_x86_64_does():
    assert compare_gains(4.5, 4.0) == 0
    assert compare_gains(0.9, 2.2) == -1
    assert compare_gains(2.0**31, 0.0) == -(2**31)  # out of range: INT_MIN
    assert c_int(float("nan")) == c_int(float("inf")) == -(2**31)
    assert c_int(-(2.0**31)) == -(2**31)
    assert c_int(2.0**31 - 0.5) == 2**31 - 1


# --------------------------------------------------------------------------
# Against the table as trec_eval builds it, every label written out


_C_INTEGER = re.compile(r"[+-]?[0-9]+")


def reference_entries(
    pairs: tuple[tuple[str, float], ...], level_counts: dict[int, int], num_rel_levels: int
) -> list[GainLevel]:
    """setup_gains, line by line: a gain for every label up to the highest, then qsort.

    (setup_gains looks for the label among all entries so far; only the pairs
    can hold it, so the first pair naming it is found by a dict here.)
    """
    levels = [GainLevel(int(name), gain, 0) for name, gain in pairs if _C_INTEGER.fullmatch(name)]
    named: dict[int, int] = {}
    for index, entry in enumerate(levels):
        named.setdefault(entry.level, index)
    for label in range(num_rel_levels):
        count = level_counts.get(label, 0)
        if label in named:
            levels[named[label]] = levels[named[label]]._replace(documents=count)
        else:
            levels.append(GainLevel(label, float(label), count))
    return merge_sort(levels, lambda a, b: compare_gains(a.gain, b.gain))


def reference_unit_range(levels: list[GainLevel]) -> list[GainLevel]:
    """m_rbp's rescaling, with C's running min and max (NaN never counts) and division."""
    values = [e.gain for e in levels if not math.isnan(e.gain)]
    if not values:
        return levels
    low, high = min(values), max(values)
    if low >= 0 and high <= 1:
        return levels
    return [e._replace(gain=c_divide(e.gain - low, high - low)) for e in levels]


def reference_walk(levels: list[GainLevel]) -> tuple[float, list[float]]:
    top = levels[-1].gain if levels else 0.0
    if not top > 0:
        return top, []
    walk: list[float] = []
    for entry in reversed(levels):
        if entry.documents == 0:
            continue
        if not entry.gain > 0:
            return top, [*walk, entry.gain]
        walk.extend([entry.gain] * entry.documents)
    return top, [*walk, 0.0]


gains = st.one_of(
    st.sampled_from([0.0, 0.5, 0.9, 1.0, 1.5, 2.2, 3.0, 4.5, 9.0, -1.0, -0.5, -3.75, 100.0]),
    st.floats(-30, 30, allow_nan=False),
    st.sampled_from([1e10, -1e10, 2.0**31, float("inf"), float("-inf"), float("nan")]),
)
names = st.one_of(
    st.integers(-3, 16).map(str),
    st.sampled_from(["+2", "007", "-0", "p", "1.5", "", "3x"]),
)


@settings(max_examples=1500, deadline=None)
@given(
    st.dictionaries(st.integers(0, 14), st.integers(1, 3), max_size=6),
    st.lists(st.tuples(names, gains), max_size=7).map(tuple),
    st.booleans(),
)
@example({0: 4, 1: 2, 2: 1}, (("2", 9.0), ("p", 0.5), ("7", 1.5)), False)
@example({0: 1, 5: 2}, (("5", 0.0),), True)
def test_the_table_is_trec_eval_s_with_every_label_written_out(level_counts, pairs, unit_range):
    num_rel_levels = max(level_counts, default=-1) + 1
    table = gain_table(pairs, level_counts, num_rel_levels)
    expected = reference_entries(pairs, level_counts, num_rel_levels)
    if unit_range:
        table, expected = table.unit_range(), reference_unit_range(expected)
    assert _same(list(table.entries()), expected)
    assert _same_floats(table.ideal_walk(), reference_walk(expected))
    for label in {*range(-3, 17), *(e.level for e in expected)}:
        first = next((e.gain for e in expected if e.level == label), 0.0)
        assert _same_floats(table.gain_of(label), first)


def _same(entries: list[GainLevel], expected: list[GainLevel]) -> bool:
    return [(e.level, e.documents) for e in entries] == [
        (e.level, e.documents) for e in expected
    ] and all(_same_floats(a.gain, b.gain) for a, b in zip(entries, expected, strict=True))


def _same_floats(a: object, b: object) -> bool:
    """Equal, NaN equal to NaN (repr compares them as trec_eval would print them)."""
    return repr(a) == repr(b)


def test_one_judgment_of_label_32767_gives_trec_eval_s_table_at_once():
    pairs, counts = (("1", 0.5), ("4", 4.5)), {0: 5, 1: 1, 32767: 1}
    start = time.perf_counter()
    table = gain_table(pairs, counts, 32768)
    walk = table.ideal_walk()
    assert time.perf_counter() - start < 0.05
    expected = reference_entries(pairs, counts, 32768)  # 32,768 entries written out
    assert list(table.entries()) == expected
    assert walk == reference_walk(expected)


def test_one_judgment_of_the_largest_label_is_as_quick():
    start = time.perf_counter()
    table = gain_table((("1", 0.5), ("4", 4.5)), {0: 5, 1: 1, 2**31 - 1: 1}, 2**31)
    top, walk = table.ideal_walk()
    assert time.perf_counter() - start < 0.05
    assert (top, walk[0]) == (2**31 - 1, 2**31 - 1)


# --------------------------------------------------------------------------
# Against the implementation it replaces (every label enumerated, Python's
# int() as the comparator), on label ranges small enough for it


def old_gain_levels(pairs, level_counts, num_rel_levels):
    levels = [GainLevel(int(name), gain, 0) for name, gain in pairs if _C_INTEGER.fullmatch(name)]
    for label in range(num_rel_levels):
        count = level_counts.get(label, 0)
        given = next((i for i, entry in enumerate(levels) if entry.level == label), None)
        if given is None:
            levels.append(GainLevel(label, float(label), count))
        else:
            levels[given] = levels[given]._replace(documents=count)
    return merge_sort(levels, lambda a, b: int(a.gain - b.gain))


def old_gain_of(levels, label):
    return next((entry.gain for entry in levels if entry.level == label), 0.0)


def old_rescaled_to_unit_range(levels):
    if not levels:
        return levels
    low = min(entry.gain for entry in levels)
    high = max(entry.gain for entry in levels)
    if low >= 0 and high <= 1:
        return levels
    return [entry._replace(gain=(entry.gain - low) / (high - low)) for entry in levels]


qrels_rows = st.lists(
    st.tuples(st.sampled_from(["1", "2", "3"]), st.integers(0, 9), st.integers(-2, 12)),
    min_size=1,
    max_size=25,
    unique_by=lambda row: row[:2],
)
moderate_gains = st.one_of(
    st.sampled_from([0.0, 0.5, 0.9, 1.0, 1.5, 2.2, 4.5, 9.0, -1.0, -0.5]), st.floats(-50, 50)
)


@settings(max_examples=500, deadline=None)
@given(
    qrels_rows,
    st.lists(st.tuples(st.integers(-2, 14).map(str), moderate_gains), max_size=6).map(tuple),
    st.booleans(),
)
def test_the_gains_of_every_topic_are_those_of_the_implementation_they_replace(
    rows, pairs, unit_range
):
    judgments = Judgments(
        PlainQrels.of(
            [topic for topic, _, _ in rows],
            [f"d{doc}" for _, doc, _ in rows],
            relevance=[label for *_, label in rows],
        ),
        1,
    )
    counts = judgments.label_counts()
    for topic in range(len(judgments.topics)):
        levels = old_gain_levels(
            pairs, counts.level_counts(topic), int(counts.num_rel_levels[topic])
        )
        if unit_range:
            gains = {entry.gain for entry in levels}
            assume(len(gains) > 1 or not gains or gains <= {0.0, 1.0})  # else 0/0: old raised
            levels = old_rescaled_to_unit_range(levels)
        new = topic_gains(judgments, pairs, unit_range=unit_range)
        expected_table = [old_gain_of(levels, label) for label in counts.label_values.tolist()]
        assert new.table[topic].tolist() == expected_table
        top, walk = reference_walk(levels)
        assert new.top[topic] == top
        assert new.walks[topic].tolist() == walk
