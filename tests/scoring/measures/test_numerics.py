"""C-compatible arithmetic."""

import math
from functools import reduce

import numpy as np

from scoring.measures.numerics import c_log, libm, log2_table, lround, sequential_sum


def test_lround_rounds_halves_away_from_zero():
    values = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, 1.2])
    assert lround(values).tolist() == [1, 2, 3, -1, -3, 0, 1]


def test_sequential_sum_adds_in_order_like_a_c_loop():
    rng = np.random.default_rng(7)
    values = rng.random((300, 4)) * 10.0 ** rng.integers(-8, 8, (300, 4))
    expected = [reduce(lambda total, x: total + x, values[:, j].tolist(), 0.0) for j in range(4)]
    assert sequential_sum(values).tolist() == expected


def test_library_functions_are_those_of_the_c_library():
    values = np.array([[0.3, 2.0], [0.3, 1e-5]])
    assert libm(math.log, values).tolist() == [[math.log(0.3), math.log(2.0)]] * 1 + [
        [math.log(0.3), math.log(1e-5)]
    ]
    assert log2_table(6).tolist() == [-math.inf] + [math.log2(k) for k in range(1, 6)]


def test_c_log_of_zero_and_negatives_does_not_raise():
    logs = c_log(np.array([1.0, 0.0, -1.0]))
    assert logs[:2].tolist() == [0.0, -math.inf]
    assert math.isnan(logs[2])
