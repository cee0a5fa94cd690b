"""How long the ids the workbench stores may be: one rule for the readers and the models.

Generous enough for real collections (ClueWeb docnos have 25 characters;
some collections use DOIs or whole URLs as docnos), and checked where a
file is read, so that a longer id is a `file:line: reason`, never a
database error later.
"""

from __future__ import annotations

MAX_TOPIC_ID = 200
MAX_DOCNO = 500
MAX_RUN_TAG = 200
MAX_URL = 2000


def length_problem(what: str, value: str, limit: int) -> str | None:
    """Why `value` is too long to store as `what` ("docno", ...), or None."""
    if len(value) <= limit:
        return None
    return f"{what} of {len(value):,} characters ({value[:40]!r}...): at most {limit} are allowed"
