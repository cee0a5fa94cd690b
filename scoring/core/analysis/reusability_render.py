"""Write a reusability report as text for people or JSON for machines. Pure core.

- text: a header, then for each leave-out (runs; groups when given) the
  correlations and largest drops per measure, each run's scores with and
  without its unit (ranked by the measure asked for), each group's runs and
  removed documents, and the shares of the top k judged. Scores with 4
  decimals.
- json: {"measure", "depth", "topics", "runs", "pooled", "judged_at",
  "leave_out": [{"unit", "measures": [...], "units": [...], "runs": [...]}]}
  at full precision, runs in the order of the measure asked for; NaN is null.
  A sampled pool's adds "sampled": true, "pooled_judged" and each unit's
  "removed_judged" (a depth-k pool's are "pooled" and "removed").
"""

from __future__ import annotations

import json
import math
from typing import Any, TextIO

import numpy as np

from scoring.core.analysis.reusability import JUDGED_AT, LeaveOut, MeasureScores, Reusability

FORMATS = ("text", "json")


def write_reusability(report: Reusability, out: TextIO, output_format: str = "text") -> None:
    match output_format:
        case "text":
            out.write(text(report))
        case "json":
            out.write(json.dumps(to_json(report), indent=1, allow_nan=False) + "\n")
        case _:
            raise ValueError(f"unknown output format {output_format!r}")


