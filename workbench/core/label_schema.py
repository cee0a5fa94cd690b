"""A campaign's label schema: relevance grades and the aspects asked when relevant.

Pure core, no Django. The schema is stored as JSON on the campaign:

    {"relevance": {"name": "Relevance", "grades": [{"value": 0, "name": "Not relevant",
                                                    "key": "0"}, ...]},
     "aspects": [{"id": "effectiveness", "name": "Effectiveness", "when": "relevant",
                  "grades": [...]}, ...]}

Aspects are asked only when relevance > 0 ("when": "relevant", the default)
or for every document ("when": "always"). An aspect not asked is stored as
NOT_ASKED (-1), the Decision track's "not judged because not relevant".
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.file_input import JSONProblem, parse_json

NOT_ASKED = -1
# The Decision track's code for an aspect that should have been judged and was
# not; accepted only from imported judgments, never from an assessor.
NOT_JUDGED = -2
# Keys the judging screen keeps for itself: undo and the key map.
RESERVED_KEYS = frozenset({"u", "?", "!", "/"})
# The largest grade value a schema may declare. Relevance is stored in a
# SmallIntegerField (judging.models.Judgment and Adjudication): smallint on
# PostgreSQL, -32768..32767; SQLite stores up to 2^63 - 1, but a schema must
# work on either. Aspects (JSON) keep the same bound: one rule for every grade.
# Every grade the workbench stores passes `LabelSchema.clean`, so a schema that
# passes this bound is one whose every label can be stored.
MAX_GRADE = 32767
_ASPECT_WHEN = ("relevant", "always")

DEFAULT_LABEL_SCHEMA: dict[str, Any] = {
    "relevance": {
        "name": "Relevance",
        "grades": [
            {"value": 0, "name": "Not relevant", "key": "0"},
            {"value": 1, "name": "Relevant", "key": "1"},
            {"value": 2, "name": "Highly relevant", "key": "2"},
        ],
    },
    "aspects": [
        {
            "id": "effectiveness",
            "name": "Effectiveness",
            "question": "What does the document say about the treatment?",
            "when": "relevant",
            "grades": [
                {"value": 0, "name": "No information", "key": "n"},
                {"value": 1, "name": "Ineffective", "key": "i"},
                {"value": 2, "name": "Inconclusive", "key": "c"},
                {"value": 3, "name": "Effective", "key": "e"},
            ],
        },
        {
            "id": "credibility",
            "name": "Credibility",
            "question": "Is the document credible?",
            "when": "relevant",
            "grades": [
                {"value": 0, "name": "Not credible", "key": "x"},
                {"value": 1, "name": "Credible", "key": "k"},
            ],
        },
    ],
}


class LabelSchemaError(ValueError):
    """The schema itself is malformed; the message lists every problem."""


class LabelError(ValueError):
    """A judgment's labels do not fit the schema."""


@dataclass(frozen=True)
class Grade:
    value: int
    name: str
    key: str


@dataclass(frozen=True)
class Question:
    id: str
    name: str
    grades: tuple[Grade, ...]
    question: str = ""
    when: str = "relevant"

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(g.value for g in self.grades)

    def grade(self, value: int) -> Grade | None:
        return next((g for g in self.grades if g.value == value), None)

    def value_of(self, raw: Any) -> int:
        """`raw` as one of this question's values; LabelError (readable) otherwise."""
        value = _as_int(raw, self.name)
        if value not in self.values:
            raise LabelError(f"{self.name} must be one of {_value_list(self)}; got {value}")
        return value

    def value_name(self, value: int) -> str:
        """The grade's name; "not judged" for NOT_JUDGED; a value outside the schema as is."""
        grade = self.grade(value)
        return grade.name if grade else "not judged" if value == NOT_JUDGED else str(value)


