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

D and P (`RankedScorer`):
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

Files are read a block of lines at a time (`line_blocks`) and runs scored as
they are read (`RankedScorer`, `XScorer`; `score_ranked_file`,
`score_x_file`): memory holds the gold, the valid codes and each predicted
case's distinct codes, never the file. An empty run predicted nothing and is
scored so (precision and the official MAP NaN, recall 0; docs/tasks.md).

Bad input raises `InputError` with every problem as `file:line: reason` once
the file is read; the inputs the official scripts crash on (an empty gold, a
wrong column count, a discontinuous position in an X run) say so.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import groupby, pairwise, repeat
from typing import TYPE_CHECKING, Literal

from scoring.core.tasks import sets
from scoring.core.tasks.line_blocks import Block, Progress, Source, blocks, source_name
from workbench.core.file_input import NUL_PROBLEM
from workbench.core.problems import InputError, ProblemLog

if TYPE_CHECKING:
    import numpy as np

DEPTH = 1000  # trectools' get_map(depth=1000): codes ranked past it do not count
TOLERANCE = 10  # codiespX_evaluation.py's calculate_metrics(tol=10)

Average = Literal["official", "gold"]
AVERAGES: tuple[Average, ...] = ("official", "gold")

NAN = math.nan


# --------------------------------------------------------------------------
# Reading


@dataclass(frozen=True, slots=True)
class Coding:
    """One line of a D/P gold or run file: a code (lower-cased) of a clinical case."""

    case: str
    code: str
    line: int


@dataclass(frozen=True, slots=True)
class Reference:
    """One line of an X gold (a code's text reference) or an X run (a prediction)."""

    case: str
    code: str
    start: int
    end: int
    line: int


