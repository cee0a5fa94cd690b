"""The SVG charts' geometry: round y ticks, x labels inside the picture."""

from __future__ import annotations

import itertools
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.charts import CHAR_WIDTH, NICE_STEPS, Frame, nice_ticks


def is_round(step: float) -> bool:
    """1, 2, 2.5 or 5 times a power of ten."""
    mantissa = step / 10 ** math.floor(math.log10(step))
    return any(math.isclose(mantissa, nice) for nice in NICE_STEPS[:-1])


def test_nice_ticks_are_round_numbers_from_zero_past_the_data():
    assert nice_ticks(6065) == [0, 2000, 4000, 6000, 8000]
    assert nice_ticks(100) == [0, 20, 40, 60, 80, 100]
    assert nice_ticks(12) == [0, 5, 10, 15]  # counts: no 2.5
    assert nice_ticks(12, integer=False) == [0, 2.5, 5, 7.5, 10, 12.5]
    assert nice_ticks(3) == [0, 1, 2, 3]
    assert nice_ticks(0) == [0, 1]


@settings(max_examples=200)
@given(st.floats(min_value=1.0, max_value=1e9))
def test_nice_ticks_cover_the_data_in_at_most_five_round_steps(high):
    ticks = nice_ticks(high)
    step = ticks[1] - ticks[0]
    assert ticks[0] == 0
    assert ticks[-1] >= high
    assert ticks[-2] < high
    assert len(ticks) - 1 <= 5
    assert is_round(step)
    assert step == int(step)
    assert all(math.isclose(b - a, step) for a, b in itertools.pairwise(ticks))


def test_the_y_axis_ends_at_its_top_tick_and_no_tick_is_a_fraction_of_the_data():
    """Issue 23: a "6,065" tick (55% of the maximum) sat beside the 6,000 budget line."""
    frame = Frame(0, 20, 11027)
    labels = [tick["label"] for tick in frame.y_ticks()]
    assert labels == [0, 2500, 5000, 7500, 10000, 12500]
    assert frame.ceiling == 12500
    assert frame.y(12500) == frame.top
    assert frame.y(0) == frame.baseline


def test_an_x_label_at_an_edge_is_anchored_inside_the_picture():
    frame = Frame(0, 100, 50, width=560)
    for value, label in [(0, "Jun 28 2033"), (50, "Jul 3"), (100, "Jul 12"), (100, 100)]:
        tick = frame.x_tick(value, label)
        width = len(str(label)) * CHAR_WIDTH
        start = {"start": 0, "middle": width / 2, "end": width}[tick["anchor"]]
        assert tick["x"] - start >= 0
        assert tick["x"] - start + width <= frame.width
    assert frame.x_tick(100, "Jul 12")["anchor"] == "end"
    assert frame.x_tick(50, "Jul 3") == {"x": frame.x(50), "label": "Jul 3", "anchor": "middle"}
