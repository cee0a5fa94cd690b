"""The task scorers behind one interface, for the commands and the task campaigns.

Pure core, no Django. A `Subtask` says what its files are and which measures
it has; `read_gold` and `read_submission` check files with the task's own
readers (`InputError` with every problem of every file as `file:line:
reason`); `score` gives the subtask's measures over the whole submission and
each document's values (NaN where the official scorer gives none), beside
what the task's own scorer returned, which `as_json` and `text_lines` print
as the commands always have. A submission is read a block of lines at a
time, to check it and again to score it (or once, when `score` is given the
file itself), with `progress` in bytes read; `Scores.to_dict` is what a job
stores of them. `sort_rows` is the one rule by which every
table of these scores is sorted.

    task      subtask  gold                  submission               valid codes
    codiesp   D, P     case<TAB>code         case<TAB>code            one or more lists
    codiesp   X        case label code ...   case span label code     D's and P's lists
    scifact   claims   claims JSONL          predictions JSONL        none
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from scoring.core.tasks import codiesp, scifact
from scoring.core.tasks.line_blocks import Progress, Source
from workbench.core.problems import InputError, Problem

CODIESP = "codiesp"
SCIFACT = "scifact"


@dataclass(frozen=True)
class Subtask:
    """One scored subtask of a task: its files and measures."""

    task: str
    code: str
    label: str
    measures: tuple[str, ...]  # over the whole submission, in table order
    document_measures: tuple[str, ...]  # of each document
    ranking: str  # the measure a table of submissions is sorted by unless asked otherwise
    document: str  # what one document is
    gold_format: str
    submission_format: str
    codes: str = ""  # what valid-code lists it takes; "" for none

    @property
    def takes_codes(self) -> bool:
        return bool(self.codes)


_CODES_DP = "valid codes, one a line (the first tab-separated column)"
SUBTASKS: dict[str, tuple[Subtask, ...]] = {
    CODIESP: (
        Subtask(
            CODIESP,
            "D",
            "Diagnosis coding (D)",
            ("map", "precision", "recall", "f1"),
            ("ap", "precision", "recall", "f1"),
            "map",
            "clinical case",
            "case<TAB>code",
            "case<TAB>code, ranked by line order within a case",
            _CODES_DP,
        ),
        Subtask(
            CODIESP,
            "P",
            "Procedure coding (P)",
            ("map", "precision", "recall", "f1"),
            ("ap", "precision", "recall", "f1"),
            "map",
            "clinical case",
            "case<TAB>code",
            "case<TAB>code, ranked by line order within a case",
            _CODES_DP,
        ),
        Subtask(
            CODIESP,
            "X",
            "Explainable coding (X)",
            ("precision", "recall", "f1"),
            ("precision", "recall", "f1"),
            "f1",
            "clinical case",
            "case<TAB>label<TAB>code<TAB>reference<TAB>start end[;start end...]",
            "case<TAB>start end<TAB>label<TAB>code",
            "the D and the P lists of valid codes",
        ),
    ),
    SCIFACT: (
        Subtask(
            SCIFACT,
            "claims",
            "Claim verification",
            scifact.KEYS,
            scifact.KEYS,
            "sentence_label_f1",
            "claim",
            'claims JSONL: {"id", "evidence": {doc: [{"sentences", "label"}]}}',
            'predictions JSONL: {"id", "evidence": {doc: {"sentences", "label"}}}, '
            "one line for every claim",
        ),
    ),
}


def subtask(task: str, code: str) -> Subtask:
    """The subtask `code` of `task`; KeyError if it has none of that name."""
    for candidate in SUBTASKS.get(task, ()):
        if candidate.code == code:
            return candidate
    raise KeyError(f"{task} has no subtask {code!r}")


@dataclass(frozen=True)
class NamedFile:
    """A file to read: the name its problems give, and its bytes, path or binary stream."""

    name: str
    data: Source


@dataclass(frozen=True)
class Gold:
    """A checked gold file (and the valid codes, for CodiEsp), kept as its scores
    need it: each case's codes (D, P), the references (X), the claims (SciFact)."""

    subtask: Subtask
    data: Any  # dict[str, set[str]] | list[codiesp.Reference] | dict[int, scifact.GoldClaim]
    codes: frozenset[str] = frozenset()

    @property
    def documents(self) -> int:
        """Its clinical cases or claims."""
        if isinstance(self.data, dict):
            return len(self.data)
        return len({row.case for row in self.data})


