"""Judgments made elsewhere, read and checked line by line. Pure core, no Django.

Two sources:

- a judgments TSV: `assessor topic docno rel [aspect ...]`, the aspects in
  the campaign schema's order (default `eff cred`), an optional header row
  starting with `assessor`; aspects may be empty or -1 when rel is 0;
- a qrels frame (`scoring.qrels`), every row judged by one given assessor;
  rows with rel < 0 (pooled but not judged) are skipped, not imported.

Every line is checked before anything is stored: the labels against the
schema (-2, "should have been judged", is accepted for an aspect), the topic
against the campaign, the assessor against the known accounts, and each
(assessor, topic, docno) at most once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pooling.label_schema import NOT_ASKED, NOT_JUDGED, LabelError, LabelSchema
from pooling.trec_io import ProblemLog


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
        self, line: int, assessor: str, topic: str, docno: str, rel: Any, aspects: dict
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
        try:
            relevance, cleaned = self.schema.clean(rel, aspects, allow_not_judged=True)
        except LabelError as error:
            problems.append(str(error))
        key = (assessor, topic, docno)
        if key in self.first_line:
            problems.append(
                f"{assessor} judged docno {docno!r} of topic {topic!r} twice "
                f"(first on line {self.first_line[key]})"
            )
        for problem in problems:
            self.log.add(line, problem)
        if problems:
            return
        self.first_line[key] = line
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
    try:
        text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        log.add(line, f"not UTF-8 (byte 0x{data[error.start]:02x})")
        return [], log
    aspect_ids = schema.aspect_ids
    width = 4 + len(aspect_ids)
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        cells = [cell.strip() for cell in raw.split("\t")]
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
