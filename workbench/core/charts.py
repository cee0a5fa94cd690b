"""Coordinates for the small SVG line charts the pages draw. Pure core.

The templates draw the SVG; this module only maps data to pixels, so every
chart has the same margins, ticks and number of grid lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Frame:
    """A plot area: x from `x_low` to `x_high`, y from 0 to `y_high` (plus headroom)."""

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
    def ceiling(self) -> float:
        return max(self.y_high, 1) * 1.1

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
        """Three ticks: zero, half way and the top of the data."""
        return [
            {"y": self.y(v), "label": round(v)} for v in (0, self.ceiling / 2, self.ceiling / 1.1)
        ]

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