@dataclass(frozen=True)
class LabelSchema:
    relevance: Question
    aspects: tuple[Question, ...]

    @classmethod
    def parse(cls, data: Any) -> LabelSchema:
        """Check a schema dict and build it; raises LabelSchemaError listing all problems."""
        problems = schema_problems(data)
        if problems:
            raise LabelSchemaError("; ".join(problems))
        relevance = _question("relevance", data["relevance"])
        aspects = tuple(_question(a["id"], a) for a in data.get("aspects", []))
        return cls(relevance, aspects)

    @classmethod
    def default(cls) -> LabelSchema:
        return cls.parse(DEFAULT_LABEL_SCHEMA)

    @property
    def questions(self) -> tuple[Question, ...]:
        """Relevance, then the aspects, in the order assessors answer them."""
        return (self.relevance, *self.aspects)

    @property
    def aspect_ids(self) -> tuple[str, ...]:
        return tuple(a.id for a in self.aspects)

    def aspects_asked(self, relevance: int) -> tuple[Question, ...]:
        return tuple(a for a in self.aspects if a.when == "always" or relevance > 0)

    def clean(
        self, relevance: Any, aspects: dict[str, Any], *, allow_not_judged: bool = False
    ) -> tuple[int, dict[str, int]]:
        """Check one judgment's labels; return them normalised.

        Aspects asked for this relevance are required; the others are stored
        as NOT_ASKED whatever was sent. With `allow_not_judged` (imports), an
        asked aspect may be NOT_JUDGED. Raises LabelError with a message an
        assessor can read.
        """
        rel = self.relevance.value_of(relevance)
        unknown = sorted(set(aspects) - set(self.aspect_ids))
        if unknown:
            raise LabelError(f"unknown aspect {', '.join(unknown)}")
        asked = {a.id for a in self.aspects_asked(rel)}
        cleaned: dict[str, int] = {}
        for aspect in self.aspects:
            if aspect.id not in asked:
                cleaned[aspect.id] = NOT_ASKED
                continue
            raw = aspects.get(aspect.id)
            if raw in (None, ""):
                raise LabelError(f"{aspect.name} is required when {self.relevance.name} is {rel}")
            value = _as_int(raw, aspect.name)
            if allow_not_judged and value == NOT_JUDGED:
                cleaned[aspect.id] = value
                continue
            cleaned[aspect.id] = aspect.value_of(value)
        return rel, cleaned

    def label_names(self, labels: Mapping[str, Any]) -> list[str]:
        """Each label by its question's and grade's names ("Relevance: Relevant"), in the
        schema's order. Aspects not asked are left out; NOT_JUDGED reads "not judged",
        and a value outside the schema is shown as it is."""
        names = []
        for question in (self.relevance, *self.aspects):
            value = labels.get(question.id)
            if value is None or (question is not self.relevance and value == NOT_ASKED):
                continue
            names.append(f"{question.name}: {question.value_name(value)}")
        return names

    def key_map(self) -> list[dict[str, Any]]:
        """Every question's keys, for the key-map overlay and the keyboard script."""
        return [
            {"id": q.id, "name": q.name, "grades": [g.__dict__ for g in q.grades]}
            for q in self.questions
        ]


def schema_problems(data: Any) -> list[str]:
    """Everything wrong with a schema dict (empty when it is valid)."""
    if not isinstance(data, dict):
        return ["the label schema must be a JSON object"]
    problems: list[str] = []
    unknown = sorted(set(data) - {"relevance", "aspects"})
    if unknown:
        problems.append(f"unknown schema fields: {', '.join(unknown)}")
    relevance = data.get("relevance")
    if not isinstance(relevance, dict):
        return [*problems, "'relevance' must be an object with 'grades'"]
    problems += _question_problems("relevance", relevance)
    aspects = data.get("aspects", [])
    if not isinstance(aspects, list):
        return [*problems, "'aspects' must be a list"]
    ids: set[str] = set()
    for index, aspect in enumerate(aspects):
        if not isinstance(aspect, dict):
            problems.append(f"aspect {index + 1} must be an object")
            continue
        aspect_id = aspect.get("id")
        if not isinstance(aspect_id, str) or not aspect_id.isidentifier():
            problems.append(f"aspect {index + 1} needs an 'id' made of letters, digits and _")
            continue
        if aspect_id in ids or aspect_id == "relevance":
            problems.append(f"aspect id {aspect_id!r} is used twice")
        ids.add(aspect_id)
        if aspect.get("when", "relevant") not in _ASPECT_WHEN:
            problems.append(
                f"aspect {aspect_id!r}: 'when' must be one of {', '.join(_ASPECT_WHEN)}"
            )
        problems += _question_problems(aspect_id, aspect)
    if not problems:
        problems += _key_clashes([relevance, *aspects])
    return problems


def _question_problems(label: str, question: dict[str, Any]) -> list[str]:
    grades = question.get("grades")
    if not isinstance(grades, list) or len(grades) < 2:
        return [f"{label}: 'grades' must list at least two grades"]
    problems = []
    values: set[int] = set()
    for grade in grades:
        if not isinstance(grade, dict):
            problems.append(f"{label}: each grade must be an object")
            continue
        value, name, key = grade.get("value"), grade.get("name"), grade.get("key")
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            problems.append(f"{label}: grade value {_shown(value)} must be a non-negative integer")
        elif value > MAX_GRADE:
            problems.append(
                f"{label}: grade value {_shown(value)} is too large: grades are stored as "
                f"small integers, at most {MAX_GRADE}"
            )
        elif value in values:
            problems.append(f"{label}: grade value {value} is used twice")
        else:
            values.add(value)
        if not isinstance(name, str) or not name.strip():
            problems.append(f"{label}: grade {_shown(value)} needs a name")
        if not isinstance(key, str) or len(key) != 1 or key.isspace():
            problems.append(f"{label}: grade {_shown(value)} needs a one-character key")
        elif key.lower() in RESERVED_KEYS:
            problems.append(
                f"{label}: key {key!r} is reserved (u undoes, ? shows the key map, "
                "! sets a document aside, / writes a note)"
            )
    if label == "relevance" and values and 0 not in values:
        problems.append("relevance: grade 0 (not relevant) is required")
    return problems


