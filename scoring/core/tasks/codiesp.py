"""CodiEsp (CLEF eHealth 2020 clinical coding), scored exactly as the official scripts.

Pure core, no Django. The official scripts are TeMU-BSC's
`codiespD_P_evaluation.py` (MAP, through trectools 0.0.42),
`comp_f1_diag_proc.py` (micro P/R/F1 of D and P) and `codiespX_evaluation.py`
(X); `docs/tasks.md` cites the lines each rule here comes from.

Files (tab-separated, no header, blank lines skipped):

    D/P gold      case  code                  a code once per mention
    D/P run       case  code                  ranked by line order within a case
    X gold        case  label  code  reference  start end[;start end...]
    X run         case  start end  label  code
    valid codes   code  [anything...]         the first column; X uses D's and P's

D and P (`score_ranked`):
- codes compare case-insensitively (all are lower-cased); case ids exactly;
- the run's repeated (case, code) pairs after the first, and its codes not in
  the valid list, are dropped before ranking; the first `DEPTH` (1000) codes
  left in a case are its ranking, in submission order (trectools 0.0.42 keeps
  the order of equal scores; later releases sort them by code, which changes
  the official numbers);
- AP of a case: the sum of the precisions at its relevant ranks over the
  number of distinct gold codes of the case (gold codes outside the valid
  list included, though no run can rank them);
- the official mean (`average="official"`): over the cases with at least one
  valid prediction, a case missing from the gold counting 0; a gold case with
  no valid prediction is left out. NaN when no case has one.
  `average="gold"`: over every gold case, an unpredicted one counting 0
  (trec_eval's -c), predicted cases outside the gold left out;
- precision, recall and F1 as comp_f1_diag_proc.py: TP summed over gold
  cases, predicted positives over every predicted case, distinct (case, code)
  pairs; NaN precision without a valid prediction, F1 0 when P + R = 0.

X (`score_x`): a (case, code) of the gold is found when a valid prediction of
that code in that case covers one of its references within `TOLERANCE` (10)
characters on each side (a discontinuous reference spans its first start to
its last end); the prediction's label is not compared. Precision: found /
distinct predicted (case, code) pairs, over every predicted case; recall:
found / distinct gold pairs.

Per document (`per_document`), NaN where the official gives NaN: a case
without predictions has no precision, a predicted case missing from the gold
no recall, and (X only) a predicted gold case with nothing found gets NaN for
all three, as the official X script leaves it out of its true-positive table.

D/P results also carry `extras`, ours and not the official's: category-level
(first three characters) micro P/R/F1 and the mean learning accuracy over the
ICD-10 code prefixes (`sets.learning_accuracy`).

Bad input raises `InputError` with every problem as `file:line: reason`; the
inputs the official scripts crash on (an empty file, a wrong column count, a
discontinuous position in an X run) say so.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from scoring.core.tasks import sets
from workbench.core.file_input import (
    NUL_PROBLEM,
    Source,
    read_source,
    source_name,
    strip_bom,
    utf8_problem,
)
from workbench.core.problems import InputError, ProblemLog

DEPTH = 1000  # trectools' get_map(depth=1000): codes ranked past it do not count
TOLERANCE = 10  # codiespX_evaluation.py's calculate_metrics(tol=10)

Average = Literal["official", "gold"]
AVERAGES: tuple[Average, ...] = ("official", "gold")

NAN = math.nan


# --------------------------------------------------------------------------
# Reading


@dataclass(frozen=True)
class Coding:
    """One line of a D/P gold or run file: a code (lower-cased) of a clinical case."""

    case: str
    code: str
    line: int


@dataclass(frozen=True)
class Reference:
    """One line of an X gold (a code's text reference) or an X run (a prediction)."""

    case: str
    code: str
    start: int
    end: int
    line: int


_SPAN = re.compile(r"([0-9]{1,15}) ([0-9]{1,15})")

_RUN_FORMAT = "case<TAB>code"
_X_GOLD_FORMAT = "case<TAB>label<TAB>code<TAB>reference<TAB>start end[;start end...]"
_X_RUN_FORMAT = "case<TAB>start end<TAB>label<TAB>code"


def _lines(data: bytes, log: ProblemLog) -> Iterator[tuple[int, list[str]]]:
    """The non-blank lines of a tab-separated file, split into cells."""
    if utf8_problem(data, log):
        return
    text = strip_bom(data).decode("utf-8")
    seen = False
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        if not line.strip():
            continue
        seen = True
        if "\x00" in line:
            log.add(number, NUL_PROBLEM)
            continue
        yield number, line.split("\t")
    if not seen:
        log.add(0, "empty file: no lines (the official scripts crash on an empty file)")


def _columns_problem(cells: list[str], expected: int, layout: str, crash: str) -> str | None:
    if len(cells) == expected:
        return None
    return (
        f"expected {expected} tab-separated columns ({layout}), found {len(cells)}"
        f" (the official {crash})"
    )


def _field_problem(what: str, value: str) -> str | None:
    if not value:
        return f"empty {what}"
    if value != value.strip() or any(c.isspace() for c in value):
        return f"{what} {value!r} contains whitespace (the official scripts split or misread it)"
    return None


def _case_and_code(number: int, case: str, code: str, log: ProblemLog) -> bool:
    for what, value in (("clinical case", case), ("code", code)):
        problem = _field_problem(what, value)
        if problem:
            log.add(number, problem)
            return False
    return True


def read_codes(source: Source, *, name: str | None = None) -> frozenset[str]:
    """The valid codes (lower-cased): the first column of a tab-separated file."""
    log = ProblemLog(source_name(source, name))
    codes = set()
    for number, cells in _lines(read_source(source), log):
        code = cells[0]
        problem = _field_problem("code", code)
        if problem:
            log.add(number, problem + " (the official scripts crash on an empty one)")
            continue
        codes.add(code.lower())
    if not log.ok:
        raise InputError.from_log(log)
    return frozenset(codes)


def read_codings(source: Source, *, name: str | None = None) -> list[Coding]:
    """A D/P gold or run file: `case<TAB>code` a line, in file order."""
    log = ProblemLog(source_name(source, name))
    rows = []
    for number, cells in _lines(read_source(source), log):
        problem = _columns_problem(
            cells,
            2,
            _RUN_FORMAT,
            "MAP script stops with an ImportError or a parser error, "
            "and comp_f1_diag_proc.py reads a 3-column file as columns 2 and 3",
        )
        if problem:
            log.add(number, problem)
            continue
        case, code = cells
        if _case_and_code(number, case, code, log):
            rows.append(Coding(case, code.lower(), number))
    if not log.ok:
        raise InputError.from_log(log)
    return rows


def _span(text: str) -> tuple[int, int] | None:
    match = _SPAN.fullmatch(text)
    return None if match is None else (int(match[1]), int(match[2]))


def read_x_gold(source: Source, *, name: str | None = None) -> list[Reference]:
    """An X gold file; a discontinuous reference spans its first start to its last end."""
    log = ProblemLog(source_name(source, name))
    rows = []
    for number, cells in _lines(read_source(source), log):
        problem = _columns_problem(
            cells, 5, _X_GOLD_FORMAT, "X script stops with an ImportError or a parser error"
        )
        if problem:
            log.add(number, problem)
            continue
        case, _label, code, _text, position = cells
        if not _case_and_code(number, case, code, log):
            continue
        fragments = [_span(part) for part in position.split(";")]
        if any(fragment is None for fragment in fragments):
            log.add(
                number,
                f"position {position!r} is not 'start end' or 'start end;start end...'"
                " with character offsets (the official X script crashes on it)",
            )
            continue
        start, end = fragments[0][0], fragments[-1][1]  # type: ignore[index]
        if end < start:
            log.add(number, f"the reference ends ({end}) before it starts ({start})")
            continue
        rows.append(Reference(case, code.lower(), start, end, number))
    if not log.ok:
        raise InputError.from_log(log)
    return rows


def read_x_run(source: Source, *, name: str | None = None) -> list[Reference]:
    """An X run: one `start end` span a line; the label column is not used."""
    log = ProblemLog(source_name(source, name))
    rows = []
    for number, cells in _lines(read_source(source), log):
        problem = _columns_problem(
            cells, 4, _X_RUN_FORMAT, "X script stops with an ImportError or a parser error"
        )
        if problem:
            log.add(number, problem)
            continue
        case, position, _label, code = cells
        if not _case_and_code(number, case, code, log):
            continue
        span = _span(position)
        if span is None:
            kind = "a discontinuous position" if ";" in position else "a position"
            log.add(
                number,
                f"{kind} {position!r}: a prediction gives one 'start end' span of character"
                " offsets (the official X script crashes on it)",
            )
            continue
        if span[1] < span[0]:
            log.add(number, f"the span ends ({span[1]}) before it starts ({span[0]})")
            continue
        rows.append(Reference(case, code.lower(), span[0], span[1], number))
    if not log.ok:
        raise InputError.from_log(log)
    return rows


# --------------------------------------------------------------------------
# Scoring


@dataclass(frozen=True)
class CaseScores:
    """One clinical case; NaN where the official script gives NaN (or, for ap,
    where the case is not part of the mean that was used)."""

    precision: float
    recall: float
    f1: float
    ap: float = NAN


@dataclass(frozen=True)
class Result:
    """The scores of one run. `map` and `average` are None for X.

    f1_set_to_zero: the official scripts set F1 to the integer 0 when P + R
    is 0, and print it as "0" rather than "0.0".
    """

    precision: float
    recall: float
    f1: float
    per_document: dict[str, CaseScores]
    f1_set_to_zero: bool = False
    map: float | None = None
    average: Average | None = None
    cases_averaged: int = 0
    counts: sets.Confusion = field(default_factory=lambda: sets.Confusion(0, 0, 0))
    extras: dict[str, float] = field(default_factory=dict)


def rank_codes(run: Iterable[Coding], valid_codes: frozenset[str]) -> dict[str, list[str]]:
    """Each case's ranking: its valid codes in submission order, repeats dropped,
    cut at DEPTH. Cases in order of their first valid code."""
    ranked: dict[str, list[str]] = {}
    seen: set[tuple[str, str]] = set()
    for row in run:
        key = (row.case, row.code)
        if key in seen:
            continue
        seen.add(key)
        if row.code in valid_codes:
            ranked.setdefault(row.case, []).append(row.code)
    return {case: codes[:DEPTH] for case, codes in ranked.items()}


def gold_sets(gold: Iterable[Coding]) -> dict[str, set[str]]:
    sets_by_case: dict[str, set[str]] = {}
    for row in gold:
        sets_by_case.setdefault(row.case, set()).add(row.code)
    return sets_by_case


def average_precision(ranking: Sequence[str], relevant: set[str]) -> float:
    """trectools 0.0.42's AP: the precision at each relevant rank, added in rank
    order, over the number of relevant codes."""
    total, found = 0.0, 0
    for rank, code in enumerate(ranking, start=1):
        if code in relevant:
            found += 1
            total += found / rank
    return total / len(relevant)


def _mean(values: dict[str, float], cases: Iterable[str], count: int) -> float:
    """Sum in case order as pandas does (pairwise, numpy's sum, with 0 where a case
    adds nothing), over `count`: the official mean's exact arithmetic."""
    import numpy as np  # lazily: the command line starts faster without it

    if count == 0:
        return NAN
    ordered = np.array([values.get(case, 0.0) for case in sorted(cases)], dtype=np.float64)
    return float(np.sum(ordered)) / count


def score_ranked(
    gold: Sequence[Coding],
    run: Sequence[Coding],
    valid_codes: frozenset[str],
    *,
    average: Average = "official",
) -> Result:
    """CodiEsp D or P: MAP as codiespD_P_evaluation.py, P/R/F1 as comp_f1_diag_proc.py."""
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES}, not {average!r}")
    relevant = gold_sets(gold)
    ranked = rank_codes(run, valid_codes)
    ap = {
        case: average_precision(codes, relevant[case])
        for case, codes in ranked.items()
        if case in relevant
    }
    if average == "official":
        averaged = set(ranked)
        mean = _mean(ap, averaged | set(relevant), len(averaged))
    else:
        averaged = set(relevant)
        mean = _mean(ap, averaged, len(averaged))

    predicted = _predicted_sets(run, valid_codes)
    result = _micro_scores(relevant, predicted, per_case_nan_when_nothing_found=False)
    per_document = {
        case: CaseScores(
            scores.precision,
            scores.recall,
            scores.f1,
            ap.get(case, 0.0) if case in averaged else NAN,
        )
        for case, scores in result.per_document.items()
    }
    return Result(
        result.precision,
        result.recall,
        result.f1,
        per_document,
        f1_set_to_zero=result.f1_set_to_zero,
        map=mean,
        average=average,
        cases_averaged=len(averaged),
        counts=result.counts,
        extras=hierarchy_extras(relevant, predicted),
    )


