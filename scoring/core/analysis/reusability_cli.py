"""`reusability`: would a run that was not pooled be scored fairly? Pure core.

    reusability --qrels QRELS --depth K [-m MEASURE] [-c] [--groups FILE]
                [--format text|json] RUN...
    reusability --stratified QRELS --depth K [--inclusion FILE] [-m infAP|infNDCG]
                [-c] [--groups FILE] [--format text|json] RUN...
    reusability --pool ID [-m MEASURE] [--groups FILE] [--format text|json]

Files are read as `trec_eval` reads them (`scoring.core.command_line.read_inputs`:
RUN may be files, directories or `-`); K is the depth the pool was built to,
or for a sampled pool (`--stratified`: sample_eval's qrels) the deepest rank
sampled. `--inclusion` is the workbench's inclusion.tsv
(`scoring.core.inclusion_file`); without it each stratum's probability is its
sampled share in the qrels, as sample_eval takes it.
`--pool ID` reads a stored pool instead, through the `load_pool` the Django
command passes in (this module imports no Django). The groups file has one
`run_tag<TAB>group` line per run. `scoring.core.analysis.reusability` computes,
`reusability_render` writes. A bad input or option is one line on stderr,
`file:line: reason` where there is one, and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO, TextIO

from scoring.core.analysis.arguments import ArgumentParser
from scoring.core.analysis.reusability import (
    INFERRED,
    Reusability,
    ReusabilityError,
    ReusabilityInputs,
    default_measure,
    qrels_frame,
    report_measure,
    reusability_of,
)
from scoring.core.analysis.reusability_render import FORMATS, write_reusability
from scoring.core.command_line import UsageError, guarded, read_inputs, run_file_names
from scoring.core.measures.base import RequestedMeasure
from scoring.core.measures.columns import run_tag
from scoring.core.measures.rankings import EvalOptions
from scoring.core.qrels import STRATIFIED_QRELS, TREC_QRELS
from workbench.core.problems import InputError, ProblemLog

PROGRAM = "reusability"

type PoolLoader = Callable[[int], ReusabilityInputs]
"""Reads a stored pool's qrels, runs and depth; raises UsageError when it cannot."""


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog=PROGRAM,
        add_help=False,
        description="Leave each run (and each group of runs) out of a depth-k or sampled pool "
        "in turn: score it without the documents only it pooled, and compare the rankings.",
    )
    parser.add_argument("-h", "--help", action="store_true", help="show this help")
    parser.add_argument("--qrels", help="the qrels file of a depth-k pool (trec_eval's format)")
    parser.add_argument(
        "--stratified",
        metavar="QRELS",
        help="the qrels of a sampled pool (sample_eval's: topic 0 docno stratum rel, "
        "rel -1 for pooled and not sampled)",
    )
    parser.add_argument(
        "--inclusion",
        metavar="FILE",
        help="with --stratified: inclusion.tsv (topic docno stratum probability); "
        "default: each stratum's sampled share, as sample_eval",
    )
    parser.add_argument(
        "--depth", type=int, help="the depth the pool was built to (sampled: the deepest rank)"
    )
    parser.add_argument(
        "--pool", type=int, metavar="ID", help="a stored pool: its judgments, runs and depth"
    )
    parser.add_argument(
        "runs", nargs="*", metavar="RUN", help="run files or directories, - for stdin"
    )
    parser.add_argument(
        "-m",
        "--measure",
        help=f"one trec_eval measure (default map); sampled: {' or '.join(INFERRED)} "
        f"(default {INFERRED[0]})",
    )
    parser.add_argument(
        "-c",
        "--complete",
        action="store_true",
        help="score a qrels topic missing from a run as trec_eval -c does (a pool always "
        "is); not the inferred measures, which average as sample_eval does",
    )
    parser.add_argument(
        "--groups", metavar="FILE", help="run_tag<TAB>group lines: leave groups out too"
    )
    parser.add_argument("--format", choices=FORMATS, default="text", help="default text")
    return parser


def main(
    argv: Sequence[str],
    stdout: TextIO,
    stderr: TextIO,
    *,
    stdin: BinaryIO | None = None,
    load_pool: PoolLoader | None = None,
) -> int:
    """Run the report on `argv` (without the program name); returns the exit status."""

    def command() -> int:
        if "-h" in argv or "--help" in argv:
            stdout.write(_parser().format_help())
            return 0
        arguments = _parser().parse_args(argv)
        report = _report(arguments, stderr, stdin or sys.stdin.buffer, load_pool)
        write_reusability(report, stdout, arguments.format)
        return 0

    return guarded(PROGRAM, command, stderr)


