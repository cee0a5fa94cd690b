"""How long the ids the workbench stores may be, and what they may hold: one rule for
the readers and the models.

Generous enough for real collections (ClueWeb docnos have 25 characters;
some collections use DOIs or whole URLs as docnos), and checked where a
file is read, so that a longer id is a `file:line: reason`, never a
database error later. Ids read from JSON fields (where anything can be
written) are checked by `id_problem` for the characters no id may hold too.
"""

from __future__ import annotations

import json
from typing import Any

MAX_TOPIC_ID = 200
MAX_DOCNO = 500
MAX_RUN_TAG = 200
MAX_URL = 2000


def length_problem(what: str, value: str, limit: int) -> str | None:
    """Why `value` is too long to store as `what` ("docno", ...), or None."""
    if len(value) <= limit:
        return None
    return f"{what} of {len(value):,} characters ({value[:40]!r}...): at most {limit} are allowed"


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
    import unicodedata  # here: most readers never call this

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