@dataclass(frozen=True)
class Submission:
    """A checked submission: the file, read again (a block at a time) to score it."""

    subtask: Subtask
    file: NamedFile
    documents: int  # the clinical cases it codes, or the claims it answers


@dataclass(frozen=True)
class Scores:
    """A submission's measures (`Subtask.measures`), each document's values
    (`Subtask.document_measures`, documents in the scorer's order) and what the
    task's own scorer returned (None when read back from `to_dict`)."""

    subtask: Subtask
    measures: dict[str, float]
    documents: dict[str, dict[str, float]]
    result: codiesp.Result | dict[str, float] | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (None for NaN): what a job stores."""

        def numbers(values: Mapping[str, float]) -> dict[str, float | None]:
            return {name: None if math.isnan(value) else value for name, value in values.items()}

        return {
            "measures": numbers(self.measures),
            "documents": [[name, numbers(values)] for name, values in self.documents.items()],
        }

    @classmethod
    def from_dict(cls, task_subtask: Subtask, data: Mapping[str, Any]) -> Scores:
        def numbers(values: Mapping[str, float | None]) -> dict[str, float]:
            return {name: math.nan if value is None else value for name, value in values.items()}

        return cls(
            task_subtask,
            numbers(data["measures"]),
            {name: numbers(values) for name, values in data["documents"]},
        )


def read_all(readers: Sequence[Callable[[], Any]]) -> list[Any]:
    """Call every reader; one InputError with the problems of all the files that fail."""
    values, errors = [], []
    for reader in readers:
        try:
            values.append(reader())
        except InputError as error:
            errors.append(error)
    if errors:
        lines = [line for error in errors for line in str(error).splitlines()]
        problems = [problem for error in errors for problem in error.problems]
        raise InputError(problems, sum(error.total for error in errors), lines=lines)
    return values


def _missing(file: str, reason: str) -> InputError:
    return InputError([Problem(file, 0, reason)])


def read_gold(task_subtask: Subtask, gold: NamedFile, codes: Sequence[NamedFile] = ()) -> Gold:
    """Check a gold file and its valid-code lists (CodiEsp: one or more, their union)."""
    if task_subtask.takes_codes and not codes:
        raise _missing(gold.name, f"CodiEsp {task_subtask.code} needs {task_subtask.codes}")
    if not task_subtask.takes_codes and codes:
        raise _missing(codes[0].name, f"{task_subtask.label} takes no valid-code list")
    if task_subtask.task == SCIFACT:
        return Gold(task_subtask, scifact.read_claims(gold.data, name=gold.name))
    read = codiesp.read_x_gold if task_subtask.code == "X" else codiesp.read_gold_sets
    rows, *code_sets = read_all(
        [
            partial(read, gold.data, name=gold.name),
            *(partial(codiesp.read_codes, file.data, name=file.name) for file in codes),
        ]
    )
    return Gold(task_subtask, rows, frozenset().union(*code_sets))


def read_submission(gold: Gold, file: NamedFile, *, progress: Progress | None = None) -> Submission:
    """Check a submission for the gold's subtask (SciFact's against the gold's claims),
    reading it a block at a time; its documents are counted, nothing else is kept."""
    task_subtask = gold.subtask
    if task_subtask.task == SCIFACT:
        claims = 0
        for _ in scifact.prediction_lines(file.data, gold.data, name=file.name, progress=progress):
            claims += 1
        return Submission(task_subtask, file, claims)
    cases: set[str] = set()
    if task_subtask.code == "X":
        for row in codiesp.x_run_rows(file.data, name=file.name, progress=progress):
            cases.add(row.case)
    else:
        for block in codiesp.coding_blocks(
            file.data, name=file.name, empty_ok=True, progress=progress
        ):
            cases.update(block.cases)
    return Submission(task_subtask, file, len(cases))


def score(
    gold: Gold,
    submission: Submission | NamedFile,
    *,
    average: codiesp.Average = "official",
    progress: Progress | None = None,
) -> Scores:
    """The submission scored against the gold exactly as the task's official scorer
    does, its file read once more a block at a time (a `NamedFile` not yet checked
    is checked on the way: InputError once it is all read)."""
    file = submission.file if isinstance(submission, Submission) else submission
    task_subtask = gold.subtask
    if task_subtask.task == SCIFACT:
        lines = scifact.prediction_lines(file.data, gold.data, name=file.name, progress=progress)
        result, claims = scifact.score_lines(gold.data, lines)
        documents = {str(claim): values for claim, values in claims.items()}
        return Scores(task_subtask, result, documents, result)
    if task_subtask.code == "X":
        coded = codiesp.score_x_file(
            gold.data, file.data, gold.codes, name=file.name, progress=progress
        )
    else:
        coded = codiesp.score_ranked_file(
            gold.data, file.data, gold.codes, name=file.name, average=average, progress=progress
        )
    overall = {"precision": coded.precision, "recall": coded.recall, "f1": coded.f1}
    if coded.map is not None:
        overall = {"map": coded.map, **overall}
    per_case = {
        case: {name: getattr(values, name) for name in task_subtask.document_measures}
        for case, values in coded.per_document.items()
    }
    return Scores(task_subtask, overall, per_case, coded)


# --------------------------------------------------------------------------
# The commands' output, as it always was


def as_json(scores: Scores) -> dict[str, Any]:
    """Full precision; CodiEsp gives None where the official gives NaN."""
    if isinstance(scores.result, codiesp.Result):
        return codiesp.as_json(scores.result)
    return dict(scores.result or scores.measures)


def text_lines(scores: Scores, *, per_document: bool = False) -> list[str]:
    """The official summary lines (CodiEsp, with each case first if `per_document`),
    or SciFact's table."""
    if isinstance(scores.result, codiesp.Result):
        lines = codiesp.per_document_lines(scores.result) if per_document else []
        return lines + codiesp.summary_lines(scores.result, subtask=scores.subtask.code)
    return scifact.text_lines(scores.result or scores.measures)


