"""C-compatible arithmetic."""

import math
from functools import reduce

import numpy as np
import pytest

from scoring.core.measures.numerics import c_log, libm, log2_table, lround, sequential_sum


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


def _left_to_right(values: np.ndarray) -> np.ndarray:
    """The oracle: a plain Python loop adding one slice at a time, element by element."""
    width = int(np.prod(values.shape[1:], dtype=np.int64))
    totals = [0.0] * width
    for row in values.reshape(values.shape[0], width).tolist():
        totals = [total + x for total, x in zip(totals, row, strict=True)]
    return np.array(totals).reshape(values.shape[1:])


def _layouts(values: np.ndarray) -> list[np.ndarray]:
    """The array as callers pass it: contiguous, Fortran-ordered, and a strided view."""
    doubled = np.repeat(values, 2, axis=0)[::2]
    return [values, np.asfortranarray(values), doubled]


@pytest.mark.parametrize(
    "trailing", [(), (1,), (1, 1), (2,), (3,), (7,), (1, 3), (2, 5), (300,), (3, 1, 2)]
)
def test_sequential_sum_equals_a_left_to_right_loop_for_every_shape(trailing):
    # numpy's reduce adds a collapsed axis pairwise (8-way unrolled), which moves
    # the last bit of about half of all sums of 8 or more terms.
    rng = np.random.default_rng(len(trailing) * 100 + sum(trailing))
    for _ in range(60):
        n = int(rng.integers(0, 41))
        values = rng.random((n, *trailing)) * 10.0 ** rng.integers(-3, 3, (n, *trailing))
        for layout in _layouts(values):
            assert sequential_sum(layout).tolist() == _left_to_right(values).tolist()


def test_sequential_sum_of_a_transposed_matrix_runs_down_its_first_axis():
    values = np.random.default_rng(3).random((5, 33))  # callers pass (groups, ranks).T
    assert sequential_sum(values.T).tolist() == _left_to_right(values.T).tolist()
