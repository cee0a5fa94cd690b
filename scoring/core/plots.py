"""The leaderboard's pictures (`workbench.core.plots` draws them). Pure core."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from scoring.core.analysis.leaderboard import Leaderboard, ScoreTable
from scoring.core.analysis.pr_curve import PrecisionRecall
from workbench.core.plots import DARK_RED, GREY, LINE_COLOURS, LINE_STYLES, NAVY, Plot, PlotError

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def _ranked_values(board: Leaderboard, table: ScoreTable) -> np.ndarray:
    """The table's values of the board's topics, rows in the board's rank order."""
    rows = [table.runs.index(row.run) for row in board.runs]
    columns = [table.topics.index(topic) for topic in board.topics]
    return table.values[np.ix_(rows, columns)]


def box_plot(board: Leaderboard, table: ScoreTable) -> Plot:
    """The spread of each run's per-topic values, runs in rank order."""
    values = _ranked_values(board, table)
    names = [row.run for row in board.runs]

    def draw(axes: Axes) -> None:
        axes.boxplot(
            list(values),
            orientation="horizontal",
            tick_labels=names,
            showmeans=True,
            medianprops={"color": DARK_RED},
            meanprops={"marker": "D", "markerfacecolor": NAVY, "markeredgecolor": NAVY},
            boxprops={"color": NAVY},
            whiskerprops={"color": NAVY},
            capprops={"color": NAVY},
            flierprops={"markeredgecolor": GREY},
        )
        axes.invert_yaxis()  # the best run on top
        axes.set_xlabel(f"{board.measure} per topic ({len(board.topics)} topics)")
        axes.set_ylabel("run (ranked by mean; diamond: mean, red line: median)")
        axes.grid(axis="x", color="#dddddd")

    rows = tuple(
        (run, topic, float(value))
        for run, per_topic in zip(names, values, strict=True)
        for topic, value in zip(board.topics, per_topic, strict=True)
    )
    return Plot(
        f"{board.measure}: per-topic values of each run",
        ("run", "topic", board.measure),
        rows,
        draw,
        size=(8.0, max(3.0, 0.35 * len(names) + 1.5)),
    )


def difference_from_median(board: Leaderboard, table: ScoreTable, run: str) -> Plot:
    """TREC's per-topic plot: the run's value minus the median of all runs, per topic."""
    if run not in table.runs:
        raise PlotError(f"no run {run!r} (runs: {', '.join(table.runs)})")
    values = _ranked_values(board, table)
    names = [row.run for row in board.runs]
    mine = values[names.index(run)]
    median = np.median(values, axis=0)
    difference = mine - median
    topics = list(board.topics)

    def draw(axes: Axes) -> None:
        colours = [NAVY if d >= 0 else DARK_RED for d in difference]
        axes.bar(range(len(topics)), difference, color=colours)
        axes.axhline(0, color="black", linewidth=0.8)
        axes.set_xticks(range(len(topics)), topics, rotation=90 if len(topics) > 20 else 0)
        axes.set_xlabel("topic")
        axes.set_ylabel(f"{board.measure}: {run} minus the median")
        axes.grid(axis="y", color="#dddddd")

    rows = tuple(
        (topic, float(m), float(med), float(d))
        for topic, m, med, d in zip(topics, mine, median, difference, strict=True)
    )
    return Plot(
        f"{run}: {board.measure} per topic against the median of {len(names)} runs",
        ("topic", run, "median", "difference"),
        rows,
        draw,
    )


def significance_matrix(board: Leaderboard, test: str) -> Plot:
    """Adjusted p-values of every pair by one test, runs in rank order (the matrix
    is symmetric); * marks a significant difference, and with 12 runs or fewer
    each cell shows its p-value."""
    names = [row.run for row in board.runs]
    pairs = [pair for pair in board.pairs if pair.test == test]
    if not pairs and len(names) > 1:
        raise PlotError(f"the leaderboard has no {test!r} test")
    index = {name: k for k, name in enumerate(names)}
    matrix = np.full((len(names), len(names)), np.nan)
    for pair in pairs:
        matrix[index[pair.a], index[pair.b]] = matrix[index[pair.b], index[pair.a]] = (
            pair.p_adjusted
        )
    alpha = board.options.alpha

    def draw(axes: Axes) -> None:
        from matplotlib import colormaps

        # Dark (p near 0) to light (p near 1); a run against itself is grey.
        colours = colormaps["Blues_r"].with_extremes(bad="#bbbbbb")
        image = axes.imshow(matrix, cmap=colours, vmin=0.0, vmax=1.0)
        axes.set_xticks(range(len(names)), names, rotation=90)
        axes.set_yticks(range(len(names)), names)
        for pair in pairs:
            i, j = index[pair.a], index[pair.b]
            # White on the dark half, black on the light half: both 4.5:1 or more.
            ink = "white" if pair.p_adjusted < 0.5 else "black"
            mark = "*" if pair.significant else ""
            text = f"{pair.p_adjusted:.2f}{mark}" if len(names) <= 12 else mark
            for row, column in ((i, j), (j, i)):
                axes.text(column, row, text, ha="center", va="center", color=ink, fontsize=7)
        axes.set_xlabel("run")
        axes.set_ylabel("run (*: significant difference)")
        axes.figure.colorbar(image, ax=axes, label=f"p adjusted ({board.options.correction})")

    rows = tuple(
        (pair.a, pair.b, pair.p_value, pair.p_adjusted, pair.significant) for pair in pairs
    )
    side = max(4.0, 0.3 * len(names) + 2.5)
    return Plot(
        f"{board.measure}: {test} test of every pair, alpha {alpha:g}",
        ("a", "b", "p_value", "p_adjusted", "significant"),
        rows,
        draw,
        size=(side + 1.5, side),
    )


