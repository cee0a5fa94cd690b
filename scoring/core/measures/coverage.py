"""How much of a ranking the qrels cover: unj, relstring."""

from __future__ import annotations

import numpy as np

from scoring.core.measures.base import Measure, ValueKind
from scoring.core.measures.numerics import c_long
from scoring.core.measures.params import Params, ParamStyle
from scoring.core.measures.rankings import NONPOOL, UNJUDGED, Rankings


def _unjudged_at(rankings: Rankings, params: Params) -> np.ndarray:
    unjudged = (rankings.label == NONPOOL) | (rankings.label == UNJUDGED)
    counts = rankings.at_cutoffs(np.cumsum(unjudged, axis=0), params.cutoffs)
    return counts / np.array(params.cutoffs, dtype=np.float64)


def _relevance_string(rankings: Rankings, params: Params) -> np.ndarray:
    """The judgments of the first documents, one character each: the label 0-9,
    '>' above 9, '-' not in the qrels, '.' pooled but not judged."""
    width = min(max(int(c_long(np.asarray(params.numbers[0]))), 0), rankings.depth)
    label = rankings.label[:width].T
    characters = np.select(
        [label > 9, label >= 0, label == NONPOOL, label == UNJUDGED],
        [ord(">"), ord("0") + np.clip(label, 0, 9), ord("-"), ord(".")],
        ord("<"),
    )
    characters[~rankings.valid[:width].T] = 0  # NUL bytes end each string
    if width == 0:
        return np.full(len(rankings.num_ret), "", dtype=object)
    strings = np.ascontiguousarray(characters, dtype=np.uint8).view(f"S{width}")[:, 0]
    return strings.astype(str).astype(object)


UNJ = Measure(
    "unj",
    _unjudged_at,
    "Fraction of the first cutoff documents that are unjudged (not in the qrels or < 0).",
    params=ParamStyle.CUTOFFS,
    defaults=Params(numbers=(5.0, 10.0, 20.0)),
    reset_for_missing_topic=True,
)
RELSTRING = Measure(
    "relstring",
    _relevance_string,
    "The judgments of the first documents as a string (default 10); per topic only.",
    params=ParamStyle.NUMBERS,
    defaults=Params(numbers=(10.0,)),
    summary=None,
    kind=ValueKind.STRING,
    reset_for_missing_topic=True,
)