def hierarchy_extras(gold: dict[str, set[str]], predicted: dict[str, set[str]]) -> dict[str, float]:
    """Ours, beside the official numbers: micro P/R/F1 of the codes' categories (first
    three characters) per case, and the mean over the predicted (case, code) pairs of
    each one's best learning accuracy against the case's gold codes (0 outside the gold)."""
    per_case = [
        sets.category_confusion(predicted.get(case, ()), gold.get(case, ()))
        for case in set(gold) | set(predicted)
    ]
    scores = sets.micro(per_case)
    accuracies = [
        max((sets.learning_accuracy(code, truth) for truth in gold.get(case, ())), default=0.0)
        for case, codes in predicted.items()
        for code in codes
    ]
    mean = math.fsum(accuracies) / len(accuracies) if accuracies else NAN
    return {
        "category_precision": scores.precision,
        "category_recall": scores.recall,
        "category_f1": scores.f1,
        "learning_accuracy": mean,
    }


def _predicted_sets(run: Iterable[Coding], valid_codes: frozenset[str]) -> dict[str, set[str]]:
    predicted: dict[str, set[str]] = {}
    for row in run:
        if row.code in valid_codes:
            predicted.setdefault(row.case, set()).add(row.code)
    return predicted


def _micro_scores(
    gold: dict[str, set[str]],
    predicted: dict[str, set[str]],
    *,
    per_case_nan_when_nothing_found: bool,
    found: dict[str, set[str]] | None = None,
) -> Result:
    """Micro P/R/F1 and per-case values as the official scripts compute them.

    found: per gold case, the gold codes found (default: those predicted).
    per_case_nan_when_nothing_found: the X script's NaN for a predicted gold
    case with nothing found.
    """
    if found is None:
        found = {case: codes & predicted.get(case, set()) for case, codes in gold.items()}
    tp = sum(len(codes) for codes in found.values())
    predicted_pairs = sum(len(codes) for codes in predicted.values())
    gold_pairs = sum(len(codes) for codes in gold.values())
    counts = sets.Confusion(tp, predicted_pairs - tp, gold_pairs - tp)
    precision = sets.ratio(tp, predicted_pairs)
    recall = sets.ratio(tp, gold_pairs)
    zeroed = precision + recall == 0  # False with a NaN: the official test is `(P+R) == 0`
    f1 = 0.0 if zeroed else sets.f1(precision, recall)

    per_document = {}
    cases = set(gold) | set(predicted) if not per_case_nan_when_nothing_found else set(gold)
    for case in sorted(cases):
        in_gold, in_run = case in gold, case in predicted
        hits = len(found.get(case, ()))
        if per_case_nan_when_nothing_found and in_run and hits == 0:
            p = r = NAN
        else:
            p = hits / len(predicted[case]) if in_gold and in_run else NAN
            r = hits / len(gold[case]) if in_gold else NAN
        per_document[case] = CaseScores(p, r, sets.f1(p, r))
    return Result(precision, recall, f1, per_document, f1_set_to_zero=zeroed, counts=counts)


