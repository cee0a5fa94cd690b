"""Cells of the tables the workbench offers as spreadsheets (TSV and CSV downloads).

Pure core, no Django. Every spreadsheet writer (scores, leaderboard, task
scores, the numbers behind each picture) writes its cells through
`spreadsheet_cell`, the one place that decides:

- A cell a spreadsheet program would run as a formula is written as text.
  Excel, LibreOffice and Google Sheets read a cell starting with =, +, - or @
  (and, in some, a tab or carriage return) as a formula, so a run tag or a
  submission name such as `=cmd|'/C calc'!A0` would run when the file is
  opened. OWASP's rule: such a cell gets a leading single quote, which the
  programs read as "text" and do not show.
- Numbers stay numbers: a cell that is a decimal number as a whole (-0.5,
  +3, -1e-05) cannot be a formula, so it is written as it is, and a column
  of scores still sorts and sums. A tag that happens to be a number (-1)
  stays as it is for the same reason.
- A tab or line end inside a cell would split the row (TSV has no quoting):
  it is written as a space.

TREC-format files (runs, qrels, the pool's entries and order files) are data
for tools, never passed through here: they stay byte-exact.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence

# What a spreadsheet reads as the start of a formula (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A whole decimal number, as the scorers write them (no inf or nan: those are words).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_ROW_BREAKS = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


def spreadsheet_cell(value: object) -> str:
    """`value` as a cell a spreadsheet shows and never runs (see the module's rule)."""
    text = str(value)
    if text.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text):
        text = "'" + text
    return text


def tsv_line(cells: Iterable[object]) -> str:
    """One row of a TSV spreadsheet, without its line end."""
    return "\t".join(spreadsheet_cell(cell).translate(_ROW_BREAKS) for cell in cells)


def tsv_text(header: Sequence[object], rows: Iterable[Iterable[object]]) -> str:
    """A TSV spreadsheet: the header line, then a line per row, each ending in a newline."""
    return "".join(tsv_line(row) + "\n" for row in (header, *rows))


def csv_text(header: Sequence[object], rows: Iterable[Iterable[object]]) -> str:
    """A CSV spreadsheet (quoted where a cell needs it), lines ending in a newline."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([spreadsheet_cell(cell) for cell in header])
    writer.writerows([spreadsheet_cell(cell) for cell in row] for row in rows)
    return out.getvalue()
