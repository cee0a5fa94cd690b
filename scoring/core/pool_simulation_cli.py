"""`simulate_pooling`: what each adaptive pooling strategy would have found on
earlier qrels, and how it would have ranked the runs. Pure core.

    simulate_pooling --qrels QRELS --budget N[,N...] [--strategy NAME[,NAME...]]
        [--allocation equal|adaptive] [-m MEASURE] [-l LEVEL] [--depth K|all]
        [--seed S] [--groups FILE] [--order FILE] [--plot FILE]... [--format text|json]
        RUN...

Files are read as `trec_eval` reads them (`scoring.core.command_line.read_inputs`:
RUN may be files, directories or `-`). `scoring.core.pool_simulation` replays;
this module parses, and writes the report (text or JSON), the order of the
judgments (`--order`: `strategy topic docno position` lines) and the
relevant-found curves (`--plot`: .svg, .png or .csv by the file's suffix).
A bad input or option is one line on stderr, `file:line: reason` where there
is one, and exit status 2.

JSON: {"measure", "allocation", "depth", "seed", "relevance_level", "runs",
"topics", "candidates", "relevant", "relevant_candidates",
"strategies": [{"strategy", "budgets": [{"budget", "judged", "relevant",
"recall", "tau", "tau_ap"}]}], "teams": [{"team", "runs", "unique_relevant",
"found": {strategy: [per budget]}}]}; active's budgets add "estimate"
(map only): {"rmse", "mean_standard_error", "within_one_se", "within_two_se",
"pool_rmse", "pool_within_one_se", "pool_within_two_se", "runs": [{"run",
"estimate", "standard_error", "truth", "pool_truth"}]}: errors against map
under the qrels, and (pool_) under their labels of the candidates alone.
Numbers at full precision; a tau that is undefined (a constant ranking) is null.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO, TextIO

import numpy as np

from pooling.core.adaptive import ALLOCATIONS, STRATEGIES
from scoring.core.analysis.arguments import ArgumentParser, one_number
from scoring.core.analysis.reusability_cli import read_groups
from scoring.core.command_line import UsageError, guarded, read_inputs, run_file_names
from scoring.core.measures.base import RequestedMeasure
from scoring.core.measures.catalog import TREC
from scoring.core.measures.columns import run_tag
from scoring.core.pool_simulation import Settings, Simulation, SimulationError, simulate
from scoring.core.qrels import TREC_QRELS

PROGRAM = "simulate_pooling"
FORMATS = ("text", "json")
PLOT_SUFFIXES = (".svg", ".png", ".csv")
CURVE_POINTS = 400  # points per curve in --plot


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog=PROGRAM,
        add_help=False,
        description="Replay adaptive pooling strategies on earlier qrels: the relevant "
        "documents each finds for a budget, and how it ranks the runs against the full qrels.",
    )
    parser.add_argument("-h", "--help", action="store_true", help="show this help")
    parser.add_argument("--qrels", help="the qrels to replay (trec_eval's format)")
    parser.add_argument(
        "runs", nargs="*", metavar="RUN", help="run files or directories, - for stdin"
    )
    parser.add_argument(
        "--strategy",
        action="append",
        metavar="NAME[,NAME...]",
        help=f"strategies to replay (default all: {','.join(STRATEGIES)})",
    )
    parser.add_argument(
        "--budget",
        action="append",
        metavar="N[,N...]",
        help="judgments to report at (repeatable; the replay runs to the largest)",
    )
    parser.add_argument(
        "--allocation",
        choices=ALLOCATIONS,
        default="equal",
        help="equal: each topic its share, in turns; adaptive: one budget over all topics "
        "(default equal)",
    )
    parser.add_argument("-m", "--measure", default="map", help="the measure runs are ranked by")
    parser.add_argument(
        "-l",
        "--relevance-level",
        type=int,
        default=1,
        help="the lowest label that is relevant, for the strategies and the measure (default 1)",
    )
    parser.add_argument(
        "--depth",
        default="100",
        help="candidates: documents some run ranks within this depth, or 'all' (default 100)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of ties and draws (default 0)")
    parser.add_argument(
        "--groups", metavar="FILE", help="run_tag<TAB>team lines: documents only one team ranks"
    )
    parser.add_argument(
        "--order", metavar="FILE", help="write each judgment: strategy topic docno position"
    )
    parser.add_argument(
        "--plot",
        action="append",
        default=[],
        metavar="FILE",
        help="draw relevant found against judgments (.svg, .png or .csv; repeatable)",
    )
    parser.add_argument("--format", choices=FORMATS, default="text", help="default text")
    return parser


def main(
    argv: Sequence[str], stdout: TextIO, stderr: TextIO, *, stdin: BinaryIO | None = None
) -> int:
    """Run the simulation on `argv` (without the program name); returns the exit status."""

    def command() -> int:
        if "-h" in argv or "--help" in argv:
            stdout.write(_parser().format_help())
            return 0
        arguments = _parser().parse_args(argv)
        simulation = _simulation(arguments, stderr, stdin or sys.stdin.buffer)
        if arguments.order:
            with open(arguments.order, "w", encoding="utf-8") as out:
                out.writelines(simulation.order_lines())
        for path in arguments.plot:
            _write_plot(simulation, path)
        if arguments.format == "json":
            stdout.write(json.dumps(to_json(simulation), indent=1, allow_nan=False) + "\n")
        else:
            stdout.write(text(simulation))
        return 0

    return guarded(PROGRAM, command, stderr)


def _simulation(arguments: argparse.Namespace, stderr: TextIO, stdin: BinaryIO) -> Simulation:
    """Check the options, read the files and replay."""
    strategies = _names(arguments.strategy)
    budgets = _budgets(arguments.budget)
    depth = _depth(arguments.depth)
    measure = _measure(arguments.measure)
    for path in arguments.plot:
        if Path(path).suffix not in PLOT_SUFFIXES:
            raise UsageError(f"--plot {path}: name a {', '.join(PLOT_SUFFIXES)} file")
    if not arguments.qrels:
        raise UsageError("give the qrels to replay (--qrels FILE)")
    if not arguments.runs:
        raise UsageError("give the run files to pool")
    groups = read_groups(arguments.groups) if arguments.groups else None
    names = run_file_names(arguments.runs)
    qrels, runs = read_inputs(arguments.qrels, TREC_QRELS, names, stdin)
    if groups is not None:
        _check_groups(arguments.groups, groups, [run_tag(run) for run in runs], names)
    settings = Settings(
        strategies=strategies,
        budgets=budgets,
        measure=measure,
        allocation=arguments.allocation,
        seed=arguments.seed,
        depth=depth,
        relevance_level=arguments.relevance_level,
        groups=groups,
    )
    from tqdm import tqdm

    total = len(strategies) * max(budgets)
    try:
        with tqdm(
            total=total, desc="replaying", unit=" judgments", disable=None, file=stderr
        ) as bar:
            return simulate(qrels, runs, settings, progress=bar.update)
    except SimulationError as error:
        where = f"{names[error.run]}: " if error.run is not None else ""
        raise UsageError(f"{where}{error}") from None


def _names(given: list[str] | None) -> tuple[str, ...]:
    names = [name.strip() for item in given or [] for name in item.split(",") if name.strip()]
    for name in names:
        if name not in STRATEGIES:
            raise UsageError(
                f"--strategy: unknown strategy {name!r} (strategies: {', '.join(STRATEGIES)})"
            )
    return tuple(dict.fromkeys(names)) or tuple(STRATEGIES)


def _budgets(given: list[str] | None) -> tuple[int, ...]:
    if not given:
        raise UsageError("give the budget(s) to report at (--budget N[,N...])")
    budgets = []
    for item in given:
        for text in item.split(","):
            try:
                budget = int(text)
            except ValueError:
                raise UsageError(f"--budget: {text.strip()!r} is not a whole number") from None
            if budget < 1:
                raise UsageError(f"--budget: {budget} is not a positive number of judgments")
            budgets.append(budget)
    return tuple(sorted(set(budgets)))


def _depth(text: str) -> int | None:
    if text == "all":
        return None
    try:
        depth = int(text)
    except ValueError:
        raise UsageError(f"--depth: {text!r} is neither a rank nor 'all'") from None
    if depth < 1:
        raise UsageError(f"--depth must be at least 1, not {depth}")
    return depth


def _measure(name: str) -> RequestedMeasure:
    from scoring.core.measures.catalog import MeasureError
    from scoring.core.measures.params import ParamError

    try:
        measure = one_number(TREC.select([name]), name)
    except (MeasureError, ParamError) as error:
        raise UsageError(str(error)) from None
    if measure.measure.summary is None:
        raise UsageError(f"measure {name!r} has no mean over topics to rank runs by")
    return measure


def _check_groups(path: str, groups: dict[str, str], tags: list[str], names: list[str]) -> None:
    """Every run needs a team: a forgotten one would be a team of its own."""
    missing = [(name, tag) for name, tag in zip(names, tags, strict=True) if tag not in groups]
    if missing:
        name, tag = missing[0]
        more = f" (and {len(missing) - 1} more runs)" if len(missing) > 1 else ""
        raise UsageError(f"{path}: no team for run {tag!r} ({name}){more}")


# --------------------------------------------------------------------------
# Pictures


def curves(simulation: Simulation) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each strategy's (judgments, relevant found) at up to CURVE_POINTS points, from 0."""
    result = {}
    for strategy in simulation.strategies:
        n = len(strategy.found)
        at = np.unique(np.linspace(0, n, min(n, CURVE_POINTS) + 1).round().astype(np.int64))
        found = np.r_[0, strategy.found][at]
        result[strategy.strategy] = (at, found)
    return result


