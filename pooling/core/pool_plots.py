"""The pool page's pictures (`workbench.core.plots` draws them). Pure core.

- `pool_size_by_depth`: how many documents a depth-k pool of these runs
  holds, and how many of them are judged, as k grows (from `budget.whatif`);
- `judged_share_chart`: the share of each run's top k that is judged (from
  `budget.judged_share`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pooling.core.spec import PoolSpec, spec_label
from workbench.core.plots import GREY, LINE_COLOURS, NAVY, Plot, PlotError

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def depths_to_draw(max_depth: int, points: int = 20) -> list[int]:
    """About `points` depths from 1 to `max_depth`, denser where pools grow fastest."""
    if max_depth < 1:
        raise PlotError(f"a depth of at least 1 is needed, not {max_depth}")
    spaced = np.unique(np.geomspace(1, max_depth, num=min(points, max_depth)).round().astype(int))
    return sorted({1, *spaced.tolist(), max_depth})


def pool_size_by_depth(totals: pd.DataFrame, *, spec: PoolSpec) -> Plot:
    """totals: depth, candidates (documents pooled), judged; `spec`: the pool's own,
    marked at its deepest rank and named by its strata (a stratified pool is not
    the depth-k pool of that rank: "1-10:1.0 11-100:0.5", not "depth 100")."""
    depth = spec.max_depth
    name = f"depth {depth}" if spec.is_depth_only else spec_label(spec)
    rows = totals.sort_values("depth")
    x = rows["depth"].to_numpy(dtype=int)
    pooled = rows["candidates"].to_numpy(dtype=int)
    judged = rows["judged"].to_numpy(dtype=int)

    def draw(axes: Axes) -> None:
        axes.plot(x, pooled, color=NAVY, marker="o", markersize=3, label="documents pooled")
        axes.plot(
            x, judged, color=LINE_COLOURS[2], linestyle="--", marker="s", markersize=3,
            label="of those, judged",
        )  # fmt: skip
        axes.axvline(depth, color=GREY, linestyle=":", linewidth=1)
        # Left of the line when the line is the last depth drawn: inside the axes.
        last = depth >= x.max()
        axes.annotate(f"this pool: {name}", (depth, 0), xytext=(-4 if last else 4, 4),
                      textcoords="offset points", color=GREY, fontsize=8,
                      ha="right" if last else "left")  # fmt: skip
        axes.set_xlabel("pool depth k (each run's top k documents of each topic)")
        axes.set_ylabel("documents (all topics)")
        axes.set_ylim(bottom=0)
        axes.yaxis.set_major_formatter("{x:,.0f}")  # 20,000, as the pages write counts
        axes.grid(color="#dddddd")
        axes.legend(loc="upper left", fontsize=8)

    return Plot(
        "Pool size by depth",
        ("depth", "documents_pooled", "judged"),
        tuple((int(d), int(p), int(j)) for d, p, j in zip(x, pooled, judged, strict=True)),
        draw,
    )


def judged_share_chart(shares: pd.DataFrame) -> Plot:
    """shares: run_id, k, documents, judged, share; one group of bars per run."""
    if shares.empty:
        raise PlotError("no runs to draw")
    runs = list(dict.fromkeys(shares["run_id"]))
    ks = sorted(set(shares["k"]))
    table = shares.pivot(index="run_id", columns="k", values="share").loc[runs, ks]
    width = 0.8 / len(ks)

    def draw(axes: Axes) -> None:
        positions = np.arange(len(runs))
        for n, k in enumerate(ks):
            axes.barh(
                positions + n * width,
                table[k].fillna(0).to_numpy(),
                height=width,
                color=LINE_COLOURS[n % len(LINE_COLOURS)],
                label=f"top {k}",
            )
        axes.set_yticks(positions + width * (len(ks) - 1) / 2, runs)
        axes.invert_yaxis()
        axes.set_xlim(0, 1)
        axes.set_xlabel("share of the run's top k documents that is judged")
        axes.set_ylabel("run")
        axes.grid(axis="x", color="#dddddd")
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)  # off the bars

    return Plot(
        "How much of each run's top k is judged",
        ("run", "k", "documents", "judged", "share"),
        tuple(
            (row.run_id, int(row.k), int(row.documents), int(row.judged), float(row.share))
            for row in shares.itertuples(index=False)
        ),
        draw,
        size=(8.0, max(3.0, 0.3 * len(runs) * max(1, len(ks) / 2) + 1.5)),
    )
