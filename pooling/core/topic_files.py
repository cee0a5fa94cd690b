"""Topic files (TREC SGML, TREC XML, JSONL, TSV) and accepted answers. Pure core, no Django."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat

from workbench.core.file_input import (
    BOM,
    NUL_PROBLEM,
    Source,
    holds_nul,
    json_object,
    read_source,
    source_name,
    strip_bom,
    tsv_rows,
    utf8_problem,
)
from workbench.core.id_limits import MAX_TOPIC_ID, identifier_problem
from workbench.core.problems import ProblemLog


@dataclass
class TopicRecord:
    topic_id: str
    title: str = ""
    description: str = ""
    narrative: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    line: int = 0


TOPIC_FORMATS = ("sgml", "xml", "jsonl", "tsv")
# Field names seen in TREC, CLEF and ir_datasets topic files, by our field.
_TOPIC_ID_KEYS = ("topic_id", "number", "num", "id", "qid", "query_id")
_TOPIC_TITLE_KEYS = ("title", "query", "summary", "text")
_TOPIC_DESCRIPTION_KEYS = ("description", "desc", "question")
_TOPIC_NARRATIVE_KEYS = ("narrative", "narr")
# TREC SGML writes "Number:", "Description:" and "Narrative:" inside the field.
_SGML_LABEL = re.compile(r"^\s*(?:number|topic|description|narrative|title)\s*:\s*", re.I)


def detect_topic_format(name: str, head: bytes) -> str:
    """Guess a topic file's format from its name and first bytes."""
    lower = name.lower()
    if lower.endswith((".jsonl", ".json")):
        return "jsonl"
    if lower.endswith(".tsv"):
        return "tsv"
    text = head.lstrip(BOM).lstrip().lower()
    if text.startswith(b"<top>"):
        return "sgml"
    if text.startswith((b"<?xml", b"<topics", b"<topic ", b"<topic>")):
        return "xml"
    if text.startswith(b"{"):
        return "jsonl"
    return "tsv"


def read_topics(
    source: Source,
    *,
    name: str | None = None,
    format: str | None = None,
    existing: Collection[str] = (),
) -> tuple[list[TopicRecord], ProblemLog]:
    """Read a topic file (TREC SGML, TREC XML, JSONL or TSV).

    Returns the topics in file order and the problems found: unreadable
    structure, a topic without an id, an id given twice, an `answer` that is
    not -1, 0 or 1, and a new topic without any text (a topic in `existing`
    may come without text: the file then updates only its other fields).
    """
    file = source_name(source, name)
    data = strip_bom(read_source(source))
    log = ProblemLog(file)
    fmt = format or detect_topic_format(file, data[:512])
    if fmt not in TOPIC_FORMATS:
        raise ValueError(
            f"unknown topic format {fmt!r}; expected one of {', '.join(TOPIC_FORMATS)}"
        )
    if utf8_problem(data, log):
        return [], log
    text = data.decode("utf-8").replace("\r\n", "\n")
    readers = {"sgml": _topics_sgml, "xml": _topics_xml, "jsonl": _topics_jsonl, "tsv": _topics_tsv}
    topics = readers[fmt](text, log)
    seen: dict[str, int] = {}
    for topic in topics:
        if holds_nul(topic.topic_id, topic.title, topic.description, topic.narrative, topic.extra):
            log.add(topic.line, f"topic {NUL_PROBLEM}")
            continue
        bad_id = identifier_problem("topic id", topic.topic_id, MAX_TOPIC_ID)
        if bad_id:
            log.add(topic.line, bad_id)
            continue
        if not topic.topic_id:
            log.add(topic.line, "topic has no id")
        elif topic.topic_id in seen:
            log.add(
                topic.line,
                f"topic {topic.topic_id!r} given twice (first on line {seen[topic.topic_id]})",
            )
        else:
            seen[topic.topic_id] = topic.line
        textless = not (topic.title or topic.description)
        if topic.topic_id and textless and topic.topic_id not in existing:
            log.add(topic.line, f"topic {topic.topic_id!r} has neither a title nor a description")
        if "answer" in topic.extra:
            answer = parse_answer(topic.extra["answer"])
            if answer is None:
                log.add(topic.line, _answer_problem(topic.topic_id, topic.extra["answer"]))
            else:
                topic.extra["answer"] = answer
    if not topics and log.ok:
        log.add(0, f"no topics found (read as {fmt})")
    return topics, log


# A topic's accepted answer, as NIST's `topics_efficacy` file gives it.
ANSWERS = {-1: "not helpful", 0: "inconclusive", 1: "helpful"}


def parse_answer(raw: Any) -> int | None:
    """-1, 0 or 1 from an int or its text; None for anything else."""
    if isinstance(raw, bool):
        return None
    try:
        value = int(raw) if isinstance(raw, int) else int(str(raw).strip())
    except ValueError:
        return None
    return value if value in ANSWERS else None


def _answer_problem(topic_id: str, raw: Any) -> str:
    meanings = ", ".join(f"{value} ({meaning})" for value, meaning in ANSWERS.items())
    return f"topic {topic_id!r}: the answer must be {meanings}; got {raw!r}"


