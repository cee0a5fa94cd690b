"""Write an Evaluation as trec_eval prints it, or as TSV or JSON for machines.

Text is byte for byte trec_eval's: `measure<pad to 22>\\ttopic\\tvalue`, values
with 4 decimals, counts as integers; several runs give one block each, and
each block starts with the run's `runid` line (as `-m runid` prints it) unless
the block prints runid already, so that the blocks can be told apart; one
run's output is trec_eval's, unchanged.
TSV and JSON hold the same rows with full-precision values and two more
columns: run (the file) and run_id (its tag).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TextIO

from scoring.core.evaluation import Evaluation
from scoring.core.measures.base import ValueKind

FORMATS = ("text", "tsv", "json")
_FIELDS = ("run", "run_id", "query_id", "measure", "value")
RUNID = "runid"  # the measure whose line names a block's run


def write_report(
    evaluation: Evaluation,
    out: TextIO,
    *,
    run_names: Sequence[str],
    output_format: str = "text",
    per_topic: bool = False,
    summary: bool = True,
) -> None:
    """Write the rows of every run; `per_topic` is -q, `summary` the opposite of -n."""
    if output_format == "text":
        for run in range(len(run_names)):
            lines = list(evaluation.rows(run, per_topic=per_topic, summary=summary))
            if len(run_names) > 1 and not any(line[0] == RUNID for line in lines):
                lines.insert(0, (RUNID, "all", evaluation.run_tags[run], ValueKind.TAG))
            block = "".join(
                f"{name:<22}\t{topic}\t{_trec_eval_text(value, kind)}\n"
                for name, topic, value, kind in lines
            )
            if block:  # Django's OutputWrapper would add a newline to an empty write
                out.write(block)
        return
    records = _records(evaluation, run_names, per_topic=per_topic, summary=summary)
    if output_format == "tsv":
        out.write("\t".join(_FIELDS) + "\n")
        out.write("".join("\t".join(map(str, record)) + "\n" for record in records))
    elif output_format == "json":
        import json  # only for this format: the command line starts without it

        rows = [dict(zip(_FIELDS, _json_safe(record), strict=True)) for record in records]
        out.write(json.dumps(rows, indent=1, allow_nan=False) + "\n")
    else:
        raise ValueError(f"unknown output format {output_format!r}")


def _records(
    evaluation: Evaluation, run_names: Sequence[str], *, per_topic: bool, summary: bool
) -> Iterator[tuple[str, str, str, str, object]]:
    for run, run_name in enumerate(run_names):
        tag = evaluation.run_tags[run]
        for name, topic, value, kind in evaluation.rows(run, per_topic=per_topic, summary=summary):
            yield run_name, tag, topic, name, _machine_value(value, kind)


def _machine_value(value: float | str, kind: ValueKind) -> float | str:
    if kind is ValueKind.COUNT:
        return int(value)
    if kind is ValueKind.REAL:
        return float(value)
    return value


def _json_safe(record: tuple[object, ...]) -> tuple[object, ...]:
    """JSON has no NaN or infinity: null stands for them."""
    return tuple(
        None if isinstance(value, float) and not math.isfinite(value) else value for value in record
    )


def _trec_eval_text(value: float | str, kind: ValueKind) -> str:
    if kind is ValueKind.REAL:
        number = float(value)
        if math.isnan(number):  # glibc prints the sign of a NaN, Python does not
            return f"{'-nan' if math.copysign(1.0, number) < 0 else 'nan':>6}"
        return f"{number:6.4f}"
    if kind is ValueKind.COUNT:
        return str(int(value))
    if kind is ValueKind.STRING:
        return f"'{value}'"
    return str(value)