def score_x(
    gold: Sequence[Reference], run: Sequence[Reference], valid_codes: frozenset[str]
) -> Result:
    """CodiEsp X: micro P/R/F1 of (case, code) with a reference, as codiespX_evaluation.py."""
    references: dict[tuple[str, str], list[tuple[int, int]]] = {}
    gold_codes: dict[str, set[str]] = {}
    for row in gold:
        references.setdefault((row.case, row.code), []).append((row.start, row.end))
        gold_codes.setdefault(row.case, set()).add(row.code)
    predicted: dict[str, set[str]] = {}
    found: dict[str, set[str]] = {case: set() for case in gold_codes}
    for row in run:
        if row.code not in valid_codes:
            continue
        predicted.setdefault(row.case, set()).add(row.code)
        spans = references.get((row.case, row.code), ())
        if any(sets.lenient_match(span, (row.start, row.end), TOLERANCE) for span in spans):
            found[row.case].add(row.code)
    # Predicted cases outside the gold count in the micro precision only.
    return _micro_scores(gold_codes, predicted, per_case_nan_when_nothing_found=True, found=found)


# --------------------------------------------------------------------------
# Printing as the official scripts print


def official_digits(value: float, *, numpy_round: bool = True) -> str:
    """A value as the official scripts print it: str(round(value, 3)).

    Their values are numpy floats, rounded by numpy (x * 1000, to the even
    integer, / 1000), except the X script's micro averages, plain Python
    floats that Python rounds exactly in decimal (numpy_round=False).
    """
    if math.isnan(value):
        return "nan"
    if numpy_round:
        return repr(float(round(value * 1000)) / 1000)
    return repr(round(value, 3))