@dataclass(frozen=True)
class TopicAnswer:
    topic_id: str
    answer: int
    line: int


def read_answers(
    source: Source, *, name: str | None = None
) -> tuple[list[TopicAnswer], ProblemLog]:
    """Read accepted answers as NIST publishes them (`topics_efficacy`): `topic answer`
    per line, whitespace separated, answer -1, 0 or 1; `#` lines and blank lines skipped."""
    file = source_name(source, name)
    data = strip_bom(read_source(source))
    log = ProblemLog(file)
    if utf8_problem(data, log):
        return [], log
    answers: list[TopicAnswer] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(data.decode("utf-8").splitlines(), start=1):
        fields = raw.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 2:
            log.add(number, f"expected 2 columns (topic answer), found {len(fields)}")
            continue
        topic_id, value = fields
        answer = parse_answer(value)
        if answer is None:
            log.add(number, _answer_problem(topic_id, value))
        elif topic_id in seen:
            log.add(number, f"topic {topic_id!r} given twice (first on line {seen[topic_id]})")
        else:
            seen[topic_id] = number
            answers.append(TopicAnswer(topic_id, answer, number))
    if not answers and log.ok:
        log.add(0, "no answers found: expected `topic answer` lines")
    return answers, log


def _topic_from_fields(fields: dict[str, Any], line: int) -> TopicRecord:
    """Map a topic's named fields onto ours; whatever is left goes to `extra`."""
    remaining = {str(k).lower(): v for k, v in fields.items()}

    def take(keys: tuple[str, ...]) -> str:
        for key in keys:
            value = remaining.pop(key, None)
            if value not in (None, ""):
                return str(value).strip()
        return ""

    topic_id = take(_TOPIC_ID_KEYS)
    return TopicRecord(
        topic_id=topic_id,
        title=take(_TOPIC_TITLE_KEYS),
        description=take(_TOPIC_DESCRIPTION_KEYS),
        narrative=take(_TOPIC_NARRATIVE_KEYS),
        extra={k: v for k, v in remaining.items() if v not in (None, "")},
        line=line,
    )


def _topics_sgml(text: str, log: ProblemLog) -> list[TopicRecord]:
    """TREC SGML: `<top>` blocks of `<num> <title> <desc> <narr>`, tags unclosed."""
    topics = []
    for block in re.finditer(r"<top>(.*?)(?:</top>|\Z)", text, re.S | re.I):
        line = text.count("\n", 0, block.start()) + 1
        if not block.group(0).lower().rstrip().endswith("</top>"):
            log.add(line, "<top> without a closing </top>")
            continue
        fields: dict[str, str] = {}
        for tag in re.finditer(r"<(\w+)>(.*?)(?=<\w+>|</top>|\Z)", block.group(1), re.S):
            value = re.sub(r"</\w+>", "", tag.group(2))
            fields[tag.group(1).lower()] = " ".join(_SGML_LABEL.sub("", value).split())
        topics.append(_topic_from_fields(fields, line))
    return topics


def _topics_xml(text: str, log: ProblemLog) -> list[TopicRecord]:
    """TREC XML: `<topic number="..">` with child elements (or a `<number>` child).

    Read with expat directly, because ElementTree does not keep line numbers.
    """
    topics: list[TopicRecord] = []
    fields: dict[str, Any] | None = None
    line = depth = 0
    child: list[str] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal fields, line, depth, child
        if tag == "topic":
            fields, line, depth = dict(attrs), parser.CurrentLineNumber, 0
        elif fields is not None:
            depth += 1
            if depth == 1:
                child = []

    def end(tag: str) -> None:
        nonlocal fields, depth
        if fields is None:
            return
        if tag == "topic" and depth == 0:
            topics.append(_topic_from_fields(fields, line))
            fields = None
            return
        if depth == 1:
            fields[tag] = " ".join("".join(child).split())
        depth -= 1

    def characters(data: str) -> None:
        if fields is not None and depth >= 1:
            child.append(data)

    parser = expat.ParserCreate()
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = characters
    try:
        parser.Parse(text, True)
    except expat.ExpatError as error:
        log.add(
            error.lineno,
            f"malformed XML: {expat.ErrorString(error.code)} at column {error.offset + 1}",
        )
        return []
    return topics


def _topics_jsonl(text: str, log: ProblemLog) -> list[TopicRecord]:
    topics = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        record = json_object(raw, number, log)
        if record is not None:
            topics.append(_topic_from_fields(record, number))
    return topics


def _topics_tsv(text: str, log: ProblemLog) -> list[TopicRecord]:
    """TSV: `id, title[, description[, narrative]]`, or any columns under a header row."""
    positional = ("topic_id", "title", "description", "narrative")
    numbered = enumerate(text.split("\n"), start=1)
    rows = tsv_rows(numbered, header_keys=_TOPIC_ID_KEYS, positional=positional, log=log)
    return [_topic_from_fields(fields, line) for line, fields in rows]
