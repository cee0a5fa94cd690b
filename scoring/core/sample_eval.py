"""A sample_eval.pl-compatible command line over `scoring.core.evaluation`. Pure core.

    sample_eval [-q] [--format text|tsv] QRELS RUN...

QRELS is a stratified qrels, `topic iter docno stratum rel` with rel -1 for
a pooled document that was not sampled (`scoring.core.qrels.STRATIFIED_QRELS`).
RUN may be several files or directories, and `-` for standard input, as
trec_eval takes them. Each run prints one block in the layout of NIST's
sample_eval.pl (the version of 10 Oct 2011): with -q each topic, in numeric
order, then the summary (`--format tsv`: the rows of `wb-trec-eval --format tsv`,
`run run_id query_id measure value` at full precision, in trec_eval's order).
The measures are in `scoring.core.measures.inferred`;
`evaluate_sample` computes them from frames, also with explicit inclusion
probabilities instead of the script's per-stratum sampling rates.

Where this differs from sample_eval.pl, on purpose:
- Several runs in one invocation (the script takes one).
- Input is checked line by line before anything is scored, and every error (a
  malformed line, a stratum or label that is not an integer, a docno twice in
  a topic) stops with the file and line, exit status 2 and one line on stderr;
  the script reads each file as one stream of words, five or six at a time.
  A run with no topic in the qrels is an error too (the script divides by 0).
- Topics are matched as strings, as everywhere in the workbench: the script
  strips leading zeros from the run's topics only (not the qrels'), so that
  its run topic "007" matches the qrels topic "7" and never "007".
- Two defects of the ideal DCG are fixed (see `scoring.core.measures.sampling`):
  grades 10 and more were ordered as strings, and ranks past 1000 were added.
- The summary sums the topics in byte order (the script: numeric order); this
  moves values by a rounding error at most. Topics that the script's numeric
  order ties (ids that are not numbers count as 0) print in byte order.
- -G (a relevance mapping given after the files) is not offered.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, BinaryIO, TextIO

from scoring.core.command_line import UsageError, guarded, read_inputs, run_file_names
from scoring.core.evaluation import Evaluation, MeasureValues, evaluate
from scoring.core.measures.catalog import SAMPLE_EVAL
from scoring.core.measures.rankings import Frame
from scoring.core.measures.sampling import with_inclusion_probabilities
from scoring.core.qrels import STRATIFIED_QRELS
from scoring.core.report import write_report

if TYPE_CHECKING:
    import pandas as pd

USAGE = """\
Usage: sample_eval [-q] [--format text|tsv] qrels_file run...
  -q  also print the values of each topic
  --format  text (sample_eval.pl's, default) or tsv (trec_eval's, every digit)