_SPAN = re.compile(r"([0-9]{1,15}) ([0-9]{1,15})")
# Whitespace other than the tab and the newline (str.isspace's, as the field checks use).
_OTHER_SPACE = re.compile(r"[^\S\t\n]")
_OTHER_ASCII_SPACE = (" ", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")

_RUN_FORMAT = "case<TAB>code"
_X_GOLD_FORMAT = "case<TAB>label<TAB>code<TAB>reference<TAB>start end[;start end...]"
_X_RUN_FORMAT = "case<TAB>start end<TAB>label<TAB>code"
_EMPTY = "empty file: no lines (the official scripts crash on an empty file)"


def _rows(block: Block, log: ProblemLog) -> Iterator[tuple[int, list[str]]]:
    """The non-blank lines of a block, split into cells."""
    for offset, raw in enumerate(block.text.split("\n")[:-1]):
        line = raw.removesuffix("\r")
        if not line.strip():
            continue
        if "\x00" in line:
            log.add(block.first_line + offset, NUL_PROBLEM)
            continue
        yield block.first_line + offset, line.split("\t")


def _tsv_rows(
    source: Source, log: ProblemLog, *, empty_ok: bool = False, progress: Progress | None = None
) -> Iterator[tuple[int, list[str]]]:
    """Every non-blank line of a tab-separated file, split into cells; an empty file
    is a problem unless `empty_ok`."""
    seen = False
    for block in blocks(source, log, progress=progress):
        for row in _rows(block, log):
            seen = True
            yield row
    if not seen and not empty_ok and log.ok:
        log.add(0, _EMPTY)


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
    for number, cells in _tsv_rows(source, log):
        code = cells[0]
        problem = _field_problem("code", code)
        if problem:
            log.add(number, problem + " (the official scripts crash on an empty one)")
            continue
        codes.add(code.lower())
    if not log.ok:
        raise InputError.from_log(log)
    return frozenset(codes)


@dataclass(frozen=True)
class Codings:
    """The `case<TAB>code` lines of one block: cases and codes (lower-cased) in file
    order; `line_numbers()` says where each came from."""

    cases: list[str]
    codes: list[str]
    first_line: int = 1
    lines: list[str] | None = None  # the block's lines (blank ones too), when numbers are implied
    numbers: list[int] | None = None

    def line_numbers(self) -> list[int]:
        if self.numbers is not None:
            return self.numbers
        lines = self.lines or []
        return [self.first_line + offset for offset, line in enumerate(lines) if line]

    def __len__(self) -> int:
        return len(self.cases)


def _well_formed(text: str) -> Codings | None:
    """A block whose every non-blank line is `case<TAB>code` without other whitespace,
    read at C speed; None when a line needs the general reader (to be checked, or
    reported, line by line)."""
    if "\r" in text:
        if text.count("\r") != text.count("\r\n"):
            return None
        text = text.replace("\r\n", "\n")
    if "\x00" in text:
        return None
    if text.isascii():
        if any(space in text for space in _OTHER_ASCII_SPACE):
            return None
    elif _OTHER_SPACE.search(text):
        return None
    # Left only tabs and newlines: an empty field shows as a tab at a line's edge or
    # two tabs together; then each non-blank line must hold exactly one tab.
    if text.startswith("\t") or "\t\t" in text or "\n\t" in text or "\t\n" in text:
        return None
    lines = text.split("\n")
    filled = len(lines) - lines.count("")
    if list(map(str.count, lines, repeat("\t"))).count(1) != filled:
        return None
    cells = text.split()
    codes = "\n".join(cells[1::2]).lower().split("\n") if cells else []
    return Codings(cells[0::2], codes, lines=lines)


def _checked(block: Block, log: ProblemLog) -> Codings:
    """A block read line by line, each problem logged with its line."""
    cases, codes, numbers = [], [], []
    for number, cells in _rows(block, log):
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
            cases.append(case)
            codes.append(code.lower())
            numbers.append(number)
    return Codings(cases, codes, numbers=numbers)


def coding_blocks(
    source: Source,
    *,
    name: str | None = None,
    empty_ok: bool = False,
    progress: Progress | None = None,
) -> Iterator[Codings]:
    """A D/P gold or run file (`case<TAB>code` a line), a block of lines at a time, in
    file order. Once the whole file is read, InputError with every problem (an empty
    file is one unless `empty_ok`: a run that predicts nothing)."""
    log = ProblemLog(source_name(source, name))
    lines = 0
    for block in blocks(source, log, progress=progress):
        codings = _well_formed(block.text)
        if codings is None:
            codings = _checked(block, log)
        else:
            codings = Codings(codings.cases, codings.codes, block.first_line, codings.lines)
        lines += len(codings)
        yield codings
    if not lines and not empty_ok and log.ok:
        log.add(0, _EMPTY)
    if not log.ok:
        raise InputError.from_log(log)


def read_codings(
    source: Source, *, name: str | None = None, empty_ok: bool = False
) -> list[Coding]:
    """A D/P gold or run file as a list, for small files (tests, examples); scoring
    reads a run with `coding_blocks` instead."""
    return [
        Coding(case, code, number)
        for block in coding_blocks(source, name=name, empty_ok=empty_ok)
        for case, code, number in zip(block.cases, block.codes, block.line_numbers(), strict=True)
    ]


def read_gold_sets(source: Source, *, name: str | None = None) -> dict[str, set[str]]:
    """A D/P gold file: each clinical case's distinct codes (a code once per mention)."""
    gold: dict[str, set[str]] = {}
    for block in coding_blocks(source, name=name):
        for case, code in zip(block.cases, block.codes, strict=True):
            gold.setdefault(case, set()).add(code)
    return gold


def _span(text: str) -> tuple[int, int] | None:
    match = _SPAN.fullmatch(text)
    return None if match is None else (int(match[1]), int(match[2]))


def read_x_gold(source: Source, *, name: str | None = None) -> list[Reference]:
    """An X gold file; a discontinuous reference spans its first start to its last end."""
    log = ProblemLog(source_name(source, name))
    rows = []
    for number, cells in _tsv_rows(source, log):
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


def x_run_rows(
    source: Source, *, name: str | None = None, progress: Progress | None = None
) -> Iterator[Reference]:
    """An X run, a line at a time (an empty run predicts nothing); once it is all
    read, InputError with every problem. The label column is not used."""
    log = ProblemLog(source_name(source, name))
    for number, cells in _tsv_rows(source, log, empty_ok=True, progress=progress):
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
        yield Reference(case, code.lower(), span[0], span[1], number)
    if not log.ok:
        raise InputError.from_log(log)


def read_x_run(source: Source, *, name: str | None = None) -> list[Reference]:
    """An X run as a list, for small files; scoring reads it with `x_run_rows`."""
    return list(x_run_rows(source, name=name))


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


def gold_sets(gold: Iterable[Coding]) -> dict[str, set[str]]:
    sets_by_case: dict[str, set[str]] = {}
    for row in gold:
        sets_by_case.setdefault(row.case, set()).add(row.code)
    return sets_by_case


def _mean(values: dict[str, float], cases: Iterable[str], count: int) -> float:
    """Sum in case order as pandas does (pairwise, numpy's sum, with 0 where a case
    adds nothing), over `count`: the official mean's exact arithmetic."""
    import numpy as np  # lazily: the command line starts faster without it

    if count == 0:
        return NAN
    ordered = np.array([values.get(case, 0.0) for case in sorted(cases)], dtype=np.float64)
    return float(np.sum(ordered)) / count


class _Case:
    """What the scores need of one predicted case: the distinct valid codes ranked so
    far (sorted ids, to drop repeats), trectools' AP terms and the hits."""

    __slots__ = ("ap_found", "ap_sum", "hits", "ranked", "relevant", "seen")

    def __init__(self, relevant: np.ndarray | None, empty: np.ndarray):
        self.relevant = relevant  # the gold's valid code ids (None: not a gold case)
        self.seen = empty
        self.ranked = 0  # distinct valid codes so far: the rank of the last one
        self.hits = 0  # of them in the gold, at any rank (comp_f1_diag_proc.py's TP)
        self.ap_found = 0  # in the gold within DEPTH
        self.ap_sum = 0.0  # the precisions at those ranks, added in rank order


class RankedScorer:
    """CodiEsp D or P of a run fed in file order, a block of lines at a time (`add`):
    MAP as codiespD_P_evaluation.py, P/R/F1 as comp_f1_diag_proc.py (`result`).

    Memory: the gold, the valid codes, and per predicted case its distinct valid
    codes as 4-byte ids; nothing per line. Codes are ranked as they come (repeats
    and invalid codes dropped, the first `DEPTH` scoring AP), so the precisions
    are added in rank order as trectools adds them.
    """

    def __init__(self, gold: Mapping[str, set[str]], valid_codes: frozenset[str]):
        import numpy as np

        self.gold = gold
        self.codes = sorted(valid_codes)
        self._code_id = {code: index for index, code in enumerate(self.codes)}
        self._case_id: dict[str, int] = {}
        self._case_names: list[str] = []
        self._cases: dict[int, _Case] = {}
        self._empty = np.empty(0, dtype=np.int32)

    def _intern(self, case: str) -> int:
        index = self._case_id.get(case)
        if index is None:
            index = self._case_id[case] = len(self._case_names)
            self._case_names.append(case)
        return index

    def _state(self, index: int) -> _Case:
        state = self._cases.get(index)
        if state is None:
            import numpy as np

            truth = self.gold.get(self._case_names[index])
            relevant = None
            if truth is not None:
                ids = [self._code_id[code] for code in truth if code in self._code_id]
                relevant = np.array(sorted(ids), dtype=np.int32)
            state = self._cases[index] = _Case(relevant, self._empty)
        return state

    def add(self, cases: Sequence[str], codes: Sequence[str]) -> None:
        """The next lines of the run: their cases and (lower-cased) codes, in file order."""
        import numpy as np

        if not cases:
            return
        code_ids = np.fromiter(
            map(self._code_id.get, codes, repeat(-1)), dtype=np.int64, count=len(codes)
        )
        # Lines of one case mostly come together: each run of equal cases is looked up once.
        runs = [(case, len(list(same))) for case, same in groupby(cases)]
        case_ids = np.repeat(
            np.array([self._intern(case) for case, _ in runs], dtype=np.int64),
            [length for _, length in runs],
        )
        valid = code_ids >= 0
        case_ids, code_ids = case_ids[valid], code_ids[valid]
        if not case_ids.size:
            return
        # The first line of each (case, code) in this block, in file order ...
        keys = case_ids * len(self.codes) + code_ids
        first = np.sort(np.unique(keys, return_index=True)[1])
        case_ids, code_ids = case_ids[first], code_ids[first]
        # ... then per case, in that order (a stable sort keeps it).
        order = np.argsort(case_ids, kind="stable")
        case_ids, code_ids = case_ids[order], code_ids[order].astype(np.int32)
        bounds = [0, *(np.flatnonzero(np.diff(case_ids)) + 1).tolist(), len(case_ids)]
        for start, end in pairwise(bounds):
            self._rank(self._state(int(case_ids[start])), code_ids[start:end])

    def _rank(self, state: _Case, codes: np.ndarray) -> None:
        """Rank a case's next distinct codes (in submission order) after the ones before."""
        import numpy as np

        if state.seen.size:
            codes = codes[~np.isin(codes, state.seen, assume_unique=True)]
            if not codes.size:
                return
        if state.relevant is not None and state.relevant.size:
            for position in np.flatnonzero(np.isin(codes, state.relevant)).tolist():
                rank = state.ranked + position + 1
                state.hits += 1
                if rank <= DEPTH:
                    state.ap_found += 1
                    state.ap_sum += state.ap_found / rank
        state.ranked += len(codes)
        state.seen = np.union1d(state.seen, codes) if state.seen.size else np.sort(codes)

    def predicted(self) -> dict[str, np.ndarray]:
        """Each case with a valid prediction: the ids of its distinct valid codes."""
        return {self._case_names[index]: state.seen for index, state in self._cases.items()}

    def result(self, average: Average = "official") -> Result:
        if average not in AVERAGES:
            raise ValueError(f"average must be one of {AVERAGES}, not {average!r}")
        named = {self._case_names[index]: state for index, state in self._cases.items()}
        ap = {
            case: state.ap_sum / len(self.gold[case])
            for case, state in named.items()
            if case in self.gold
        }
        if average == "official":
            averaged = set(named)
            mean = _mean(ap, averaged | set(self.gold), len(averaged))
        else:
            averaged = set(self.gold)
            mean = _mean(ap, averaged, len(averaged))
        result = _micro_scores(
            {case: len(codes) for case, codes in self.gold.items()},
            {case: state.ranked for case, state in named.items()},
            {case: state.hits for case, state in named.items() if case in self.gold},
            per_case_nan_when_nothing_found=False,
        )
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
            extras=hierarchy_extras(self.gold, self.codes, self.predicted()),
        )