def _shown(value: Any) -> str:
    """A grade value as a problem shows it: a 4,000-digit number is cut short."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text):,} characters)"


def _key_clashes(questions: list[dict[str, Any]]) -> list[str]:
    owner: dict[str, str] = {}
    problems = []
    for question in questions:
        name = question.get("id", "relevance")
        for grade in question["grades"]:
            key = grade["key"].lower()
            if key in owner:
                problems.append(f"key {key!r} is used by both {owner[key]} and {name}")
            owner[key] = name
    return problems


def _question(question_id: str, data: dict[str, Any]) -> Question:
    grades = tuple(
        Grade(int(g["value"]), str(g["name"]), str(g["key"]))
        for g in sorted(data["grades"], key=lambda g: g["value"])
    )
    return Question(
        id=question_id,
        name=str(data.get("name") or question_id.replace("_", " ").capitalize()),
        grades=grades,
        question=str(data.get("question", "")),
        when=str(data.get("when", "relevant")),
    )


def _as_int(raw: Any, what: str) -> int:
    if isinstance(raw, bool):
        raise LabelError(f"{what} must be a whole number; got {raw!r}")
    if isinstance(raw, int):
        return raw
    try:
        return int(str(raw).strip())
    except ValueError:
        raise LabelError(f"{what} must be a whole number; got {raw!r}") from None


def _value_list(question: Question) -> str:
    return ", ".join(f"{g.value} ({g.name})" for g in question.grades)


def default_schema() -> dict[str, Any]:
    """A fresh copy of the default schema, safe to modify."""
    return copy.deepcopy(DEFAULT_LABEL_SCHEMA)


# --------------------------------------------------------------------------
# Presets: the schemas campaigns usually need, so that nobody writes JSON for them.


def _graded(*names: str) -> dict[str, Any]:
    grades = [{"value": v, "name": name, "key": str(v)} for v, name in enumerate(names)]
    return {"relevance": {"name": "Relevance", "grades": grades}, "aspects": []}


@dataclass(frozen=True)
class SchemaPreset:
    name: str
    label: str
    data: dict[str, Any]

    def schema(self) -> dict[str, Any]:
        """A fresh copy of the preset's schema, safe to modify."""
        return copy.deepcopy(self.data)


SCHEMA_PRESETS: dict[str, SchemaPreset] = {
    preset.name: preset
    for preset in (
        SchemaPreset(
            "decision",
            "TREC 2019 Decision: relevance 0-2, effectiveness and credibility when relevant",
            DEFAULT_LABEL_SCHEMA,
        ),
        SchemaPreset(
            "binary", "Binary: not relevant / relevant", _graded("Not relevant", "Relevant")
        ),
        SchemaPreset(
            "graded-0-2",
            "Graded 0-2: not, relevant, highly relevant",
            _graded("Not relevant", "Relevant", "Highly relevant"),
        ),
        SchemaPreset(
            "graded-0-3",
            "Graded 0-3 (TREC Deep Learning): irrelevant, related, highly, perfectly relevant",
            _graded("Irrelevant", "Related", "Highly relevant", "Perfectly relevant"),
        ),
        SchemaPreset(
            "graded-0-4",
            "Graded 0-4: not, marginally, fairly, highly, perfectly relevant",
            _graded(
                "Not relevant",
                "Marginally relevant",
                "Fairly relevant",
                "Highly relevant",
                "Perfectly relevant",
            ),
        ),
    )
}
DEFAULT_PRESET = "decision"


def preset_of(data: Any) -> str | None:
    """The name of the preset this schema dict is, if it is one."""
    return next((p.name for p in SCHEMA_PRESETS.values() if p.data == data), None)


def load_schema(spec: str) -> LabelSchema:
    """A schema named by a preset (`decision`, `binary`, ...) or read from a JSON file.

    Raises LabelSchemaError naming the presets, or the file and what is wrong with it.
    """
    if spec in SCHEMA_PRESETS:
        return LabelSchema.parse(SCHEMA_PRESETS[spec].data)
    path = Path(spec)
    if not path.is_file():
        presets = ", ".join(sorted(SCHEMA_PRESETS))
        raise LabelSchemaError(f"unknown schema {spec!r}: a preset ({presets}) or a JSON file")
    try:
        data = parse_json(path.read_bytes())
    except OSError as error:
        raise LabelSchemaError(f"{spec}: cannot read ({error.strerror})") from None
    except JSONProblem as error:
        raise LabelSchemaError(f"{spec}: {error}") from None
    try:
        return LabelSchema.parse(data)
    except LabelSchemaError as error:
        raise LabelSchemaError(f"{spec}: {error}") from None