qrels_file: topic iter docno stratum rel, rel -1 for pooled documents not sampled.
A run may be a directory: its files are scored in name order.
"""
OUTPUT_FORMATS = ("text", "tsv")
# sample_eval.pl's printf formats, per measure: the tabs after the name, and the value.
_LINES = {
    "infAP": "{name}\t\t{topic}\t\t{value:6.4f}\n",
    "infNDCG": "{name}\t\t{topic}\t\t{value:6.4f}\n",
    "iprec_at_recall": "{name}\t{topic}\t\t{value:6.4f}\n",
    "iP": "{name}\t\t{topic}\t\t{value:6.4f}\n",
    "inum_rel_ret": "{name}\t{topic}\t{value:14.4f}\n",
    "inum_rel": "{name}\t{topic}\t{value:14.4f}\n",
    "num_ret": "{name}\t\t{topic}\t{value:9.0f}\n",
}
# What Perl's <=> reads of a topic: its leading number, 0 without one.
_PERL_NUMBER = re.compile(r"\s*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")


def evaluate_sample(
    qrels: pd.DataFrame, runs: Sequence[Frame], *, inclusion: pd.DataFrame | None = None
) -> Evaluation:
    """sample_eval's measures of each run against a stratified qrels frame.

    The inclusion probabilities are the script's sampling rate of each stratum
    (judged / pooled), or those of `inclusion`: per stratum or per document,
    see `scoring.core.measures.sampling.with_inclusion_probabilities`.
    """
    if inclusion is not None:
        qrels = with_inclusion_probabilities(qrels, inclusion)
    return evaluate(qrels, runs, SAMPLE_EVAL.select([]))


def main(
    argv: Sequence[str], stdout: TextIO, stderr: TextIO, *, stdin: BinaryIO | None = None
) -> int:
    """Run sample_eval on `argv` (without the program name); returns the exit status."""

    def command() -> int:
        per_topic, output_format, files = _parse(argv)
        if files is None:
            stdout.write(USAGE)
        else:
            _run(files, per_topic, output_format, stdout, stdin or sys.stdin.buffer)
        return 0

    return guarded("sample_eval", command, stderr)


def _parse(argv: Sequence[str]) -> tuple[bool, str, list[str] | None]:
    """(-q given, the output format, the files), or no files for --help."""
    per_topic, output_format, files = False, "text", []
    arguments = list(argv)
    while arguments:
        argument = arguments.pop(0)
        if argument in ("-h", "--help"):
            return per_topic, output_format, None
        if argument == "-q":
            per_topic = True
        elif argument == "--format" or argument.startswith("--format="):
            _, equals, output_format = argument.partition("=")
            if not equals:
                if not arguments:
                    raise UsageError("option --format needs a value")
                output_format = arguments.pop(0)
            if output_format not in OUTPUT_FORMATS:
                raise UsageError(f"unknown output format '{output_format}' (known: text, tsv)")
        elif argument.startswith("-") and argument != "-":
            raise UsageError(f"unknown option {argument} (see --help)")
        else:
            files.append(argument)
    if len(files) < 2:
        raise UsageError("needs a qrels file and at least one run (see --help)")
    return per_topic, output_format, files


def _run(
    files: list[str], per_topic: bool, output_format: str, stdout: TextIO, stdin: BinaryIO
) -> None:
    names = run_file_names(files[1:])
    qrels, runs = read_inputs(files[0], STRATIFIED_QRELS, names, stdin)
    evaluation = evaluate_sample(qrels, runs)
    for run, name in enumerate(names):
        if not evaluation.groups_of(run):
            raise UsageError(f"{name}: no topic of the run is in the qrels")
    if output_format == "tsv":
        write_report(evaluation, stdout, run_names=names, output_format="tsv", per_topic=per_topic)
        return
    for run in range(len(names)):
        stdout.write("".join(_lines(evaluation, run, per_topic=per_topic)))


def _lines(evaluation: Evaluation, run: int, *, per_topic: bool) -> Iterator[str]:
    """One run's block: each topic's values (with -q), then the summary."""
    if per_topic:
        groups = sorted(evaluation.groups_of(run), key=lambda group: _topic_key(evaluation, group))
        for group in groups:
            topic = evaluation.topics[evaluation.group_topic[group]]
            for values in evaluation.measures:
                if values.requested.measure.per_query:
                    yield from _formatted(values, topic, values.per_topic[group])
    for values in evaluation.measures:
        assert values.summary is not None  # every sample_eval measure has one
        yield from _formatted(values, "all", values.summary[run])


def _formatted(values: MeasureValues, topic: str, row: Sequence[float]) -> Iterator[str]:
    line = _LINES[values.requested.measure.name]
    for name, value in zip(values.requested.names, row, strict=True):
        yield line.format(name=name, topic=topic, value=float(value))


def _topic_key(evaluation: Evaluation, group: int) -> tuple[float, str]:
    """The script's topic order (numeric), then byte order among topics it ties."""
    topic = evaluation.topics[evaluation.group_topic[group]]
    number = _PERL_NUMBER.match(topic)
    return (float(number.group(1)) if number else 0.0, topic)
