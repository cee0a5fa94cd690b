"""Measure parameters as trec_eval 10.0 reads them from `-m name.params`.

Each measure declares one `ParamStyle`; the style says how the text after
the first dot is read, checked and shown in the printed measure names:

    P.5,10          CUTOFFS    P_5  P_10
    iprec_at_recall..1,.5
                    FRACTIONS  iprec_at_recall_0.10  iprec_at_recall_0.50
    utility.2,-1,0,0
                    NUMBERS    utility_2,-1,0,0
    ndcg.1=3,2=9    PAIRS      ndcg_1=3,2=9

Numbers are read like C's atol/atof read them, from the longest numeric
prefix ("23.4" is the cutoff 23), so that names and values match trec_eval.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from itertools import pairwise

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_LONG_PREFIX = re.compile(r"\s*([+-]?[0-9]+)")
_DOUBLE_PREFIX = re.compile(
    r"\s*([+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan))",
    re.IGNORECASE,
)


class ParamError(ValueError):
    """A measure parameter string that trec_eval would refuse."""


class ParamStyle(Enum):
    NONE = "none"  # no parameters; any given are ignored, as trec_eval does
    CUTOFFS = "cutoffs"  # positive integers, sorted, one value each
    FRACTIONS = "fractions"  # numbers, sorted, one value each
    NUMBERS = "numbers"  # numbers in the given order, one value in all
    PAIRS = "pairs"  # name=number pairs, one value in all


@dataclass(frozen=True)
class Params:
    """Parsed parameters; `text` is the string given on the command line, or None."""

    numbers: tuple[float, ...] = ()
    pairs: tuple[tuple[str, float], ...] = ()
    text: str | None = None

    @property
    def cutoffs(self) -> tuple[int, ...]:
        return tuple(int(number) for number in self.numbers)


# trec_eval's default cutoffs for P, recall, relative_P, map_cut and ndcg_cut.
DEFAULT_CUTOFFS = Params(numbers=(5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0))


def parse_params(style: ParamStyle, text: str) -> Params:
    """Read `text` (the part after `name.`) for a measure of `style`."""
    if style is ParamStyle.NONE:
        return Params(text=text)
    if style is ParamStyle.PAIRS:
        return Params(pairs=_pairs(text), text=text)
    if style is ParamStyle.CUTOFFS:
        cutoffs = sorted(c_atol(part) for part in text.split(","))
        if cutoffs[0] <= 0:
            raise ParamError(f"cutoffs must be positive, got {text!r}")
        _check_distinct(cutoffs, text)
        return Params(numbers=tuple(float(cutoff) for cutoff in cutoffs), text=text)
    numbers = [c_atof(part) for part in text.split(",")]
    if style is ParamStyle.FRACTIONS:
        numbers.sort()
        _check_distinct(numbers, text)
    return Params(numbers=tuple(numbers), text=text)


def value_names(name: str, style: ParamStyle, params: Params) -> tuple[str, ...]:
    """The printed name of each value the measure produces."""
    if style is ParamStyle.CUTOFFS:
        return tuple(f"{name}_{cutoff}" for cutoff in params.cutoffs)
    if style is ParamStyle.FRACTIONS:
        # trec_eval formats into a buffer of len(name) + 10 bytes: long numbers are cut.
        return tuple(f"{name}_{number:3.2f}"[: len(name) + 9] for number in params.numbers)
    if style is ParamStyle.NONE or params.text is None:
        return (name,)
    return (f"{name}_{params.text}",)


def c_atol(text: str) -> int:
    """C's atol: the leading integer of `text`; ParamError when there is none."""
    match = _LONG_PREFIX.match(text)
    if not match:
        raise ParamError(f"{text!r} is not a number")
    return min(max(int(match.group(1)), _INT64_MIN), _INT64_MAX)


def c_atof(text: str) -> float:
    """C's atof: the leading decimal number of `text`; ParamError when there is none."""
    match = _DOUBLE_PREFIX.match(text)
    if not match:
        raise ParamError(f"{text!r} is not a number")
    return float(match.group(1))


def _check_distinct(sorted_values: list[int] | list[float], text: str) -> None:
    if any(a == b for a, b in pairwise(sorted_values)):
        raise ParamError(f"duplicate values in {text!r}")


def _pairs(text: str) -> tuple[tuple[str, float], ...]:
    """`name=value,...`; like trec_eval, separators must alternate = , = ... and end on =."""
    separators = [char for char in text if char in "=,"]
    expected = ["=", ","] * len(separators)
    if not separators or separators != expected[: len(separators)] or separators[-1] != "=":
        raise ParamError(f"malformed name=value pairs {text!r}")
    pairs = []
    for part in text.split(","):
        name, value = part.split("=")
        pairs.append((name, c_atof(value)))
    return tuple(pairs)