def score_ranked(
    gold: Iterable[Coding],
    run: Iterable[Coding],
    valid_codes: frozenset[str],
    *,
    average: Average = "official",
) -> Result:
    """CodiEsp D or P of lines already read (`RankedScorer` over them as one block)."""
    rows = list(run)
    scorer = RankedScorer(gold_sets(gold), valid_codes)
    scorer.add([row.case for row in rows], [row.code for row in rows])
    return scorer.result(average)


def score_ranked_file(
    gold: Mapping[str, set[str]],
    run: Source,
    valid_codes: frozenset[str],
    *,
    name: str | None = None,
    average: Average = "official",
    progress: Progress | None = None,
) -> Result:
    """CodiEsp D or P of a run file read a block at a time (InputError once it is all
    read, if any line is bad). An empty file predicts nothing: precision and the
    official MAP NaN, recall 0 (see docs/tasks.md)."""
    scorer = RankedScorer(gold, valid_codes)
    for block in coding_blocks(run, name=name, empty_ok=True, progress=progress):
        scorer.add(block.cases, block.codes)
    return scorer.result(average)


def _micro_scores(
    gold: dict[str, int],
    predicted: dict[str, int],
    hits: dict[str, int],
    *,
    per_case_nan_when_nothing_found: bool,
) -> Result:
    """Micro P/R/F1 and per-case values as the official scripts compute them, from
    each case's distinct gold codes, distinct valid predicted codes, and gold codes
    found (`hits`, of the gold cases).

    per_case_nan_when_nothing_found: the X script's NaN for a predicted gold
    case with nothing found.
    """
    tp = sum(hits.get(case, 0) for case in gold)
    predicted_pairs = sum(predicted.values())
    gold_pairs = sum(gold.values())
    counts = sets.Confusion(tp, predicted_pairs - tp, gold_pairs - tp)
    precision = sets.ratio(tp, predicted_pairs)
    recall = sets.ratio(tp, gold_pairs)
    zeroed = precision + recall == 0  # False with a NaN: the official test is `(P+R) == 0`
    f1 = 0.0 if zeroed else sets.f1(precision, recall)

    per_document = {}
    cases = set(gold) | set(predicted) if not per_case_nan_when_nothing_found else set(gold)
    for case in sorted(cases):
        in_gold, in_run = case in gold, case in predicted
        found = hits.get(case, 0)
        if per_case_nan_when_nothing_found and in_run and found == 0:
            p = r = NAN
        else:
            p = found / predicted[case] if in_gold and in_run else NAN
            r = found / gold[case] if in_gold else NAN
        per_document[case] = CaseScores(p, r, sets.f1(p, r))
    return Result(precision, recall, f1, per_document, f1_set_to_zero=zeroed, counts=counts)