def summary_lines(result: Result, *, subtask: str) -> list[str]:
    """The official scripts' summary lines, and which mean was used."""
    numpy_round = subtask != "X"
    lines = []
    if result.map is not None:
        lines.append(f"MAP estimate: {official_digits(result.map)}")
        if result.average == "official":
            lines.append(
                f"MAP mean: official, over the {result.cases_averaged} cases with at least one "
                "valid prediction (a case missing from the gold counts 0)"
            )
        else:
            lines.append(
                f"MAP mean: gold, over the {result.cases_averaged} gold cases "
                "(a case without valid predictions counts 0; trec_eval -c)"
            )
    f1 = "0" if result.f1_set_to_zero else official_digits(result.f1, numpy_round=numpy_round)
    lines += [
        f"Micro-average precision = {official_digits(result.precision, numpy_round=numpy_round)}",
        f"Micro-average recall = {official_digits(result.recall, numpy_round=numpy_round)}",
        f"Micro-average F-score = {f1}",
    ]
    return lines


def per_document_lines(result: Result) -> list[str]:
    """One line a case: case, [AP,] precision, recall, F1, rounded as the official."""
    header = ["case", *(["ap"] if result.map is not None else []), "precision", "recall", "f1"]
    lines = ["\t".join(header)]
    for case, scores in result.per_document.items():
        values = [scores.ap] if result.map is not None else []
        values += [scores.precision, scores.recall, scores.f1]
        lines.append("\t".join([case, *(official_digits(value) for value in values)]))
    return lines


def as_json(result: Result) -> dict[str, object]:
    """Full precision, None where the official gives NaN."""

    def number(value: float) -> float | None:
        return None if math.isnan(value) else value

    per_document: dict[str, dict[str, float | None]] = {}
    for case, scores in result.per_document.items():
        row = {}
        if result.map is not None:
            row["ap"] = number(scores.ap)
        row |= {
            "precision": number(scores.precision),
            "recall": number(scores.recall),
            "f1": number(scores.f1),
        }
        per_document[case] = row
    out: dict[str, object] = {}
    if result.map is not None:
        out["map"] = number(result.map)
        out["average"] = result.average
        out["cases_averaged"] = result.cases_averaged
    out |= {
        "precision": number(result.precision),
        "recall": number(result.recall),
        "f1": number(result.f1),
        "per_document": per_document,
    }
    if result.extras:
        out["extras"] = {key: number(value) for key, value in result.extras.items()}
    return out