def _write_plot(simulation: Simulation, path: str) -> None:
    from scoring.core.plots import relevant_found

    settings = simulation.settings
    title = (
        f"Relevant documents found ({settings.allocation} allocation, "
        f"{_depth_text(settings.depth)})"
    )
    plot = relevant_found(curves(simulation), simulation.relevant_total, title)
    suffix = Path(path).suffix
    if suffix == ".csv":
        Path(path).write_text(plot.csv(), encoding="utf-8")
    else:
        Path(path).write_bytes(plot.render(suffix[1:]))


# --------------------------------------------------------------------------
# The report


def _number(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _depth_text(depth: int | None) -> str:
    return "every rank" if depth is None else f"depth {depth}"


def to_json(simulation: Simulation) -> dict[str, Any]:
    settings = simulation.settings
    return {
        "measure": settings.measure.names[0],
        "allocation": settings.allocation,
        "depth": settings.depth,
        "seed": settings.seed,
        "relevance_level": settings.relevance_level,
        "runs": len(simulation.run_tags),
        "topics": simulation.topics,
        "candidates": simulation.candidates.n_docs,
        "relevant": simulation.relevant_total,
        "relevant_candidates": simulation.relevant_candidates,
        "strategies": [
            {
                "strategy": result.strategy,
                "budgets": [_budget_json(simulation, budget) for budget in result.budgets],
            }
            for result in simulation.strategies
        ],
        "teams": [
            {
                "team": team.name,
                "runs": list(team.runs),
                "unique_relevant": team.unique_relevant,
                "found": {
                    result.strategy: [int(b.team_found[k]) for b in result.budgets]
                    for result in simulation.strategies
                },
            }
            for k, team in enumerate(simulation.teams)
        ],
    }


def _budget_json(simulation: Simulation, budget: Any) -> dict[str, Any]:
    entry = {
        "budget": budget.budget,
        "judged": budget.judged,
        "relevant": budget.relevant,
        "recall": budget.recall,
        "tau": _number(budget.tau),
        "tau_ap": _number(budget.tau_ap),
    }
    estimate = budget.estimate
    if estimate is not None:
        entry["estimate"] = {
            "rmse": estimate.rmse,
            "mean_standard_error": estimate.mean_standard_error,
            "within_one_se": estimate.within(1),
            "within_two_se": estimate.within(2),
            "pool_rmse": estimate.pool_rmse,
            "pool_within_one_se": estimate.within(1, pool=True),
            "pool_within_two_se": estimate.within(2, pool=True),
            "runs": [
                {
                    "run": tag,
                    "estimate": float(e),
                    "standard_error": float(s),
                    "truth": float(t),
                    "pool_truth": float(p),
                }
                for tag, e, s, t, p in zip(
                    simulation.run_tags,
                    estimate.estimate,
                    estimate.standard_error,
                    simulation.truth,
                    simulation.pool_truth,
                    strict=True,
                )
            ],
        }
    return entry


def _tau(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def text(simulation: Simulation) -> str:
    settings = simulation.settings
    measure = settings.measure.names[0]
    lines = [
        f"Pooling simulation: {len(simulation.run_tags)} runs, {simulation.topics} topics; "
        f"{simulation.candidates.n_docs:,} candidate documents ({_depth_text(settings.depth)}), "
        f"holding {simulation.relevant_candidates:,} of the qrels' "
        f"{simulation.relevant_total:,} relevant (label >= {settings.relevance_level}).",
        f"Allocation {settings.allocation}, seed {settings.seed}; runs ranked by {measure}, "
        "tau and tau_AP against the ranking under the full qrels.",
        "",
    ]
    header = (
        f"{'budget':>8} {'judged':>8} {'relevant':>9} {'recall':>7} {'tau':>7} {'tau_ap':>7}"
        f" {'one team':>9}"
    )
    for result in simulation.strategies:
        lines += [result.strategy, header]
        for b in result.budgets:
            lines.append(
                f"{b.budget:>8} {b.judged:>8} {b.relevant:>9} {b.recall:>7.4f} "
                f"{_tau(b.tau):>7} {_tau(b.tau_ap):>7} {int(b.team_found.sum()):>9}"
            )
        if any(b.estimate is not None for b in result.budgets):
            lines += _estimate_lines(result.budgets, measure)
        lines.append("")
    lines += _team_lines(simulation)
    return "\n".join(lines) + "\n"


def _estimate_lines(budgets: Sequence[Any], measure: str) -> list[str]:
    """Active's estimate of map at each budget, against map under the qrels and
    under their labels of the candidates alone (the pool)."""
    lines = [
        _estimate_title(measure),
        f"{'budget':>8} {'mean se':>8} {'rmse':>8} {'in 1 se':>8} {'in 2 se':>8}"
        f" {'pool rmse':>10} {'in 1 se':>8} {'in 2 se':>8}",
    ]
    for b in budgets:
        e = b.estimate
        if e is not None:
            lines.append(
                f"{b.budget:>8} {e.mean_standard_error:>8.4f} {e.rmse:>8.4f}"
                f" {e.within(1):>8.0%} {e.within(2):>8.0%} {e.pool_rmse:>10.4f}"
                f" {e.within(1, pool=True):>8.0%} {e.within(2, pool=True):>8.0%}"
            )
    return lines


def _estimate_title(measure: str) -> str:
    return (
        f"  its {measure} estimate: standard error, and error against {measure} under the "
        "qrels and (pool) under their labels of the candidates alone"
    )


def _team_lines(simulation: Simulation) -> list[str]:
    """Relevant documents only one team ranks: in the qrels, and found by each
    strategy at its largest budget; teams with most such documents first."""
    teams = [(k, team) for k, team in enumerate(simulation.teams)]
    shown = [
        (k, t)
        for k, t in teams
        if t.unique_relevant or any(r.budgets[-1].team_found[k] for r in simulation.strategies)
    ]
    if not shown:
        return ["No relevant candidate is ranked by one team's runs alone.", ""]
    budget = simulation.strategies[-1].budgets[-1].budget if simulation.strategies else 0
    names = [r.strategy for r in simulation.strategies]
    width = max(len("team"), *(len(t.name) for _, t in shown))
    lines = [
        f"Relevant documents only one team's runs rank (found at budget {budget}):",
        f"{'team':<{width}} {'qrels':>6} " + " ".join(f"{n:>8}" for n in names),
    ]
    shown.sort(key=lambda item: (-item[1].unique_relevant, item[1].name))
    for k, team in shown:
        found = " ".join(f"{int(r.budgets[-1].team_found[k]):>8}" for r in simulation.strategies)
        lines.append(f"{team.name:<{width}} {team.unique_relevant:>6} {found}")
    return [*lines, ""]
