"""A trec_eval 10.0-compatible command line over `scoring.core.evaluation`. Pure core.

    trec_eval [-q] [-c] [-n] [-J] [-M N] [-l N] [-N N] [-m MEASURE[.PARAMS]]...
              [-R qrels] [-T trec_results] [--format text|tsv|json] QRELS RUN...

Options are read as GNU getopt_long reads trec_eval's (`-M100`,
`-mrelstring.20`, `-qc`, `--measure=P.5`, options after the files). The
output is byte for byte trec_eval's. RUN may be several files or
directories (their files in name order, hidden files skipped) and `-` for
standard input: all runs are scored in one pass and printed one block each,
each block starting with its runid line unless runid is among the measures.

`-R qrels_twoaspects` and `-R qrels_threeaspects` read aspect qrels
(`topic iter docno a1 a2 [a3]`) and offer the Decision track's measures
(cam, cam_map, nlre, nwcs and their three-aspect versions; see
`scoring.core.measures.multi_aspect`), as its extension of trec_eval 9 computes
them: scores are ranked as 32-bit floats, -J is not offered, and -M keeps the
top N documents for every measure (the extension's nlre and nwcs read past
them). Like 10.0's measures, and unlike the extension, -q -c also prints the
topics a run lacks, with the value 0.

Where this differs from trec_eval 10.0, on purpose:
- Several runs in one invocation (10.0 takes one); see above for their blocks.
- A qrels topic missing from a run is skipped without -c (10.0 stops with
  "result qid not found", an accident of a fix elsewhere; 9.x and 10.0's
  own help text skip it).
- Input is checked line by line before anything is scored, and every error
  (a malformed line, a docno twice in a topic, a label or score that is not
  a number, a run line with more than 6 fields) stops with the file and line;
  blank qrels lines are skipped. trec_eval reads a bad number as 0 and
  reports some errors without the line.
- Errors exit with status 2 and one line on stderr.
- A qrels topic with no label >= 0 has no label levels here; trec_eval reads
  that count before setting it (its gain measures are undefined there).
- -D (debug), -Z (z-scores) and the prefs and qrels_jg formats are not offered.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import BinaryIO, TextIO

from scoring.core.command_line import UsageError, guarded, read_inputs, run_file_names
from scoring.core.evaluation import evaluate
from scoring.core.measures.catalog import THREE_ASPECTS, TREC, TWO_ASPECTS, Catalog
from scoring.core.measures.rankings import EvalOptions
from scoring.core.qrels import (
    THREE_ASPECT_QRELS,
    TREC_QRELS,
    TWO_ASPECT_QRELS,
    QrelsLayout,
)
from scoring.core.report import FORMATS, write_report

VERSION = "10.0 (judging workbench)"
USAGE = """\
Usage: trec_eval [-q] [-c] [-n] [-J] [-M num] [-l num] [-N num] [-m measure[.params]]...
                 [-R qrels] [-T trec_results] [--format text|tsv|json] rel_info_file run...
  -q  also print the values of each topic
  -c  average over all qrels topics; a topic missing from a run scores as trec_eval's
      one-document placeholder ranking
  -n  no summary
  -J  score judged documents only
  -M  score at most num documents per topic
  -l  lowest label counted as relevant (default 1)
  -N  number of documents in the collection (for utility)
  -m  measure, nickname (official, set, all_trec) or measure.params (P.5,10); repeatable
  -R  rel_info format: qrels (topic iter docno rel), or qrels_twoaspects and
      qrels_threeaspects (topic iter docno a1 a2 [a3]) for the Decision track's measures
  -T  results format (trec_results)
  --format  text (trec_eval's, default), tsv or json
A run may be a directory: its files are scored in name order.
Several runs print one block each; in text, each block starts with the run's
"runid  all  TAG" line (as -m runid prints it) unless runid is printed already
(-m runid, official, all_trec). tsv and json name the run on every row.
"""


@dataclass(frozen=True)
class RelInfoFormat:
    """A -R format (named as its layout): the layout of the rel_info file, the
    measures it offers, and whether it ranks 32-bit scores and offers -J, as
    the program that defined it does."""

    layout: QrelsLayout
    catalog: Catalog
    single_precision_scores: bool = False
    judged_only: bool = True

    @property
    def name(self) -> str:
        return self.layout.name


# The -R formats. Another one is one more entry: the layout of its file, and a
# Catalog of measures computed from `Rankings` (which carry the layout's columns).
REL_INFO_FORMATS: dict[str, RelInfoFormat] = {
    rel_info_format.name: rel_info_format
    for rel_info_format in (
        RelInfoFormat(TREC_QRELS, TREC),
        RelInfoFormat(
            TWO_ASPECT_QRELS, TWO_ASPECTS, single_precision_scores=True, judged_only=False
        ),
        RelInfoFormat(
            THREE_ASPECT_QRELS, THREE_ASPECTS, single_precision_scores=True, judged_only=False
        ),
    )
}
_UNSUPPORTED_REL_INFO_FORMATS = ("prefs", "qrels_prefs", "qrels_jg")
RESULTS_FORMATS = ("trec_results",)


@dataclass(frozen=True)
class _Option:
    short: str | None
    long: str
    takes_value: bool
    unsupported: bool = False


_OPTIONS = (
    _Option("h", "help", False),
    _Option("v", "version", False),
    _Option("q", "query_eval_wanted", False),
    _Option("m", "measure", True),
    _Option("c", "complete_rel_info_wanted", False),
    _Option("l", "level_for_rel", True),
    _Option("n", "nosummary", False),
    _Option("J", "Judged_docs_only", False),
    _Option("N", "Number_docs_in_coll", True),
    _Option("M", "Max_retrieved_per_topic", True),
    _Option("R", "Rel_info_format", True),
    _Option("T", "Results_format", True),
    _Option(None, "format", True),
    _Option("D", "Debug_level", True, unsupported=True),
    _Option("Z", "Zscore", True, unsupported=True),
    _Option("o", "Output_old_results_format", False, unsupported=True),
)


@dataclass
class CommandLine:
    """What the arguments ask for."""

    help: bool = False
    version: bool = False
    per_topic: bool = False
    summary: bool = True
    measures: list[str] = field(default_factory=list)
    options: EvalOptions = field(default_factory=EvalOptions)
    rel_info_format: str = "qrels"
    results_format: str = "trec_results"
    output_format: str = "text"
    files: list[str] = field(default_factory=list)


def parse_command_line(argv: Sequence[str]) -> CommandLine:
    command = CommandLine()
    options = command.options
    for option, value in _getopt(argv, command.files):
        match option.long:
            case "help":
                command.help = True
            case "version":
                command.version = True
            case "query_eval_wanted":
                command.per_topic = True
            case "measure":
                command.measures.append(str(value))
            case "complete_rel_info_wanted":
                options = replace(options, complete=True)
            case "level_for_rel":
                options = replace(options, relevance_level=_integer(option, value))
            case "nosummary":
                command.summary = False
            case "Judged_docs_only":
                options = replace(options, judged_only=True)
            case "Number_docs_in_coll":
                options = replace(options, num_docs_in_collection=_integer(option, value))
            case "Max_retrieved_per_topic":
                options = replace(options, max_docs_per_topic=_integer(option, value, minimum=0))
            case "Rel_info_format":
                command.rel_info_format = str(value)
            case "Results_format":
                command.results_format = str(value)
            case "format":
                command.output_format = str(value)
    command.options = options
    return command


def _getopt(argv: Sequence[str], operands: list[str]) -> list[tuple[_Option, str | None]]:
    """GNU getopt_long: options and operands in any order, `--` ends the options."""
    found: list[tuple[_Option, str | None]] = []
    arguments = list(argv)
    while arguments:
        argument = arguments.pop(0)
        if argument == "--":
            operands.extend(arguments)
            break
        if argument.startswith("--"):
            name, equals, value = argument[2:].partition("=")
            option = _long_option(name)
            if option.takes_value and not equals:
                value = _next_value(arguments, f"--{option.long}")
            elif equals and not option.takes_value:
                raise UsageError(f"option --{option.long} takes no value")
            found.append((option, value if option.takes_value else None))
        elif argument.startswith("-") and argument != "-":
            letters = argument[1:]
            while letters:
                option = _short_option(letters[0])
                letters = letters[1:]
                if option.takes_value:
                    found.append((option, letters or _next_value(arguments, f"-{option.short}")))
                    break
                found.append((option, None))
        else:
            operands.append(argument)
    for option, _ in found:
        if option.unsupported:
            raise UsageError(f"option --{option.long} of trec_eval is not supported")
    return found


def _long_option(name: str) -> _Option:
    exact = [option for option in _OPTIONS if option.long == name]
    matches = exact or [option for option in _OPTIONS if name and option.long.startswith(name)]
    if len(matches) != 1:
        raise UsageError(f"{'ambiguous' if matches else 'unknown'} option --{name}")
    return matches[0]


def _short_option(letter: str) -> _Option:
    for option in _OPTIONS:
        if option.short == letter:
            return option
    raise UsageError(f"unknown option -{letter}")


def _next_value(arguments: list[str], option: str) -> str:
    if not arguments:
        raise UsageError(f"option {option} needs a value")
    return arguments.pop(0)


def _integer(option: _Option, value: str | None, minimum: int | None = None) -> int:
    try:
        number = int(str(value))
    except ValueError:
        raise UsageError(f"option -{option.short} needs an integer, got {value!r}") from None
    if minimum is not None and number < minimum:
        raise UsageError(f"option -{option.short} needs an integer >= {minimum}, got {number}")
    return number


def main(
    argv: Sequence[str], stdout: TextIO, stderr: TextIO, *, stdin: BinaryIO | None = None
) -> int:
    """Run trec_eval on `argv` (without the program name); returns the exit status."""

    def command() -> int:
        parsed = parse_command_line(argv)
        if parsed.help:
            stdout.write(_help(parsed.rel_info_format))
        elif parsed.version:
            stdout.write(f"trec_eval version {VERSION}\n")
        else:
            _run(parsed, stdout, stdin or sys.stdin.buffer)
        return 0

    return guarded("trec_eval", command, stderr)


def _run(command: CommandLine, stdout: TextIO, stdin: BinaryIO) -> None:
    rel_info_format = _rel_info_format(command.rel_info_format)
    if command.results_format not in RESULTS_FORMATS:
        raise UsageError(f"unknown results format '{command.results_format}' (known: trec_results)")
    if command.output_format not in FORMATS:
        raise UsageError(
            f"unknown output format '{command.output_format}' (known: text, tsv, json)"
        )
    if len(command.files) < 2:
        raise UsageError("needs a rel_info file and at least one run (see --help)")
    options = command.options
    if options.judged_only and not rel_info_format.judged_only:
        raise UsageError(f"option -J is not offered with -R {rel_info_format.name}")
    if rel_info_format.single_precision_scores:
        options = replace(options, single_precision_scores=True)
    # As trec_eval reads -m: the golden outputs of NIST's own tests depend on it.
    requested = rel_info_format.catalog.select(command.measures, strict=False)
    qrels_path, run_arguments = command.files[0], command.files[1:]
    names = run_file_names(run_arguments)
    qrels, runs = read_inputs(qrels_path, rel_info_format.layout, names, stdin)
    evaluation = evaluate(qrels, runs, requested, options)
    for run, name in enumerate(names):
        if not evaluation.groups_of(run):
            raise UsageError(f"{name}: no topic of the run is in the qrels")
    write_report(
        evaluation,
        stdout,
        run_names=names,
        output_format=command.output_format,
        per_topic=command.per_topic,
        summary=command.summary,
    )


def _help(rel_info_format: str) -> str:
    catalog = REL_INFO_FORMATS.get(rel_info_format, REL_INFO_FORMATS["qrels"]).catalog
    nicknames = ", ".join(catalog.nicknames)
    measures = "".join(f"  {measure.name:<22}{measure.doc}\n" for measure in catalog.measures)
    return f"{USAGE}\nMeasures, in output order (nicknames: {nicknames}):\n{measures}"


def _rel_info_format(name: str) -> RelInfoFormat:
    if name in REL_INFO_FORMATS:
        return REL_INFO_FORMATS[name]
    if name in _UNSUPPORTED_REL_INFO_FORMATS:
        raise UsageError(f"rel_info format '{name}' of trec_eval is not supported")
    known = ", ".join(REL_INFO_FORMATS)
    raise UsageError(f"unknown rel_info format '{name}' (known: {known})")
