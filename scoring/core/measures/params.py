"""Measure parameters as trec_eval 10.0 reads them from `-m name.params`.

Each measure declares one `ParamStyle`; the style says how the text after
the first dot is read, checked and shown in the printed measure names:

    P.5,10          CUTOFFS    P_5  P_10
    iprec_at_recall..1,.5
                    FRACTIONS  iprec_at_recall_0.10  iprec_at_recall_0.50
    utility.2,-1,0,0
                    NUMBERS    utility_2,-1,0,0
    ndcg.1=3,2=9    PAIRS      ndcg_1=3,2=9

Every number is read whole: trec_eval reads them with C's atol/atof, from the
longest numeric prefix, so that `P.23.4` is P_23 and `P.1e400` P_1 without a
word; we refuse such a parameter, saying why, and take every parameter
trec_eval reads in full exactly as it does (`c_atol`, `c_atof` stay its
readers). A cutoff is at most MAX_CUTOFF (no ranking is longer), a number is
finite.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from itertools import pairwise

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
# The largest cutoff: ranks are 32-bit integers wherever they are stored or counted.
MAX_CUTOFF = 2**31 - 1
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


def parse_params(style: ParamStyle, text: str, *, strict: bool = True) -> Params:
    """Read `text` (the part after `name.`) for a measure of `style`: every number
    whole (`strict`), or from its numeric prefix as trec_eval reads it (its
    command line: `-m ndcg_cut.10,23.4` is ndcg_cut_23 in NIST's own tests)."""
    read_int, read_float = (whole_int, whole_float) if strict else (c_atol, c_atof)
    if style is ParamStyle.NONE:
        return Params(text=text)
    if style is ParamStyle.PAIRS:
        return Params(pairs=_pairs(text, read_float), text=text)
    if style is ParamStyle.CUTOFFS:
        cutoffs = sorted(read_int(part) for part in text.split(","))
        if cutoffs[0] <= 0:
            raise ParamError(f"cutoffs must be positive, got {text!r}")
        if strict and cutoffs[-1] > MAX_CUTOFF:
            raise ParamError(f"cutoff {cutoffs[-1]} is past the largest, {MAX_CUTOFF:,}")
        _check_distinct(cutoffs, text)
        return Params(numbers=tuple(float(cutoff) for cutoff in cutoffs), text=text)
    numbers = [read_float(part) for part in text.split(",")]
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
        raise ParamError(f"{text[:40]!r} is not a number")
    return _long(match.group(1))


def c_atof(text: str) -> float:
    """C's atof: the leading decimal number of `text`; ParamError when there is none."""
    match = _DOUBLE_PREFIX.match(text)
    if not match:
        raise ParamError(f"{text!r} is not a number")
    return float(match.group(1))


def whole_int(text: str) -> int:
    """`text` read whole as an integer (spaces around it allowed); ParamError when
    it is not one, or only begins with one (`23.4`, `1e400`)."""
    match = _LONG_PREFIX.fullmatch(text.rstrip())
    if not match:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise ParamError(f"{shown!r} is not a whole number (trec_eval would read {c_atol(text)})")
    return _long(match.group(1))


def whole_float(text: str) -> float:
    """`text` read whole as a finite decimal number; ParamError when it is not one,
    or only begins with one (`1.5x`, `1,5`), or is infinite or not a number."""
    number = c_atof(text)
    shown = text if len(text) <= 40 else text[:40] + "..."
    if not _DOUBLE_PREFIX.fullmatch(text.rstrip()):
        raise ParamError(f"{shown!r} is not a number (trec_eval would read {number:g})")
    if not math.isfinite(number):
        raise ParamError(f"{shown!r} is not a finite number")
    return number


def _long(digits: str) -> int:
    """Signed decimal digits as an integer clamped to C's long, as strtol clamps
    them (without converting thousands of digits: Python refuses past 4,300)."""
    if len(digits.lstrip("+-").lstrip("0")) > 19:
        return _INT64_MIN if digits.startswith("-") else _INT64_MAX
    return min(max(int(digits), _INT64_MIN), _INT64_MAX)


def _check_distinct(sorted_values: list[int] | list[float], text: str) -> None:
    if any(a == b for a, b in pairwise(sorted_values)):
        raise ParamError(f"duplicate values in {text!r}")


def _pairs(text: str, read_float: Callable[[str], float]) -> tuple[tuple[str, float], ...]:
    """`name=value,...`; like trec_eval, separators must alternate = , = ... and end on =."""
    separators = [char for char in text if char in "=,"]
    expected = ["=", ","] * len(separators)
    if not separators or separators != expected[: len(separators)] or separators[-1] != "=":
        raise ParamError(f"malformed name=value pairs {text!r}")
    pairs = []
    for part in text.split(","):
        name, value = part.split("=")
        pairs.append((name, read_float(value)))
    return tuple(pairs)
