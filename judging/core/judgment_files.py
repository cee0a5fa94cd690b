"""Judgments made elsewhere, read and checked line by line. Pure core, no Django.

Two sources to import:

- a judgments TSV: `assessor topic docno rel [aspect ...]`, the aspects in
  the campaign schema's order (default `eff cred`), an optional header row
  starting with `assessor`; aspects may be empty or -1 when rel is 0;
- a qrels frame (`scoring.core.qrels`), every row judged by one given assessor;
  rows with rel < 0 (pooled but not judged) are skipped, not imported.

Every line is checked before anything is stored: the labels against the
schema (-2, "should have been judged", is accepted for an aspect), the topic
against the campaign, the assessor against the known accounts, and each
(assessor, topic, docno) at most once.

And one to measure agreement on, outside any campaign (`read_labels_tsv`): a
LABELS file, `assessor topic docno rel eff cred` with that header line, each
label checked against a schema alone.

All of them: UTF-8 (a byte-order mark is skipped), tab-separated, blank lines
and lines starting with `#` skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.core.file_input import NUL_PROBLEM, holds_nul
from workbench.core.id_limits import MAX_DOCNO, identifier_problem
from workbench.core.label_schema import NOT_ASKED, NOT_JUDGED, LabelError, LabelSchema, Question
from workbench.core.problems import ProblemLog

# The LABELS file's header; eff and cred hold the schema's first and second aspects.
# Django's username field.
MAX_ASSESSOR_NAME = 150
LABELS_HEADER = ("assessor", "topic", "docno", "rel", "eff", "cred")
LABELS_ASPECT_COLUMNS = LABELS_HEADER[4:]
# What a LABELS cell holds where the assessor gave no label.
NO_LABEL = ("", str(NOT_ASKED), str(NOT_JUDGED))
# The agreement table's names for a pair of raters (`ann|bob`), all raters
# and all topics pooled; no assessor or topic may be named so.
PAIR_MARK = "|"
ALL_RATERS = "*"
ALL_TOPICS = "all"


@dataclass(frozen=True)
class ImportedJudgment:
    assessor: str
    topic_id: str
    docno: str
    relevance: int
    aspects: dict[str, int] = field(default_factory=dict)
    line: int = 0


@dataclass
class _Checker:
    """The checks shared by both sources, collecting rows and problems."""

    log: ProblemLog
    schema: LabelSchema
    known_topics: set[str]
    known_assessors: set[str] | None
    rows: list[ImportedJudgment] = field(default_factory=list)
    first_line: dict[tuple[str, str, str], int] = field(default_factory=dict)

    def add(
        self, line: int, assessor: str, topic: str, docno: str, rel: Any, aspects: dict[str, Any]
    ) -> None:
        problems = []
        if not assessor:
            problems.append("no assessor")
        elif self.known_assessors is not None and assessor not in self.known_assessors:
            problems.append(f"no assessor named {assessor!r}")
        if topic not in self.known_topics:
            problems.append(f"topic {topic!r} is not a topic of this campaign")
        if not docno or any(c.isspace() for c in docno):
            problems.append(f"docno {docno!r} is empty or contains whitespace")
        if holds_nul(assessor, docno):
            problems.append(f"a field {NUL_PROBLEM}")
        else:
            problems += [
                problem
                for problem in (
                    identifier_problem("docno", docno, MAX_DOCNO),
                    identifier_problem("assessor name", assessor, MAX_ASSESSOR_NAME),
                )
                if problem
            ]
        try:
            relevance, cleaned = self.schema.clean(rel, aspects, allow_not_judged=True)
        except LabelError as error:
            problems.append(str(error))
        problems += _repeated(self.first_line, line, assessor, topic, docno, "judged")
        for problem in problems:
            self.log.add(line, problem)
        if problems:
            return
        self.first_line[(assessor, topic, docno)] = line
        self.rows.append(ImportedJudgment(assessor, topic, docno, relevance, cleaned, line))


def read_judgments_tsv(
    data: bytes,
    *,
    name: str,
    schema: LabelSchema,
    known_topics: Iterable[str],
    known_assessors: Iterable[str] | None,
) -> tuple[list[ImportedJudgment], ProblemLog]:
    """The judgments of a TSV file, and every problem found (file, line, reason).

    `known_assessors` None accepts any assessor name (the caller creates accounts).
    """
    log = ProblemLog(name)
    checker = _Checker(
        log,
        schema,
        set(known_topics),
        None if known_assessors is None else set(known_assessors),
    )
    aspect_ids = schema.aspect_ids
    width = 4 + len(aspect_ids)
    for number, cells in _tsv_lines(data, log):
        if number == 1 and cells[0].lower() == "assessor":
            continue
        if not 4 <= len(cells) <= width:
            log.add(
                number,
                f"expected {width} tab-separated columns (assessor topic docno rel"
                f"{''.join(' ' + a for a in aspect_ids)}), found {len(cells)}",
            )
            continue
        aspects = {
            aspect: value
            for aspect, value in zip(aspect_ids, cells[4:], strict=False)
            if value not in ("", str(NOT_ASKED))
        }
        checker.add(number, cells[0], cells[1], cells[2], cells[3], aspects)
    if not checker.rows and log.ok:
        log.add(0, "no judgments in the file")
    return checker.rows, log


def read_labels_tsv(
    data: bytes, *, name: str, schema: LabelSchema
) -> tuple[dict[str, list[Any]], ProblemLog]:
    """The labels of a LABELS file as columns, and every problem found (file, line, reason).

    The first line is the header `assessor topic docno rel eff cred`; it may
    stop after the columns of the schema's aspects (after `rel` for a schema
    without aspects), and every line has as many cells as the header. A
    label is one of its question's values; an empty cell, -1 or -2 is no
    label (None). `eff` and `cred` hold the schema's first and second aspect;
    a column the schema has no aspect for must be empty. Each (assessor,
    topic, docno) at most once.

    Columns: assessor, query_id, doc_id, relevance and one per schema aspect
    (its id), one entry per line, in file order.
    """
    log = ProblemLog(name)
    questions = (schema.relevance, *schema.aspects)
    if len(schema.aspects) > len(LABELS_ASPECT_COLUMNS):
        log.add(
            0,
            f"the schema has {len(schema.aspects)} aspects ({', '.join(schema.aspect_ids)}); "
            f"a labels file has columns for {len(LABELS_ASPECT_COLUMNS)} "
            f"({', '.join(LABELS_ASPECT_COLUMNS)})",
        )
        return {}, log
    keys = ["assessor", "query_id", "doc_id", *(q.id for q in questions)]
    columns: dict[str, list[Any]] = {key: [] for key in keys}
    lines = iter(_tsv_lines(data, log))
    first = next(lines, None)
    if first is None:
        if log.ok:
            log.add(0, f"empty file: expected the header line {_header(LABELS_HEADER)}")
        return columns, log
    header_line, header = first
    shortest = 4 + len(schema.aspects)
    if tuple(header) not in {LABELS_HEADER[:n] for n in range(shortest, len(LABELS_HEADER) + 1)}:
        stop = f", which may stop after {LABELS_HEADER[shortest - 1]}" if shortest < 6 else ""
        log.add(
            header_line,
            f"expected the header line {_header(LABELS_HEADER)}{stop}; "
            f"found {len(header)} column{'s' if len(header) > 1 else ''}: {', '.join(header)}",
        )
        return columns, log
    # The question of each label column; None for a column past the schema's aspects.
    column_questions = [*questions, *[None] * (len(header) - 3 - len(questions))]
    first_line: dict[tuple[str, str, str], int] = {}
    for number, cells in lines:
        if len(cells) != len(header):
            log.add(
                number,
                f"expected {len(header)} tab-separated columns ({' '.join(header)}), "
                f"found {len(cells)}",
            )
            continue
        assessor, topic, docno = cells[:3]
        problems = _rater_problems(assessor)
        if not topic:
            problems.append("no topic")
        elif topic == ALL_TOPICS:
            problems.append(
                f"topic {topic!r}: reserved: the agreement table's name for all topics pooled"
            )
        if not docno or any(c.isspace() for c in docno):
            problems.append(f"docno {docno!r} is empty or contains whitespace")
        labels: list[int | None] = []
        for column, cell, question in zip(header[3:], cells[3:], column_questions, strict=True):
            try:
                labels.append(_label(cell, question, column))
            except LabelError as error:
                problems.append(str(error))
        problems += _repeated(first_line, number, assessor, topic, docno, "labelled")
        for problem in problems:
            log.add(number, problem)
        if problems:
            continue
        first_line[(assessor, topic, docno)] = number
        row = [assessor, topic, docno, *labels[: len(questions)]]
        for key, value in zip(keys, row, strict=True):
            columns[key].append(value)
    if not first_line and log.ok:
        log.add(0, "no labels after the header line")
    return columns, log


def _tsv_lines(data: bytes, log: ProblemLog) -> list[tuple[int, list[str]]]:
    """(line number, stripped tab-separated cells) of every line that is not blank or a comment.

    A file that is not UTF-8 gives no lines and one problem at the first bad byte.
    """
    try:
        text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        log.add(line, f"not UTF-8 (byte 0x{data[error.start]:02x})")
        return []
    return [
        (number, [cell.strip() for cell in raw.split("\t")])
        for number, raw in enumerate(text.splitlines(), start=1)
        if raw.strip() and not raw.lstrip().startswith("#")
    ]


def _repeated(
    first_line: dict[tuple[str, str, str], int],
    line: int,
    assessor: str,
    topic: str,
    docno: str,
    verb: str,
) -> list[str]:
    """The problem of an (assessor, topic, docno) seen on an earlier line, if it was."""
    first = first_line.get((assessor, topic, docno))
    if first is None:
        return []
    return [f"{assessor} {verb} docno {docno!r} of topic {topic!r} twice (first on line {first})"]


def _rater_problems(assessor: str) -> list[str]:
    if not assessor:
        return ["no assessor"]
    if assessor == ALL_RATERS or PAIR_MARK in assessor:
        return [
            f"assessor {assessor!r}: a name may not be {ALL_RATERS} or contain {PAIR_MARK} "
            "(they mark raters)"
        ]
    return []


def _label(cell: str, question: Question | None, column: str) -> int | None:
    """One LABELS cell: a value of the question, or None for no label."""
    if cell in NO_LABEL:
        return None
    if question is None:
        raise LabelError(f"{column}: must be empty, the schema has no aspect for it")
    try:
        return question.value_of(cell)
    except LabelError as error:
        raise LabelError(f"{column}: {error}") from None


def _header(cells: Sequence[str]) -> str:
    return f"{', '.join(cells)} (tab-separated)"


def judgments_from_qrels(
    rows: Iterable[Mapping[str, Any]],
    lines: Iterable[int],
    *,
    name: str,
    schema: LabelSchema,
    known_topics: Iterable[str],
    assessor: str,
    aspect_columns: Mapping[str, str] | None = None,
) -> tuple[list[ImportedJudgment], ProblemLog, int]:
    """Judgments from qrels rows (query_id, doc_id, relevance, ...), each on its file line.

    aspect_columns maps a qrels column (`aspect_2`) to the schema aspect it
    holds (`effectiveness`). Returns the judgments, the problems and how many
    rows were skipped as pooled but not judged (rel < 0).
    """
    log = ProblemLog(name)
    checker = _Checker(log, schema, set(known_topics), None)
    skipped = 0
    columns = dict(aspect_columns or {})
    # Aspects the file does not carry were not judged (the schema stores
    # "not asked" instead when the document is not relevant).
    absent = {aspect: NOT_JUDGED for aspect in schema.aspect_ids if aspect not in columns.values()}
    for row, line in zip(rows, lines, strict=True):
        if int(row["relevance"]) < 0:
            skipped += 1
            continue
        aspects = absent | {
            aspect: row[column]
            for column, aspect in columns.items()
            if int(row[column]) != NOT_ASKED
        }
        checker.add(
            line, assessor, str(row["query_id"]), str(row["doc_id"]), row["relevance"], aspects
        )
    if not checker.rows and log.ok:
        log.add(0, "no judged lines (every rel is negative)")
    return checker.rows, log, skipped


def write_judgments_tsv(
    rows: Iterable[tuple[str, str, str, int, Sequence[int]]], aspect_ids: Sequence[str]
) -> str:
    """Judgments as the TSV `read_judgments_tsv` reads: a header row, then
    `assessor topic docno rel` and the aspects in the schema's order (-1 where an
    aspect was not asked). rows: (assessor, topic, docno, rel, aspect values)."""
    lines = ["\t".join(("assessor", "topic", "docno", "rel", *aspect_ids))]
    for assessor, topic, docno, relevance, aspects in rows:
        values = (str(int(v)) for v in aspects)
        lines.append("\t".join((assessor, topic, docno, str(int(relevance)), *values)))
    return "\n".join(lines) + "\n"
