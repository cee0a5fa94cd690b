"""Coordinates for the small SVG line charts the pages draw. Pure core.

The templates draw the SVG; this module only maps data to pixels, so every
chart has the same margins, ticks and number of grid lines. The y axis has
round ticks from 0 (`nice_ticks`: matplotlib's MaxNLocator rule) and ends at
the last of them; an x label that would run past the picture's edge is
anchored inside it (`Frame.x_tick`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

# The steps of a round axis, times a power of ten (MaxNLocator's default steps).
NICE_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)
# Space above the data before the top tick: a line at the maximum stays inside.
HEADROOM = 1.04
TICK_FONT_PX = 11  # .chart .tick in app.css
CHAR_WIDTH = 0.62 * TICK_FONT_PX  # a digit or letter of the tick font, about


def nice_ticks(high: float, *, most: int = 5, integer: bool = True) -> list[float]:
    """Round ticks from 0 up to the first at or above `high`: at most `most` intervals,
    each 1, 2, 2.5 or 5 times a power of ten, the smallest such that fits (with
    `integer`, whole numbers only: counts are not split). [0, 1] for nothing."""
    if not high > 0 or not math.isfinite(high):
        return [0.0, 1.0]
    magnitude = 10.0 ** math.floor(math.log10(high / most))
    step = 0.0
    for scale in (1.0, 10.0):
        steps = [s * magnitude * scale for s in NICE_STEPS]
        fitting = [s for s in steps if (not integer or (s >= 1 and s.is_integer()))]
        fitting = [s for s in fitting if math.ceil(high / s) <= most]
        if fitting:
            step = fitting[0]
            break
    count = math.ceil(high / step)
    return [k * step for k in range(count + 1)]


@dataclass(frozen=True)
class Frame:
    """A plot area: x from `x_low` to `x_high`, y from 0 to `y_high` (up to the round
    tick at or above it, with a little headroom)."""

    x_low: float
    x_high: float
    y_high: float
    width: int = 560
    height: int = 200
    left: int = 56
    bottom: int = 28
    top: int = 10
    right_pad: int = 10

    @property
    def ticks(self) -> list[float]:
        return nice_ticks(max(self.y_high, 1) * HEADROOM)

    @property
    def ceiling(self) -> float:
        return self.ticks[-1]

    @property
    def right(self) -> int:
        return self.width - self.right_pad

    @property
    def baseline(self) -> int:
        return self.height - self.bottom

    def x(self, value: float) -> float:
        span = max(self.x_high - self.x_low, 1)
        return self.left + (value - self.x_low) / span * (self.right - self.left)

    def y(self, value: float) -> float:
        return self.top + (1 - value / self.ceiling) * (self.baseline - self.top)

    def points(self, xy: Iterable[tuple[float, float]]) -> str:
        """A polyline's `points` attribute."""
        return " ".join(f"{self.x(x):.1f},{self.y(y):.1f}" for x, y in xy)

    def y_ticks(self) -> list[dict[str, float]]:
        """Round ticks from zero to the top of the axis (`nice_ticks`)."""
        return [{"y": self.y(v), "label": round(v)} for v in self.ticks]

    def x_tick(self, value: float, label: object) -> dict[str, object]:
        """A tick label under `value`: centred, or ending at the picture's right edge
        (starting at its left) where a centred one would be cut off."""
        x = self.x(value)
        half = len(str(label)) * CHAR_WIDTH / 2
        if x + half > self.width:
            return {"x": self.width - 1, "label": label, "anchor": "end"}
        if x - half < 0:
            return {"x": 1, "label": label, "anchor": "start"}
        return {"x": x, "label": label, "anchor": "middle"}

    def box(self) -> dict[str, object]:
        """What every chart template needs besides its data."""
        return {
            "width": self.width,
            "height": self.height,
            "left": self.left,
            "right": self.right,
            "baseline": self.baseline,
            "y_ticks": self.y_ticks(),
        }
