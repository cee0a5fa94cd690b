"""What the ids the workbench stores may be: one rule for the readers, forms and models.

How long: generous enough for real collections (ClueWeb docnos have 25
characters; some collections use DOIs or whole URLs as docnos).

What they may hold: no control characters (`control_problem`). An id is
shown in pages, pictures, spreadsheets and terminals, and sent back in
links; a control character in one is never meant: ESC starts a terminal
escape, DEL and the C0/C1 controls are invisible or break lines, and the
bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and its kin) make a
name display in another order than it is (`run-1`, U+202E, `gpj.exe`
shows as `run-1exe.jpg`).

Both are checked where a file is read or a form or serializer is cleaned,
so that a bad id is a `file:line: reason` or a form error, never a
database error or a confusing page later. Topic ids, docnos, run tags,
assessor and team member names, campaign and team names, and submission
names all follow this rule.

Ids read from JSON fields (where anything can be written, whitespace included)
are checked by `id_problem`, which also refuses whitespace and every other
invisible character: such ids travel in whitespace-separated TREC files.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

MAX_TOPIC_ID = 200
MAX_DOCNO = 500
MAX_RUN_TAG = 200
MAX_URL = 2000

# The code points no id may hold (inclusive ranges): C0 controls (NUL, tab, line
# ends, ESC...), DEL and the C1 controls, then the bidirectional controls: the
# Arabic letter mark, LRM and RLM, the embeddings and overrides LRE..RLO, and the
# isolates LRI..PDI.
CONTROL_RANGES = (
    (0x00, 0x1F),
    (0x7F, 0x9F),
    (0x061C, 0x061C),
    (0x200E, 0x200F),
    (0x202A, 0x202E),
    (0x2066, 0x2069),
)
CONTROL_CHARACTERS = re.compile(
    "[" + "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in CONTROL_RANGES) + "]"
)
# The same class in RE2's syntax, for Arrow's regular expressions over whole columns.
CONTROL_CHARACTERS_RE2 = (
    "[" + "".join(f"\\x{{{low:x}}}-\\x{{{high:x}}}" for low, high in CONTROL_RANGES) + "]"
)
_C0_NAMES = {0x00: "NUL", 0x09: "tab", 0x0A: "line feed", 0x0D: "carriage return", 0x1B: "ESC"}


def length_problem(what: str, value: str, limit: int) -> str | None:
    """Why `value` is too long to store as `what` ("docno", ...), or None."""
    if len(value) <= limit:
        return None
    return f"{what} of {len(value):,} characters ({value[:40]!r}...): at most {limit} are allowed"


def control_problem(what: str, value: str) -> str | None:
    """Why `value` cannot be `what` ("run tag", ...) for the control character it
    holds (the first one, named), or None."""
    found = CONTROL_CHARACTERS.search(value)
    if found is None:
        return None
    code = ord(found.group())
    name = (
        _C0_NAMES.get(code)
        or unicodedata.name(found.group(), "")
        or ("DEL" if code == 0x7F else "a C0 control" if code < 0x20 else "a C1 control")
    )
    shown = repr(value) if len(value) <= 60 else f"{value[:40]!r}..."
    return (
        f"{what} {shown} holds U+{code:04X} ({name}): control characters "
        "are not allowed in names and ids"
    )


def identifier_problem(what: str, value: str, limit: int | None = None) -> str | None:
    """Why `value` cannot be stored as `what`: too long (given a limit), or holding
    a control character; None when it can."""
    too_long = length_problem(what, value, limit) if limit is not None else None
    return too_long or control_problem(what, value)


def id_problem(what: str, value: str, limit: int) -> str | None:
    """Why `value`, an id read from a JSON field, cannot be stored as `what`, or None:
    empty, holding whitespace, a control or invisible format character or a lone
    surrogate (ids travel in whitespace-separated TREC files, and must look like
    what they are), or longer than `limit`."""
    if not value:
        return f"empty {what}"
    for position, char in enumerate(value, start=1):
        kind = _bad_id_character(char)
        if kind:
            return (
                f"{what} {value[:40]!r} holds {kind} (U+{ord(char):04X} at character"
                f" {position}); ids hold no whitespace, control or invisible characters"
            )
    return length_problem(what, value, limit)


def id_field_problem(record: dict[str, Any], key: str, what: str, limit: int) -> str | None:
    """The problem with `record[key]`, a JSON record's id field holding a `what`
    ("topic id", ...): missing, not a string (never converted: 007 is not "7"), or
    `id_problem`'s; None if it is a good id."""
    if key not in record:
        return f'no "{key}": every record names its {what}'
    value = record[key]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f'"{key}" {value!r} is not a string ({what}s are strings: write "{value}")'
    if not isinstance(value, str):
        return f'"{key}" is {json.dumps(value)[:40]}, not a string'
    return id_problem(f'"{key}"', value, limit)


def _bad_id_character(char: str) -> str | None:
    category = unicodedata.category(char)
    if category == "Cc":
        return "a control character"
    if char.isspace():
        return "whitespace"
    if category == "Cf":
        return "an invisible format character"
    if category == "Cs":
        return "a lone surrogate"
    return None
