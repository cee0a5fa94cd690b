"""A topic's nuggets: nuggetizer's JSONL, and the editor's lines. Pure core, no Django.

nuggetizer's create output (castorini/nuggetizer), one JSON object a line:

    {"qid": "2027497", "query": "how often should ...",
     "nuggets": [{"text": "Clean the filter monthly", "importance": "vital"}, ...]}

Other keys (nuggetizer writes `nuggets_with_reasoning`, `importance_reasoning`
and more) are ignored; a nugget's other keys too (`assignment` of its assign
output). The editor page writes a topic's nuggets one a line as
`vital: text` or `okay: text`, in order.

Each problem is `file:line: reason`; nothing is returned when there is one.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from workbench.core.file_input import ReadableSource, jsonl_records, readable_name
from workbench.core.id_limits import MAX_TOPIC_ID, id_field_problem
from workbench.core.problems import InputError, ProblemLog

IMPORTANCES = ("vital", "okay")
MAX_TEXT = 1000


@dataclass(frozen=True)
class NuggetText:
    text: str
    importance: str


@dataclass(frozen=True)
class TopicNuggets:
    topic_id: str
    query: str
    nuggets: tuple[NuggetText, ...]
    line: int


def nugget_problem(text: object, importance: object) -> str | None:
    """Why a nugget is not one we keep, or None."""
    if not isinstance(text, str) or not text.strip():
        return "a nugget has some text"
    if "\x00" in text:
        return "the text holds a NUL character"
    if len(text.strip()) > MAX_TEXT:
        return f"the text is {len(text.strip()):,} characters long (at most {MAX_TEXT:,})"
    if importance not in IMPORTANCES:
        return f"importance {importance!r} is neither 'vital' nor 'okay'"
    return None


def _nuggets(value: object) -> tuple[list[str], tuple[NuggetText, ...]]:
    if not isinstance(value, list):
        return ['"nuggets" is not a list of {"text", "importance"}'], ()
    problems, nuggets = [], []
    for index, nugget in enumerate(value):
        if not isinstance(nugget, dict):
            problems.append(f"nuggets[{index}] is not an object")
            continue
        problem = nugget_problem(nugget.get("text"), nugget.get("importance"))
        if problem:
            problems.append(f"nuggets[{index}]: {problem}")
        else:
            nuggets.append(NuggetText(nugget["text"].strip(), nugget["importance"]))
    return problems, tuple(nuggets)


def read_nuggets(
    source: ReadableSource, *, name: str | None = None, known_topics: Collection[str] | None = None
) -> list[TopicNuggets]:
    """Read and check a nuggetizer nugget file: one record per topic, every topic
    known (with `known_topics`). InputError with every problem."""
    log = ProblemLog(readable_name(source, name))
    read: list[TopicNuggets] = []
    first: dict[str, int] = {}
    for number, record in jsonl_records(source, log):
        problems = [p for p in (id_field_problem(record, "qid", "topic id", MAX_TOPIC_ID),) if p]
        query = record.get("query", "")
        if not isinstance(query, str):
            problems.append('"query" is not a string')
        if "nuggets" not in record:
            problems.append('no "nuggets": every record lists its nuggets')
            nuggets: tuple[NuggetText, ...] = ()
        else:
            found, nuggets = _nuggets(record["nuggets"])
            problems += found
        for problem in problems:
            log.add(number, problem)
        if problems:
            continue
        qid = record["qid"]
        if qid in first:
            log.add(number, f"topic {qid!r} again (first on line {first[qid]})")
        elif known_topics is not None and qid not in known_topics:
            log.add(number, f"topic {qid!r} is not a topic of this campaign")
        else:
            first[qid] = number
            read.append(TopicNuggets(qid, query, nuggets, number))
    if log.ok and not read:
        log.add(0, "empty file: no topics' nuggets")
    if not log.ok:
        raise InputError.from_log(log)
    return read


def nugget_record(topic_id: str, query: str, nuggets: Iterable[NuggetText]) -> str:
    """One line of nuggetizer's JSONL (without the line end)."""
    return json.dumps(
        {
            "qid": topic_id,
            "query": query,
            "nuggets": [{"text": n.text, "importance": n.importance} for n in nuggets],
        },
        ensure_ascii=False,
    )


def parse_lines(text: str, *, name: str = "nuggets") -> list[NuggetText]:
    """The editor's lines (`vital: text` or `okay: text`, blank lines skipped), in
    order. InputError naming each line that is not one."""
    log = ProblemLog(name)
    nuggets = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        importance, colon, rest = line.partition(":")
        importance = importance.strip().lower()
        if not colon or importance not in IMPORTANCES:
            log.add(number, "write 'vital: ' or 'okay: ' before the nugget's text")
            continue
        problem = nugget_problem(rest, importance)
        if problem:
            log.add(number, problem)
        else:
            nuggets.append(NuggetText(rest.strip(), importance))
    if not log.ok:
        raise InputError.from_log(log)
    return nuggets


def as_lines(nuggets: Sequence[NuggetText]) -> str:
    """The editor's text of a list of nuggets (what `parse_lines` reads back)."""
    return "\n".join(f"{n.importance}: {n.text}" for n in nuggets)
