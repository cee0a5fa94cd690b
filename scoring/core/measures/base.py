"""What a measure is: its name, parameters, computation, summary and printing.

A measure computes one value per group (run x topic) for each of its
value names (P computes P_5, P_10, ... at once), from a batch of
`Rankings`; `evaluate` runs it over all batches and summarises per run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from scoring.core.measures.params import Params, ParamStyle, parse_params, value_names
from scoring.core.measures.rankings import Rankings
from scoring.core.measures.summary import SummaryContext, mean

Compute = Callable[[Rankings, Params], np.ndarray]
Summarize = Callable[[np.ndarray, SummaryContext], np.ndarray]


class ValueKind(Enum):
    """How trec_eval prints a value."""

    REAL = "real"  # %6.4f
    COUNT = "count"  # an integer
    TAG = "tag"  # text as is (runid)
    STRING = "string"  # text in single quotes (relstring)


@dataclass(frozen=True)
class Measure:
    """One trec_eval measure (or family, such as P_5, P_10, ...).

    compute: (Rankings, Params) -> (groups,) or (groups, values) array.
    summary: per-run summary from the per-topic values, None for none.
    per_query: printed for each topic with -q.
    reset_for_missing_topic: trec_eval 10.0 zeroes these after scoring a
        topic missing from the run (-c) on its placeholder ranking.
    value_names: the printed names of a measure without parameters that has
        several values (sample_eval's iP10, iP50, ...); its name alone otherwise.
    """

    name: str
    compute: Compute
    doc: str
    params: ParamStyle = ParamStyle.NONE
    defaults: Params = field(default_factory=Params)
    summary: Summarize | None = mean
    per_query: bool = True
    kind: ValueKind = ValueKind.REAL
    reset_for_missing_topic: bool = False
    value_names: tuple[str, ...] = ()

    def configure(self, text: str | None = None, *, strict: bool = True) -> RequestedMeasure:
        """This measure with the parameters of `-m name.text` (defaults when None),
        read whole (`strict`) or as trec_eval reads them (`parse_params`)."""
        if text is None or self.params is ParamStyle.NONE:
            params = self.defaults  # trec_eval ignores parameters given to such measures
        else:
            params = parse_params(self.params, text, strict=strict)
        names = self.value_names or value_names(self.name, self.params, params)
        return RequestedMeasure(self, params, names)


@dataclass(frozen=True)
class RequestedMeasure:
    """A measure with its parameters and the printed name of each of its values."""

    measure: Measure
    params: Params
    names: tuple[str, ...]

    def compute(self, rankings: Rankings) -> np.ndarray:
        values = self.measure.compute(rankings, self.params)
        return values.reshape(len(rankings.num_ret), len(self.names))
