"""Generated answers in the TREC 2024 RAG track's format: read and check every line.
Pure core, no Django.

One JSON object a line, as the track's guidelines define the AG and RAG
output (`docs/tasks.md` says where we checked it):

    {"run_id": "my-run", "topic_id": "2027497", "topic": "how often should you ...",
     "references": ["msmarco_v2.1_doc_51_766815931#2_1606878413", ...],
     "response_length": 192,
     "answer": [{"text": "The frequency with which ...", "citations": [0, 1, 12]}, ...]}

Rules (each broken one a `file:line: reason`; the reader returns the answers,
or raises `InputError` with every problem and returns nothing):

- those six keys and no other (but `reasoning_traces` and `trace`, which the
  track's generator ragnarok writes too, are ignored), and in each sentence
  exactly `text` and `citations`;
- ids (`run_id`, `topic_id`, each segment id of `references`) are non-empty
  strings without whitespace, control or invisible characters, no longer than
  the workbench stores (`workbench.core.id_limits`); `topic` is a string;
- a segment id at most once in `references`;
- `citations` are integers, zero-based indices into `references`, each at most
  once in a sentence; a sentence may cite nothing, an answer may have no
  sentence, but a sentence has some text;
- `response_length` is the number of words of the answer, counted as the
  track's validator counts them (`response_words`);
- one answer per (run, topic); with `known_topics`, only those topics;
- blank lines are skipped; a UTF-8 byte-order mark and CRLF line ends are
  read; text holding a NUL or a lone surrogate (`\\ud800` written alone) is
  refused, as everywhere.

The track's limits (400 words, 20 references) are not checked: they are one
campaign's rules, and the track's validator trims a longer answer rather than
refusing it. The `topic` text is kept as given, not compared with the topic's.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from typing import Any

from workbench.core.file_input import ReadableSource, jsonl_records, readable_name
from workbench.core.id_limits import (
    MAX_DOCNO,
    MAX_RUN_TAG,
    MAX_TOPIC_ID,
    id_field_problem,
    id_problem,
)
from workbench.core.problems import InputError, ProblemLog

KEYS = ("run_id", "topic_id", "topic", "references", "response_length", "answer")
SENTENCE_KEYS = ("text", "citations")
# Written beside the six by the track's own generator (ragnarok's `result_to_dict`,
# since March 2026): read and ignored. Any other key is refused.
IGNORED_KEYS = ("reasoning_traces", "trace")


@dataclass(frozen=True)
class Sentence:
    text: str
    citations: tuple[int, ...]  # indices into the answer's references


@dataclass(frozen=True)
class Answer:
    """One line of an answer file."""

    run_id: str
    topic_id: str
    topic: str
    references: tuple[str, ...]
    response_length: int
    sentences: tuple[Sentence, ...]
    line: int

    @property
    def cited(self) -> tuple[str, ...]:
        """The segment ids its sentences cite, each once, in the order of `references`."""
        indices = {index for sentence in self.sentences for index in sentence.citations}
        return tuple(segment for i, segment in enumerate(self.references) if i in indices)


def response_words(texts: Iterable[str]) -> int:
    """The words of an answer's sentences as the track's validator counts them
    (ragnarok's `compute_rag24_response_length`): each text NFKC-normalised and split
    on whitespace."""
    return sum(len(unicodedata.normalize("NFKC", text).split()) for text in texts)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: object) -> str:
    """A JSON value as the file wrote it, cut short."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else f"{text[:40]}..."


def _count(value: object) -> int | None:
    """`value` if it is a whole number of things (an int, not a bool, not negative)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _key_problems(
    record: dict[str, Any], keys: tuple[str, ...], where: str, ignored: tuple[str, ...] = ()
) -> list[str]:
    missing = [key for key in keys if key not in record]
    unknown = [key for key in record if key not in keys and key not in ignored]
    expected = ", ".join(keys)
    problems = []
    if missing:
        names = ", ".join(f'"{key}"' for key in missing)
        problems.append(f"{where}no {names} (expected {expected})")
    if unknown:
        names = ", ".join(f'"{key[:40]}"' for key in unknown[:5])
        problems.append(
            f"{where}unknown key{'s' if len(unknown) > 1 else ''} {names} (expected {expected})"
        )
    return problems


def _references(value: object) -> tuple[list[str], tuple[str, ...] | None]:
    if not isinstance(value, list):
        return ['"references" is not a list of segment ids'], None
    problems: list[str] = []
    first: dict[str, int] = {}
    for index, segment in enumerate(value):
        where = f"references[{index}]"
        if not isinstance(segment, str):
            problems.append(f"{where} is not a string")
            continue
        problem = id_problem(where, segment, MAX_DOCNO)
        if problem:
            problems.append(problem)
        elif segment in first:
            problems.append(f"{where} repeats references[{first[segment]}] ({segment!r})")
        else:
            first[segment] = index
    return problems, None if problems else tuple(value)


def _citations(value: object, where: str, references: int | None) -> list[str]:
    if not isinstance(value, list):
        return [f'{where}"citations" is not a list of indices into "references"']
    problems, seen = [], set()
    for index, citation in enumerate(value):
        at = f"{where}citations[{index}]"
        if not _is_int(citation):
            problems.append(f"{at} {_shown(citation)} is not an integer index")
        elif citation in seen:
            problems.append(f"{at}: {citation} is cited twice in the sentence")
        else:
            seen.add(citation)
            if references is not None and not 0 <= citation < references:
                span = f"0 to {references - 1}" if references else "none, it is empty"
                problems.append(
                    f'{at}: {citation} is outside "references" ({references} segments: {span})'
                )
    return problems


def _sentences(value: object, references: int | None) -> tuple[list[str], tuple[Sentence, ...]]:
    if not isinstance(value, list):
        return ['"answer" is not a list of sentences ({"text", "citations"})'], ()
    problems: list[str] = []
    sentences = []
    for index, sentence in enumerate(value):
        where = f"answer[{index}]"
        if not isinstance(sentence, dict):
            problems.append(f'{where} is not an object ({{"text", "citations"}})')
            continue
        found = _key_problems(sentence, SENTENCE_KEYS, f"{where}: ")
        text, citations = sentence.get("text"), sentence.get("citations", [])
        if "text" in sentence and not isinstance(text, str):
            found.append(f'{where}: "text" is not a string')
        elif isinstance(text, str) and not text.strip():
            found.append(f"{where} has no text")
        found += _citations(citations, f"{where}.", references)
        problems += found
        if not found:
            sentences.append(Sentence(str(text), tuple(citations)))
    return problems, tuple(sentences)


def _record_problems(record: dict[str, Any]) -> tuple[list[str], Answer | None]:
    """Every problem of one line, or its answer (line 0: the caller sets it)."""
    problems = _key_problems(record, KEYS, "", IGNORED_KEYS)
    for key, what, limit in (
        ("run_id", "run id", MAX_RUN_TAG),
        ("topic_id", "topic id", MAX_TOPIC_ID),
    ):
        problem = id_field_problem(record, key, what, limit) if key in record else None
        if problem:
            problems.append(problem)
    if "topic" in record and not isinstance(record["topic"], str):
        problems.append('"topic" is not a string')
    references: tuple[str, ...] | None = None
    if "references" in record:
        found, references = _references(record["references"])
        problems += found
    raw_length = record.get("response_length")
    length = _count(raw_length)
    if "response_length" in record and length is None:
        problems.append(f'"response_length" {_shown(raw_length)} is not a number of words')
    sentences: tuple[Sentence, ...] = ()
    if "answer" in record:
        cited = record.get("references")
        found, sentences = _sentences(
            record["answer"], len(cited) if isinstance(cited, list) else None
        )
        problems += found
        if not found and length is not None:
            words = response_words(sentence.text for sentence in sentences)
            if words != length:
                problems.append(
                    f'"response_length" is {length}, but the answer has {words} words (each'
                    " sentence NFKC-normalised and split on whitespace, as the track's validator"
                    f" counts them): write {words}"
                )
    if problems or length is None:
        return problems, None
    return [], Answer(
        record["run_id"],
        record["topic_id"],
        record["topic"],
        references or (),
        length,
        sentences,
        0,
    )


def read_generated_answers(
    source: ReadableSource, *, name: str | None = None, known_topics: Collection[str] | None = None
) -> list[Answer]:
    """Read and check an answer file (see the module docstring), a line at a time.
    With `known_topics`, an answer to any other topic is a problem. Returns the
    answers in file order; raises InputError with every problem found."""
    log = ProblemLog(readable_name(source, name))
    known = None if known_topics is None else frozenset(known_topics)
    answers: list[Answer] = []
    first_line: dict[tuple[str, str], int] = {}
    for number, record in jsonl_records(source, log):
        problems, answer = _record_problems(record)
        for problem in problems:
            log.add(number, problem)
        if answer is None:
            continue
        key = (answer.run_id, answer.topic_id)
        if key in first_line:
            log.add(
                number,
                f"run {key[0]!r} answers topic {key[1]!r} again (first on line {first_line[key]})",
            )
            continue
        first_line[key] = number
        if known is not None and answer.topic_id not in known:
            log.add(number, f"topic {answer.topic_id!r} is not a topic of this campaign")
            continue
        answers.append(replace(answer, line=number))
    if log.ok and not answers:
        log.add(0, "empty file: no answers")
    if not log.ok:
        raise InputError.from_log(log)
    return answers