def _report(
    arguments: argparse.Namespace,
    stderr: TextIO,
    stdin: BinaryIO,
    load_pool: PoolLoader | None,
) -> Reusability:
    if arguments.pool is None:  # a bad measure is named before the files are read
        _measure(arguments.measure, sampled=bool(arguments.stratified))
    groups = read_groups(arguments.groups) if arguments.groups else None
    inputs, names = _inputs(arguments, stdin, load_pool)
    measure = _measure(arguments.measure, sampled=inputs.sampled)
    if groups is not None:
        _check_groups(arguments.groups, groups, inputs, names)
    else:  # a stored pool's teams, unless --groups says otherwise
        groups = dict(inputs.groups) if inputs.groups is not None else None
    from tqdm import tqdm

    units = len(inputs.runs) + (len(set(groups.values())) if groups else 0)
    try:
        with tqdm(total=units, desc="leaving out", unit=" units", disable=None, file=stderr) as bar:
            return reusability_of(inputs, measure, groups=groups, progress=bar.update)
    except ReusabilityError as error:
        if error.run is not None:
            where = f"{names[error.run]}: "
        elif arguments.stratified:  # the probabilities: of --inclusion, else of the qrels
            where = f"{arguments.inclusion or arguments.stratified}: "
        else:
            where = ""
        raise UsageError(f"{where}{error}") from None


def _measure(name: str | None, *, sampled: bool) -> RequestedMeasure:
    try:
        return report_measure(name or default_measure(sampled=sampled), sampled=sampled)
    except ReusabilityError as error:
        raise UsageError(str(error)) from None


def _inputs(
    arguments: argparse.Namespace, stdin: BinaryIO, load_pool: PoolLoader | None
) -> tuple[ReusabilityInputs, list[str]]:
    """The inputs, and a name for each run (its file, or its tag in the pool)."""
    given = [arguments.qrels, arguments.stratified, arguments.inclusion, arguments.runs]
    if arguments.pool is not None:
        if any(given) or arguments.depth is not None:
            raise UsageError("--pool reads the pool's qrels, runs and depth: give none of them")
        if load_pool is None:
            raise UsageError("--pool reads the workbench's database: run manage.py reusability")
        inputs = load_pool(arguments.pool)
        return inputs, [f"run {run_tag(run)}" for run in inputs.runs]
    if arguments.qrels and arguments.stratified:
        raise UsageError("give one qrels: --qrels (depth-k pool) or --stratified (sampled pool)")
    if arguments.inclusion and not arguments.stratified:
        raise UsageError("--inclusion goes with a sampled pool's --stratified qrels")
    if not (arguments.qrels or arguments.stratified):
        raise UsageError(
            "give the qrels (--qrels FILE, or --stratified FILE), or a stored pool (--pool ID)"
        )
    if arguments.depth is None:
        raise UsageError("give the depth the pool was built to (--depth K)")
    if arguments.depth < 1:
        raise UsageError(f"--depth must be at least 1, not {arguments.depth}")
    if not arguments.runs:
        raise UsageError("give the run files that built the pool")
    names = run_file_names(arguments.runs)
    options = EvalOptions(complete=arguments.complete)
    if not arguments.stratified:
        qrels, runs = read_inputs(arguments.qrels, TREC_QRELS, names, stdin)
        return ReusabilityInputs(qrels, runs, arguments.depth, options), names
    qrels, runs = read_inputs(arguments.stratified, STRATIFIED_QRELS, names, stdin)
    inclusion = None
    if arguments.inclusion:
        from scoring.core.inclusion_file import check_strata, read_inclusion

        inclusion = read_inclusion(arguments.inclusion)
        check_strata(arguments.inclusion, inclusion, qrels_frame(qrels))
    sampled = ReusabilityInputs(
        qrels, runs, arguments.depth, options, sampled=True, inclusion=inclusion
    )
    return sampled, names


def read_groups(path: str) -> dict[str, str]:
    """run tag -> group, from `run_tag<TAB>group` lines; blank lines and lines
    starting with # are skipped. Raises InputError naming each bad line."""
    data = Path(path).read_bytes()
    log = ProblemLog(path)
    groups: dict[str, str] = {}
    where: dict[str, int] = {}
    for number, raw in enumerate(data.splitlines(), start=1):
        try:
            line = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError:
            log.add(number, "not UTF-8 text")
            continue
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 2 or not all(field.strip() for field in fields):
            log.add(number, f"expected 'run_tag<TAB>group', got {line!r}")
            continue
        tag, group = (field.strip() for field in fields)
        if tag in groups and groups[tag] != group:
            log.add(number, f"run {tag!r} is in group {groups[tag]!r} on line {where[tag]}")
            continue
        groups.setdefault(tag, group)
        where.setdefault(tag, number)
    if not log.ok:
        raise InputError.from_log(log)
    return groups


def _check_groups(
    path: str, groups: dict[str, str], inputs: ReusabilityInputs, names: list[str]
) -> None:
    """Every run needs a group: a forgotten one would be a group of its own."""
    missing = [
        (name, tag)
        for name, tag in zip(names, (run_tag(run) for run in inputs.runs), strict=True)
        if tag not in groups
    ]
    if missing:
        name, tag = missing[0]
        more = f" (and {len(missing) - 1} more runs)" if len(missing) > 1 else ""
        raise UsageError(f"{path}: no group for run {tag!r} ({name}){more}")
