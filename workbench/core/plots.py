"""Pictures drawn on the server with matplotlib: a `Plot` is a title, its numbers
as CSV and a drawing function; `Plot.render("svg" | "png")` gives the file.
Pure core, no Django (the leaderboard's and the pool page's builders use it).

matplotlib is loaded only when a picture is rendered (it costs 0.3 s), with
the non-interactive Agg backend and a Figure of its own per picture, so a
server never opens a window or shares pyplot's global state between threads.

Readable on screen and in print: dark colours (contrast 4.5:1 or more on
white, text and marks alike), text kept as text in the SVG (searchable and
read by screen readers), a title and labelled axes on every plot, the title
as the SVG's <title>, and the same bytes for the same numbers. Text is
always literal (`LITERAL_TEXT`): names from uploads are never read as mathtext.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.spreadsheets import csv_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes

FORMATS = {"svg": "image/svg+xml", "png": "image/png"}

# Contrast with white (WCAG): navy 10.6:1, dark red 8.0:1, dark grey 7.0:1.
NAVY, DARK_RED, GREY = "#1b3a6b", "#9b1c31", "#555555"
# Distinct dark colours for lines (each 4.5:1 or more on white), then dashes.
LINE_COLOURS = ("#1b3a6b", "#9b1c31", "#1e6b3a", "#6b3a8c", "#8a5a00", "#005f73")
LINE_STYLES = ("-", "--", ":", "-.")


# Text in a picture is drawn as written, whoever wrote it: a run tag, topic id or
# measure name such as `$\immediate\write18{id}$` is not mathtext (a parse error
# that broke every picture holding it) nor LaTeX. The one place that decides it:
# every picture is drawn inside `Plot.render`, under these settings.
LITERAL_TEXT: dict[Any, Any] = {"text.parse_math": False, "text.usetex": False}
# rc_context changes matplotlib's settings for the whole process: one picture at a
# time, so that a thread drawing never sees another's settings come and go
# (matplotlib's own caches are not thread-safe either).
_RENDERING = threading.Lock()


class PlotError(ValueError):
    """A picture that cannot be drawn from these numbers (the message says why)."""


@dataclass(frozen=True)
class Plot:
    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    draw: Callable[[Axes], None]
    size: tuple[float, float] = (8.0, 4.5)  # inches

    def csv(self) -> str:
        return csv_text(self.header, self.rows)

    def render(self, fmt: str) -> bytes:
        if fmt not in FORMATS:
            raise PlotError(f"format {fmt!r}: one of {', '.join(FORMATS)}")
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.figure import Figure

        out = io.BytesIO()
        # LITERAL_TEXT around drawing and saving alike: matplotlib makes tick labels
        # and legends only as it saves, each reading the settings then.
        settings = LITERAL_TEXT | {"svg.fonttype": "none", "svg.hashsalt": "workbench"}
        with _RENDERING, matplotlib.rc_context(settings):
            # A Figure of our own, not pyplot's global state: requests run in threads.
            figure = Figure(figsize=self.size, layout="constrained")
            axes = figure.add_subplot()
            axes.set_title(self.title, fontsize=11)
            self.draw(axes)
            # Fixed metadata and ids: the same numbers give the same bytes.
            metadata = {"Title": self.title, "Date": None} if fmt == "svg" else {"Software": None}
            figure.savefig(out, format=fmt, dpi=150, metadata=metadata)
        return out.getvalue()