def _number(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _order(report: Reusability) -> np.ndarray:
    """The runs in the full ranking by the measure asked for."""
    return np.argsort(report.by_run.measures[0].rank, kind="stable")


def _depth(report: Reusability) -> str:
    if isinstance(report.depth, int):
        return f"depth {report.depth}"
    depths = sorted(set(report.depth.values()))
    return f"depths {depths[0]}-{depths[-1]} by topic" if len(depths) > 1 else f"depth {depths[0]}"


# --------------------------------------------------------------------------
# JSON


def to_json(report: Reusability) -> dict[str, Any]:
    order = _order(report)
    sampled = {"sampled": True, "pooled_judged": report.pooled_judged} if report.sampled else {}
    return {
        "measure": report.measure,
        **sampled,
        "depth": report.depth,
        "topics": len(report.topics),
        "runs": len(report.runs),
        "pooled": report.pooled,
        "judged_at": list(JUDGED_AT),
        "leave_out": [_leave_out_json(report, leave_out, order) for leave_out in report.leave_outs],
    }


def _leave_out_json(report: Reusability, leave_out: LeaveOut, order: np.ndarray) -> dict[str, Any]:
    tags = report.runs
    return {
        "unit": leave_out.unit,
        "measures": [_summary_json(scores, tags) for scores in leave_out.measures],
        "units": [
            {
                "name": name,
                "runs": [tags[run] for run in leave_out.runs_of(unit)],
                "removed": int(leave_out.removed[unit]),
                **(
                    {"removed_judged": int(leave_out.removed_judged[unit])}
                    if report.sampled
                    else {}
                ),
                "removed_relevant": int(leave_out.removed_relevant[unit]),
            }
            for unit, name in enumerate(leave_out.names)
        ],
        "runs": [
            {
                "run": tags[run],
                "unit": leave_out.names[leave_out.unit_of_run[run]],
                "scores": [
                    {
                        "measure": scores.name,
                        "judged_only": scores.judged_only,
                        "full": _number(scores.full[run]),
                        "without": _number(scores.without[run]),
                        "change": _number(scores.change[run]),
                        "rank": int(scores.rank[run]),
                        "rank_without": int(scores.rank_without[run]),
                    }
                    for scores in leave_out.measures
                ],
                "judged": {
                    str(k): {
                        "full": _number(report.judged[k][run]),
                        "without": _number(leave_out.judged_without[k][run]),
                    }
                    for k in JUDGED_AT
                },
            }
            for run in order
        ],
    }


def _summary_json(scores: MeasureScores, tags: tuple[str, ...]) -> dict[str, Any]:
    drop, fall = scores.largest_drop(), scores.largest_rank_drop()
    return {
        "measure": scores.name,
        "judged_only": scores.judged_only,
        "tau": scores.tau,
        "tau_ap": scores.tau_ap,
        "mean_change": _number(scores.mean_change),
        "largest_drop": None
        if drop is None
        else {
            "run": tags[drop],
            "full": _number(scores.full[drop]),
            "without": _number(scores.without[drop]),
            "change": _number(scores.change[drop]),
        },
        "largest_rank_drop": None
        if fall is None
        else {
            "run": tags[fall],
            "rank": int(scores.rank[fall]),
            "rank_without": int(scores.rank_without[fall]),
        },
    }


# --------------------------------------------------------------------------
# Text


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _value(value: float) -> str:
    return f"{value:.4f}" if math.isfinite(value) else "-"


def _signed(value: float) -> str:
    return f"{value:+.4f}" if math.isfinite(value) else "-"


def _share(value: float) -> str:
    return f"{value:.1%}" if math.isfinite(value) else "-"


def _table(header: list[str], rows: list[list[str]], *, left: int = 1) -> list[str]:
    """Columns padded to their widest cell: the first `left` to the left."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(
            cell.ljust(width) if i < left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in [header, *rows]
    ]


def text(report: Reusability) -> str:
    counts = f"{_count(len(report.runs), 'run')}, {_count(len(report.topics), 'topic')}"
    if report.sampled:
        lines = [
            f"Pool reusability: {report.measure}, sampled down to {_depth(report)}; {counts}, "
            f"{_count(report.pooled, 'document')} pooled ({report.pooled_judged:,} judged).",
            "Each unit is scored again without the documents it alone pooled, sampled or not, "
            "at the whole pool's inclusion probabilities.",
            "No -J: an inferred measure estimates from the sample, not from a condensed ranking.",
        ]
    else:
        lines = [
            f"Pool reusability: {report.measure}, pooled to {_depth(report)}; {counts}, "
            f"{_count(report.pooled, 'judged document')} pooled.",
            "Each unit is scored again on the qrels without the judged documents it alone pooled.",
        ]
    order = _order(report)
    for leave_out in report.leave_outs:
        lines += ["", *_leave_out_text(report, leave_out, order)]
    return "\n".join(lines) + "\n"


def _leave_out_text(report: Reusability, leave_out: LeaveOut, order: np.ndarray) -> list[str]:
    tags = report.runs
    measures = leave_out.measures
    lines = [f"Leaving out each {leave_out.unit}", ""]
    summary = [
        ["Kendall's tau", *(_value(m.tau if m.tau is not None else math.nan) for m in measures)],
        ["tau_AP", *(_value(m.tau_ap if m.tau_ap is not None else math.nan) for m in measures)],
        ["mean change", *(_signed(m.mean_change) for m in measures)],
        ["largest drop", *(_largest_drop(m, tags) for m in measures)],
        ["largest rank drop", *(_largest_rank_drop(m, tags) for m in measures)],
    ]
    lines += _table(["", *(m.label for m in measures)], summary)
    lines.append("")
    by_run = leave_out.unit == "run"
    removed = ["removed", "judged", "relevant"] if report.sampled else ["removed", "relevant"]
    header = ["run", *(removed if by_run else [leave_out.unit])]
    for m in measures:
        header += [m.label, "without", "change", "rank", "w/o"]
    rows = []
    for run in order:
        unit = leave_out.unit_of_run[run]
        row = [tags[run]]
        if by_run:
            row += _removed(report, leave_out, unit)
        else:
            row.append(leave_out.names[unit])
        for m in measures:
            row += [
                _value(m.full[run]),
                _value(m.without[run]),
                _signed(m.change[run]),
                str(m.rank[run]),
                str(m.rank_without[run]),
            ]
        rows.append(row)
    lines += _table(header, rows)
    if not by_run:
        lines.append("")
        units = [
            [
                name,
                *_removed(report, leave_out, unit),
                ", ".join(tags[run] for run in leave_out.runs_of(unit)),
            ]
            for unit, name in enumerate(leave_out.names)
        ]
        lines += _table([leave_out.unit, *removed, "runs"], units, left=1)
    lines += [
        "",
        f"Share of each run's top k judged, with every judgment and without its "
        f"{leave_out.unit}'s own:",
    ]
    header = ["run"]
    for k in JUDGED_AT:
        header += [f"@{k}", "without"]
    rows = []
    for run in order:
        row = [tags[run]]
        for k in JUDGED_AT:
            row += [_share(report.judged[k][run]), _share(leave_out.judged_without[k][run])]
        rows.append(row)
    return lines + _table(header, rows)


def _removed(report: Reusability, leave_out: LeaveOut, unit: int) -> list[str]:
    """The unit's documents taken out (and, sampled, how many were judged), relevant."""
    judged = [f"{leave_out.removed_judged[unit]:,}"] if report.sampled else []
    return [f"{leave_out.removed[unit]:,}", *judged, f"{leave_out.removed_relevant[unit]:,}"]


def _largest_drop(scores: MeasureScores, tags: tuple[str, ...]) -> str:
    run = scores.largest_drop()
    if run is None:
        return "none"
    return f"{_signed(scores.change[run])} {tags[run]}"


def _largest_rank_drop(scores: MeasureScores, tags: tuple[str, ...]) -> str:
    run = scores.largest_rank_drop()
    if run is None:
        return "none"
    return f"{scores.rank[run]} -> {scores.rank_without[run]} {tags[run]}"