class XScorer:
    """CodiEsp X of a run fed a line at a time (`add`), as codiespX_evaluation.py:
    micro P/R/F1 of (case, code) pairs with a text reference (`result`). Memory: the
    gold's references and each predicted case's distinct valid codes."""

    def __init__(self, gold: Iterable[Reference], valid_codes: frozenset[str]):
        self.valid_codes = valid_codes
        self.references: dict[tuple[str, str], list[tuple[int, int]]] = {}
        self.gold: dict[str, set[str]] = {}
        for row in gold:
            self.references.setdefault((row.case, row.code), []).append((row.start, row.end))
            self.gold.setdefault(row.case, set()).add(row.code)
        self.predicted: dict[str, set[str]] = {}
        self.found: dict[str, set[str]] = {case: set() for case in self.gold}

    def add(self, rows: Iterable[Reference]) -> None:
        for row in rows:
            if row.code not in self.valid_codes:
                continue
            self.predicted.setdefault(row.case, set()).add(row.code)
            spans = self.references.get((row.case, row.code), ())
            if any(sets.lenient_match(span, (row.start, row.end), TOLERANCE) for span in spans):
                self.found[row.case].add(row.code)

    def result(self) -> Result:
        # Predicted cases outside the gold count in the micro precision only.
        return _micro_scores(
            {case: len(codes) for case, codes in self.gold.items()},
            {case: len(codes) for case, codes in self.predicted.items()},
            {case: len(codes) for case, codes in self.found.items()},
            per_case_nan_when_nothing_found=True,
        )


