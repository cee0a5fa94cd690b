"""Write a Leaderboard as text for people, TSV or JSON for machines, or a LaTeX
table for papers. Pure core.

- text: the ranked runs, then the pairs, then the topics left out; means and
  intervals with 4 decimals, p-values with 4 significant digits; "identical"
  for the statistic and p of two runs with the same value on every topic.
- tsv: the same three tables at full precision, each with its header line,
  separated by one blank line (runs; pairs; excluded topics, if any).
- json: {"measure", "topics", "options", "runs": [...], "pairs": [...],
  "excluded": [...]} at full precision; NaN and infinities are null.
  `from_json` reads it back (a release keeps its leaderboard so).
- latex: a booktabs table of the ranked runs; each mean carries, in
  superscript, the letters of the runs it beats significantly by the first
  test asked for, and the caption says so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, TextIO

from scoring.core.analysis.leaderboard import (
    Excluded,
    Leaderboard,
    Options,
    PairRow,
    RunRow,
)
from workbench.core.spreadsheets import tsv_text

FORMATS = ("text", "tsv", "json", "latex")

TEST_NAMES = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "sign": "sign test",
    "randomization": "Fisher's randomisation test",
    "tukey": "Tukey's HSD",
}
_RUN_FIELDS = (
    "rank",
    "run",
    "mean",
    "n_topics",
    "ci_low",
    "ci_high",
    "bootstrap_low",
    "bootstrap_high",
)
_PAIR_FIELDS = (
    "a",
    "b",
    "test",
    "statistic",
    "p_value",
    "p_adjusted",
    "mean_difference",
    "cohens_d",
    "significant",
    "identical",
)


def write_leaderboard(board: Leaderboard, out: TextIO, output_format: str = "text") -> None:
    match output_format:
        case "text":
            out.write(text(board))
        case "tsv":
            out.write(tsv(board))
        case "json":
            out.write(json.dumps(to_json(board), indent=1, allow_nan=False) + "\n")
        case "latex":
            out.write(latex(board))
        case _:
            raise ValueError(f"unknown output format {output_format!r}")


def _run_records(board: Leaderboard) -> list[dict[str, Any]]:
    return [{"rank": rank, **asdict(row)} for rank, row in enumerate(board.runs, start=1)]


def _pair_records(board: Leaderboard) -> list[dict[str, Any]]:
    return [asdict(pair) for pair in board.pairs]


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def to_json(board: Leaderboard) -> dict[str, Any]:
    options = board.options
    return {
        "measure": board.measure,
        "topics": list(board.topics),
        "options": {
            "tests": list(options.tests),
            "correction": options.correction,
            "alpha": options.alpha,
            "confidence": 1 - options.alpha,
            "seed": options.seed,
            "resamples": options.n_resamples,
        },
        "runs": [{k: _finite(v) for k, v in row.items()} for row in _run_records(board)],
        "pairs": [{k: _finite(v) for k, v in pair.items()} for pair in _pair_records(board)],
        "excluded": [
            {"topic": item.topic, "runs": list(item.runs), "reason": item.reason}
            for item in board.excluded
        ],
    }


def _float(value: Any) -> float:
    return math.nan if value is None else float(value)


def from_json(data: dict[str, Any]) -> Leaderboard:
    """The Leaderboard that `to_json` wrote (null back to NaN): a stored
    leaderboard shown and written again exactly, without scoring anything."""
    options = data["options"]
    return Leaderboard(
        measure=data["measure"],
        topics=tuple(data["topics"]),
        runs=tuple(
            RunRow(
                run=row["run"],
                mean=_float(row["mean"]),
                n_topics=int(row["n_topics"]),
                ci_low=_float(row["ci_low"]),
                ci_high=_float(row["ci_high"]),
                bootstrap_low=_float(row["bootstrap_low"]),
                bootstrap_high=_float(row["bootstrap_high"]),
            )
            for row in data["runs"]
        ),
        pairs=tuple(
            PairRow(
                a=pair["a"],
                b=pair["b"],
                test=pair["test"],
                statistic=_float(pair["statistic"]),
                p_value=_float(pair["p_value"]),
                p_adjusted=_float(pair["p_adjusted"]),
                mean_difference=_float(pair["mean_difference"]),
                cohens_d=_float(pair["cohens_d"]),
                significant=bool(pair["significant"]),
                identical=bool(pair.get("identical", False)),  # absent before it was written
            )
            for pair in data["pairs"]
        ),
        excluded=tuple(Excluded(item["topic"], tuple(item["runs"])) for item in data["excluded"]),
        options=Options(
            tests=tuple(options["tests"]),
            correction=options["correction"],
            alpha=float(options["alpha"]),
            seed=int(options["seed"]),
            n_resamples=int(options["resamples"]),
        ),
    )


def tsv(board: Leaderboard) -> str:
    tables = [
        _tsv_table(_RUN_FIELDS, _run_records(board)),
        _tsv_table(_PAIR_FIELDS, _pair_records(board)),
    ]
    if board.excluded:
        excluded = [
            {"topic": item.topic, "runs": ",".join(item.runs), "reason": item.reason}
            for item in board.excluded
        ]
        tables.append(_tsv_table(("topic", "runs", "reason"), excluded))
    return "\n".join(tables)


def _tsv_table(fields: Sequence[str], records: list[dict[str, Any]]) -> str:
    return tsv_text(fields, ([record[field] for field in fields] for record in records))


# --------------------------------------------------------------------------
# Text


def _decimals(value: float) -> str:
    return f"{value:.4f}" if math.isfinite(value) else str(value)


def _interval(low: float, high: float) -> str:
    return f"[{_decimals(low)}, {_decimals(high)}]"


def _p(value: float) -> str:
    return f"{value:.4g}" if math.isfinite(value) else str(value)


def _columns(rows: list[list[str]]) -> str:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        + "\n"
        for row in rows
    )


def _describe_tests(board: Leaderboard, test: str) -> str:
    options = board.options
    name = TEST_NAMES[test]
    if test == "randomization":
        name += f" ({options.n_resamples:,} sign flips, seed {options.seed})"
    if test == "tukey":
        return f"{name}, adjusted for all pairs by itself"
    if options.correction == "none":
        return f"{name}, no correction"
    return f"{name}, {options.correction.capitalize()} correction over {_n_pairs(board)} pairs"


def _n_pairs(board: Leaderboard) -> int:
    n = len(board.runs)
    return n * (n - 1) // 2


def text(board: Leaderboard) -> str:
    options = board.options
    level = f"{(1 - options.alpha) * 100:g}%"
    left_out = f" ({len(board.excluded)} left out)" if board.excluded else ""
    parts = [f"{board.measure} over {len(board.topics)} topics{left_out}\n\n"]
    rows = [["rank", "run", "mean", f"{level} t interval", f"{level} bootstrap", "topics"]]
    rows.extend(
        [
            str(rank),
            row.run,
            _decimals(row.mean),
            _interval(row.ci_low, row.ci_high),
            _interval(row.bootstrap_low, row.bootstrap_high),
            str(row.n_topics),
        ]
        for rank, row in enumerate(board.runs, start=1)
    )
    parts.append(_columns(rows))
    for test in options.tests:
        pairs = [pair for pair in board.pairs if pair.test == test]
        if not pairs:
            continue
        parts.append(f"\n{_describe_tests(board, test)}; * p_adjusted <= {options.alpha:g}\n")
        parts.append(_columns(_pair_table(pairs)))
    if board.excluded:
        parts.append("\ntopics left out\n")
        parts.extend(f"{item.topic}  {item.reason}\n" for item in board.excluded)
    return "".join(parts)


def _pair_table(pairs: list[PairRow]) -> list[list[str]]:
    rows = [["a", "b", "statistic", "p_value", "p_adjusted", "", "mean_difference", "cohens_d"]]
    rows.extend(
        [
            pair.a,
            pair.b,
            *(
                ["identical"] * 3
                if pair.identical
                else [_decimals(pair.statistic), _p(pair.p_value), _p(pair.p_adjusted)]
            ),
            "*" if pair.significant else "",
            _decimals(pair.mean_difference),
            _decimals(pair.cohens_d),
        ]
        for pair in pairs
    )
    return rows


# --------------------------------------------------------------------------
# LaTeX

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(character, character) for character in text)


def run_keys(count: int) -> list[str]:
    """a, b, ..., z, aa, ab, ...: the letters that name runs in the marks."""
    keys = []
    for index in range(count):
        key = ""
        index += 1
        while index:
            index, letter = divmod(index - 1, 26)
            key = chr(ord("a") + letter) + key
        keys.append(key)
    return keys


def latex(board: Leaderboard) -> str:
    options = board.options
    test = options.tests[0] if options.tests else None
    keys = run_keys(len(board.runs))
    key_of = {row.run: key for row, key in zip(board.runs, keys, strict=True)}
    beaten = board.beaten(test) if test else {}
    level = f"{(1 - options.alpha) * 100:g}"
    measure = latex_escape(board.measure)
    caption = f"{measure} over {len(board.topics)} topics, with {level}\\% t confidence intervals."
    if test:
        caption += (
            f" A superscript letter marks each run that this run beats significantly"
            f" ({latex_escape(_describe_tests(board, test))}, $p \\le {options.alpha:g}$)."
        )
    if board.excluded:
        caption += (
            f" {len(board.excluded)} topic{'s' if len(board.excluded) > 1 else ''}"
            " without a value for some run left out."
        )
    lines = [
        "% needs \\usepackage{booktabs}",
        "\\begin{table}",
        "\\centering",
        f"\\caption{{{caption}}}",
        f"\\label{{tab:leaderboard-{_label(board.measure)}}}",
        "\\begin{tabular}{llrcr}",
        "\\toprule",
        f" & Run & {measure} & {level}\\% CI & Topics \\\\",
        "\\midrule",
    ]
    for row, key in zip(board.runs, keys, strict=True):
        marks = "".join(key_of[run] for run in beaten.get(row.run, []))
        mark = f"$^{{\\mathrm{{{marks}}}}}$" if marks else ""
        lines.append(
            f"{key} & {latex_escape(row.run)} & {_decimals(row.mean)}{mark}"
            f" & {_interval(row.ci_low, row.ci_high)} & {row.n_topics} \\\\"
        )
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def _label(name: str) -> str:
    return "".join(character if character.isalnum() else "-" for character in name)
