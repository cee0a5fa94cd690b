"""What the analysis command lines (leaderboard, reusability) share: a parser whose
errors are one line and exit status 2, and the one-number measure they rank by.
Pure core. (trec_eval parses its own arguments: argparse would slow its start.)"""

from __future__ import annotations

import argparse
from typing import NoReturn

from scoring.core.command_line import UsageError
from scoring.core.measures.base import RequestedMeasure, ValueKind


class ArgumentParser(argparse.ArgumentParser):
    """argparse that raises UsageError (one line, exit 2) rather than printing usage."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def one_number(requested: list[RequestedMeasure], argument: str) -> RequestedMeasure:
    """The one per-topic number -m names: not a set of measures, one cutoff, numeric."""
    if len(requested) != 1:
        names = ", ".join(measure.measure.name for measure in requested)
        raise UsageError(f"-m {argument} names several measures ({names}); name one")
    measure = requested[0]
    if len(measure.names) != 1:
        raise UsageError(
            f"-m {argument} has {len(measure.names)} values ({', '.join(measure.names)}); "
            f"name one cutoff, e.g. -m {measure.measure.name}.{measure.names[0].rsplit('_', 1)[-1]}"
        )
    if not measure.measure.per_query:
        raise UsageError(f"measure '{measure.measure.name}' has no per-topic values")
    if measure.measure.kind not in (ValueKind.REAL, ValueKind.COUNT):
        raise UsageError(f"measure '{measure.measure.name}' is not a number")
    return measure