def score_x(
    gold: Iterable[Reference], run: Iterable[Reference], valid_codes: frozenset[str]
) -> Result:
    """CodiEsp X: micro P/R/F1 of (case, code) with a reference, as codiespX_evaluation.py."""
    scorer = XScorer(gold, valid_codes)
    scorer.add(run)
    return scorer.result()


def score_x_file(
    gold: Iterable[Reference],
    run: Source,
    valid_codes: frozenset[str],
    *,
    name: str | None = None,
    progress: Progress | None = None,
) -> Result:
    """CodiEsp X of a run file read a line at a time (InputError once it is all read,
    if any line is bad; an empty run predicts nothing)."""
    scorer = XScorer(gold, valid_codes)
    scorer.add(x_run_rows(run, name=name, progress=progress))
    return scorer.result()


# --------------------------------------------------------------------------
# Extras beside the official numbers: code categories and learning accuracy


class _Taxonomy:
    """The code-prefix taxonomy of `sets.code_path` with every node numbered, and the
    paths of a list of codes as flat arrays, so that the concepts two codes share
    are counted over a case's codes at once (`sets.learning_accuracy`, vectorised)."""

    def __init__(self, codes: Sequence[str]) -> None:
        import numpy as np

        self._nodes: dict[str, int] = {}
        paths = [self.path(code) for code in codes]
        self.depth = np.array([len(path) for path in paths], dtype=np.int64)
        self.start = np.zeros(len(paths) + 1, dtype=np.int64)
        np.cumsum(self.depth, out=self.start[1:])
        self.nodes = np.array([node for path in paths for node in path], dtype=np.int64)

    def path(self, code: str) -> list[int]:
        return [self._nodes.setdefault(node, len(self._nodes)) for node in sets.code_path(code)]

    def learning_accuracies(self, ids: np.ndarray, gold: Iterable[str]) -> np.ndarray:
        """Each code's (`ids`, positions in the codes given) best learning accuracy
        against the gold codes, 0 without any: exactly `sets.learning_accuracy`. The
        concepts two codes have in common are the leading nodes of their paths that
        are equal, level by level."""
        import numpy as np

        truths = [self.path(code) for code in gold]
        best = np.zeros(len(ids))
        if not truths or not len(ids):
            return best
        depth = self.depth[ids]
        cuts = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(depth, out=cuts[1:])
        level = np.arange(cuts[-1]) - np.repeat(cuts[:-1], depth)  # each node's depth - 1
        nodes = self.nodes[np.repeat(self.start[ids], depth) + level]
        width = max(map(len, truths))
        table = np.full((len(truths), width + 1), -1, dtype=np.int64)  # -1: deeper than it
        for row, truth in enumerate(truths):
            table[row, : len(truth)] = truth
        same = nodes[np.newaxis, :] == table[:, np.minimum(level, width)]
        running = np.zeros((len(truths), len(nodes) + 1), dtype=np.int64)
        np.cumsum(same, axis=1, out=running[:, 1:])
        common = running[:, cuts[1:]] - running[:, cuts[:-1]]
        truth_depth = np.array([len(truth) for truth in truths], dtype=np.int64)[:, np.newaxis]
        with np.errstate(divide="ignore", invalid="ignore"):
            accuracy = np.where(
                common == depth,
                np.where(truth_depth == 0, (depth == 0) * 1.0, common / truth_depth),
                common / (2 * depth - common),
            )
        return np.maximum(best, accuracy.max(axis=0))