# --------------------------------------------------------------------------
# Sorting a table of scores

NAME = "name"


def sort_columns(task_subtask: Subtask, *, documents: bool = False) -> tuple[str, ...]:
    """The columns a table may be sorted by: the name (or document), then each measure."""
    measures = task_subtask.document_measures if documents else task_subtask.measures
    return (NAME, *measures)


def sort_choices(task_subtask: Subtask, *, documents: bool = False) -> list[str]:
    """Every `sort` value: a column ascending, or `-column` descending."""
    columns = sort_columns(task_subtask, documents=documents)
    return [f"{sign}{column}" for column in columns for sign in ("-", "")]


def default_sort(task_subtask: Subtask, *, documents: bool = False) -> str:
    """Submissions best first by the subtask's ranking measure; documents in order."""
    return NAME if documents else f"-{task_subtask.ranking}"


def sort_rows[Row](
    rows: Sequence[Row], sort: str, *, values: Callable[[Row], Mapping[str, float | None]]
) -> list[Row]:
    """Rows by `sort` (a column, `-column` for descending): `name` keeps the order
    the rows are given in (submissions by name, documents as the scorer lists them:
    case ids sorted, claims in gold order), or reverses it; a measure compares its
    numbers, NaN and missing values last whichever the direction, equal values in
    the order given."""
    descending = sort.startswith("-")
    column = sort.removeprefix("-")
    if column == NAME:
        return list(reversed(rows)) if descending else list(rows)

    def number(row: Row) -> float:
        value = values(row).get(column)
        return math.nan if value is None else value

    present = [row for row in rows if not math.isnan(number(row))]
    absent = [row for row in rows if math.isnan(number(row))]
    return sorted(present, key=number, reverse=descending) + absent