def precision_recall(curves: Mapping[str, Sequence[float]], recall: Sequence[float]) -> Plot:
    """Interpolated precision at each recall level, one line per run (trec_eval's
    iprec_at_recall, averaged over topics)."""
    return _recall_plot(
        f"Interpolated precision-recall ({len(recall)} recall levels)",
        {run: (recall, precision) for run, precision in curves.items()},
        steps=False,
    )


def precision_recall_on_topic(curves: Mapping[str, PrecisionRecall], topic: str) -> Plot:
    """Each run's interpolated precision at every recall level it reaches on one
    topic (steps: the precision holds up to the recall where it is reached)."""
    return _recall_plot(
        f"Interpolated precision-recall on topic {topic} (every recall level)",
        {run: (curve.recall, curve.precision) for run, curve in curves.items()},
        steps=True,
    )


type Line = tuple[Sequence[float] | np.ndarray, Sequence[float] | np.ndarray]


def _recall_plot(title: str, lines: Mapping[str, Line], *, steps: bool) -> Plot:
    """Precision against recall, a line (points, or steps) per run."""
    if not lines:
        raise PlotError("choose at least one run")

    def draw(axes: Axes) -> None:
        for k, (run, (recall, precision)) in enumerate(lines.items()):
            style = {"drawstyle": "steps-pre"} if steps else {"marker": "o", "markersize": 3}
            axes.plot(
                recall,
                precision,
                color=LINE_COLOURS[k % len(LINE_COLOURS)],
                linestyle=LINE_STYLES[(k // len(LINE_COLOURS)) % len(LINE_STYLES)],
                label=run,
                **style,
            )
        axes.set_xlim(0, 1)
        axes.set_ylim(0, 1.02)
        axes.set_xlabel("recall")
        axes.set_ylabel("interpolated precision")
        axes.grid(color="#dddddd")
        axes.legend(loc="upper right", fontsize=8)

    rows = tuple(
        (run, float(r), float(p))
        for run, (recall, precision) in lines.items()
        for r, p in zip(recall, precision, strict=True)
    )
    return Plot(title, ("run", "recall", "precision"), rows, draw, size=(6.5, 5.0))


def relevant_found(
    curves: Mapping[str, tuple[np.ndarray, np.ndarray]], relevant: int, title: str
) -> Plot:
    """Relevant documents found against judgments made, a line per pooling strategy
    (`scoring.core.pool_simulation`), with Q's relevant documents as a dotted ceiling.
    Each curve is (judgments, relevant found after them)."""
    if not curves:
        raise PlotError("no strategy to draw")

    def draw(axes: Axes) -> None:
        for k, (strategy, (judged, found)) in enumerate(curves.items()):
            axes.plot(
                judged,
                found,
                color=LINE_COLOURS[k % len(LINE_COLOURS)],
                linestyle=LINE_STYLES[(k // len(LINE_COLOURS)) % len(LINE_STYLES)],
                label=strategy,
            )
        axes.axhline(
            relevant, color=GREY, linestyle=":", linewidth=1, label="relevant in the qrels"
        )
        axes.set_xlim(left=0)
        axes.set_ylim(bottom=0)
        axes.set_xlabel("judgments")
        axes.set_ylabel("relevant documents found")
        axes.grid(color="#dddddd")
        axes.legend(loc="lower right", fontsize=8)

    rows = tuple(
        (strategy, int(j), int(f))
        for strategy, (judged, found) in curves.items()
        for j, f in zip(judged, found, strict=True)
    )
    return Plot(title, ("strategy", "judgments", "relevant"), rows, draw, size=(7.0, 4.5))