def hierarchy_extras(
    gold: Mapping[str, set[str]], codes: Sequence[str], predicted: Mapping[str, np.ndarray]
) -> dict[str, float]:
    """Ours, beside the official numbers: micro P/R/F1 of the codes' categories (first
    three characters) per case, and the mean over the predicted (case, code) pairs of
    each one's best learning accuracy against the case's gold codes (0 outside the
    gold). `predicted`: each case's distinct code ids (positions in `codes`)."""
    import numpy as np

    names = [sets.category(code) for code in codes]
    distinct = sorted(set(names))
    index = {category: position for position, category in enumerate(distinct)}
    category_of = np.array([index[name] for name in names], dtype=np.int64)
    taxonomy = _Taxonomy(codes)
    per_case = []
    values: Counter[float] = Counter()
    pairs = 0
    for case in set(gold) | set(predicted):
        ids = predicted.get(case, np.empty(0, dtype=np.int64))
        truth = gold.get(case, set())
        mine = {distinct[i] for i in np.unique(category_of[ids]).tolist()}
        per_case.append(sets.confusion(mine, map(sets.category, truth)))
        if ids.size:
            accuracies = taxonomy.learning_accuracies(ids, truth)
            found, counts = np.unique(accuracies, return_counts=True)
            values.update(dict(zip(found.tolist(), counts.tolist(), strict=True)))
            pairs += int(ids.size)
    scores = sets.micro(per_case)
    # The exact sum of the values (math.fsum's), taken from their counts.
    total = sum((Fraction(value) * count for value, count in values.items()), Fraction(0))
    mean = float(total) / pairs if pairs else NAN
    return {
        "category_precision": scores.precision,
        "category_recall": scores.recall,
        "category_f1": scores.f1,
        "learning_accuracy": mean,
    }


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
