"""`leaderboard`: rank runs by a measure and test every pair of them. Pure core.

    leaderboard --qrels QRELS [-m MEASURE] [-c] [--test TEST] [--correction C]
                [--format text|tsv|json|latex] [--seed N] [--resamples N]
                [--alpha A] RUN...

The qrels and runs are read and scored as `trec_eval` reads and scores them
(`scoring.core.command_line.read_inputs`, `scoring.core.evaluation.evaluate`): RUN may
be files, directories (their files in name order) or `-` for standard input.
The per-topic values of MEASURE make the table `scoring.core.analysis.leaderboard`
ranks and tests. A bad input or option is one line on stderr and exit
status 2, as with trec_eval.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import BinaryIO, TextIO

from scoring.core.analysis.arguments import ArgumentParser, one_number
from scoring.core.analysis.corrections import CORRECTIONS
from scoring.core.analysis.leaderboard import (
    TESTS,
    Leaderboard,
    LeaderboardError,
    Options,
    ScoreTable,
    build_leaderboard,
)
from scoring.core.analysis.render import FORMATS, write_leaderboard
from scoring.core.command_line import UsageError, guarded, read_inputs, run_file_names
from scoring.core.evaluation import evaluate
from scoring.core.measures.catalog import TREC
from scoring.core.measures.rankings import EvalOptions
from scoring.core.qrels import TREC_QRELS

PROGRAM = "leaderboard"


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog=PROGRAM,
        add_help=False,
        description="Rank runs by the mean of a measure over topics, with confidence "
        "intervals, and compare every pair of runs with paired tests.",
    )
    parser.add_argument("-h", "--help", action="store_true", help="show this help")
    parser.add_argument("--qrels", required=True, help="the qrels file (trec_eval's format)")
    parser.add_argument(
        "runs", nargs="+", metavar="RUN", help="run files or directories, - for stdin"
    )
    parser.add_argument(
        "-m", "--measure", default="map", help="one trec_eval measure (default map)"
    )
    parser.add_argument(
        "-c",
        "--complete",
        action="store_true",
        help="score a qrels topic missing from a run as trec_eval -c does (otherwise the "
        "topic is left out for every run, and listed)",
    )
    parser.add_argument("--test", choices=(*TESTS, "all"), default="t", help="default t")
    parser.add_argument("--correction", choices=CORRECTIONS, default="holm", help="default holm")
    parser.add_argument("--format", choices=FORMATS, default="text", help="default text")
    parser.add_argument("--seed", type=int, default=0, help="for the bootstrap and randomisation")
    parser.add_argument("--resamples", type=int, default=10_000, help="default 10,000")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    return parser


def main(
    argv: Sequence[str], stdout: TextIO, stderr: TextIO, *, stdin: BinaryIO | None = None
) -> int:
    """Run the leaderboard on `argv` (without the program name); returns the exit status."""

    def command() -> int:
        if "-h" in argv or "--help" in argv:
            stdout.write(_parser().format_help())
            return 0
        _run(_parser().parse_args(argv), stdout, stderr, stdin or sys.stdin.buffer)
        return 0

    return guarded(PROGRAM, command, stderr)


def _run(arguments: argparse.Namespace, stdout: TextIO, stderr: TextIO, stdin: BinaryIO) -> None:
    tests = TESTS if arguments.test == "all" else (arguments.test,)
    try:
        options = Options(
            tests=tests,
            correction=arguments.correction,
            alpha=arguments.alpha,
            seed=arguments.seed,
            n_resamples=arguments.resamples,
        )
    except LeaderboardError as error:
        raise UsageError(str(error)) from None
    requested = one_number(TREC.select([arguments.measure]), arguments.measure)
    names = run_file_names(arguments.runs)
    qrels, runs = read_inputs(arguments.qrels, TREC_QRELS, names, stdin)
    evaluation = evaluate(qrels, runs, [requested], EvalOptions(complete=arguments.complete))
    for run, name in enumerate(names):
        if not evaluation.groups_of(run):
            raise UsageError(f"{name}: no topic of the run is in the qrels")
    tags = evaluation.run_tags
    for run, tag in enumerate(tags):
        if tag in tags[:run]:
            first = names[tags.index(tag)]
            raise UsageError(
                f"{names[run]}: the tag '{tag}' is the tag of {first} too "
                "(a leaderboard names runs by tag)"
            )
    table = ScoreTable.from_evaluation(evaluation)
    try:
        board = _build(table, options, stderr)
    except LeaderboardError as error:
        raise UsageError(str(error)) from None
    write_leaderboard(board, stdout, arguments.format)


def _build(table: ScoreTable, options: Options, stderr: TextIO) -> Leaderboard:
    if "tukey" not in options.tests:
        return build_leaderboard(table, options)
    from tqdm import tqdm

    runs = len(table.runs)
    with tqdm(
        total=runs * (runs - 1) // 2, desc="Tukey HSD", unit=" pairs", disable=None, file=stderr
    ) as bar:
        return build_leaderboard(table, options, progress=bar.update)
