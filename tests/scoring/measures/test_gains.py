"""trec_eval's gain table and ideal ranking."""

from scoring.measures.gains import GainLevel, gain_levels, ideal_walk, merge_sort


def _truncated(a: float, b: float) -> int:
    return int(a - b)


def test_merge_sort_orders_like_glibc_qsort_with_a_truncating_comparator():
    assert merge_sort([3.0, 9.0, 4.5, 0.0], _truncated) == [0.0, 3.0, 4.5, 9.0]
    # 4.5 and 4 compare equal and keep their order; so do 1.5 and 0.9 below,
    # while 0.9 < 2.2: not transitive, and the merge order decides.
    assert merge_sort([4.5, 4.0], _truncated) == [4.5, 4.0]
    assert merge_sort([1.5, 2.2, 0.9], _truncated) == [1.5, 0.9, 2.2]


def test_gain_levels_default_to_the_label_and_take_given_pairs():
    levels = gain_levels((("2", 9.0), ("p", 0.5), ("7", 1.5)), {0: 4, 1: 2, 2: 1}, 3)
    # Label 7 is named but not judged: no documents. 1.5 and 1.0 compare equal
    # (the difference truncates to 0), so the merge keeps 1.5 first.
    assert levels == [
        GainLevel(0, 0.0, 4),
        GainLevel(7, 1.5, 0),
        GainLevel(1, 1.0, 2),
        GainLevel(2, 9.0, 1),
    ]


def test_ideal_walk_takes_gains_from_the_top_and_stops_at_the_first_not_positive():
    levels = [
        GainLevel(0, 0.0, 4),
        GainLevel(1, 1.0, 2),
        GainLevel(5, 3.0, 0),
        GainLevel(2, 9.0, 1),
    ]
    assert ideal_walk(levels) == (9.0, [9.0, 1.0, 1.0, 0.0])
    negative_first = [GainLevel(1, -1.0, 2), GainLevel(0, 0.0, 1)]
    assert ideal_walk(negative_first) == (0.0, [])
