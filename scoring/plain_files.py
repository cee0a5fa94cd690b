"""Well-formed run and qrels files read with Python and NumPy alone. Pure core.

The readers of record are `pooling.run_files.read_run` and
`scoring.qrels.read_qrels`: they check every line and report every problem
with its file and line, on Arrow, which takes 0.15 s to load. A command-line
scorer that people call once per run in a shell loop should not pay that for
a small file, so the scorer first tries the readers here: they accept only
the plain shape nearly every file has, and answer None for anything else
(a problem, a comment, a blank line, CRLF, two separators in a row, a line
with more fields, ...), and the caller then reads the file with the reader
of record, which says what is wrong or reads what is unusual.

So these readers never report: for a file they accept they give exactly
what the reader of record gives (tests/scoring/test_plain_files.py checks
that on generated files), and they refuse whatever that reader would refuse.
The plain shape: UTF-8 (a byte-order mark is dropped); lines of exactly the
layout's fields, separated by one space, or by one tab when the first line
has one, and no other ASCII whitespace; a newline after each line (the last
may lack it); no line starting with `#`; no (topic, docno) twice.
"""

from __future__ import annotations

import codecs
import re
from itertools import pairwise

import numpy as np

from scoring.measures.columns import PlainQrels, PlainRun, coded
from scoring.qrels import TREC_QRELS, QrelsLayout, labels_in_range

RUN_FIELDS = 6  # topic Q0 docno rank score tag
# The characters of the decimal numbers the run reader accepts; Python's
# float() reads exactly those numbers among the strings made of them.
_DECIMAL_TEXT = re.compile(r"[0-9.eE+\-\n]*")
# The integers the qrels reader casts (its _INTEGER_PATTERN).
_INTEGER = re.compile(r"[+-]?0*[0-9]{1,18}")


def plain_run(data: bytes) -> PlainRun | None:
    """The run in `data` (a 6-field run file) if it has the plain shape, else None.

    As `read_run(data, extra_fields="ignore")` reads it: the score a finite
    decimal number, each docno once per topic; run_id is the last line's tag.
    """
    fields = _fields(data, RUN_FIELDS)
    if fields is None:
        return None
    topics, docs, scores = fields[0::RUN_FIELDS], fields[2::RUN_FIELDS], fields[4::RUN_FIELDS]
    if not _DECIMAL_TEXT.fullmatch("\n".join(scores)):
        return None
    try:
        score = np.fromiter(map(float, scores), np.float64, len(scores))
    except ValueError:  # "1.2.3", "+", "e5", ...
        return None
    if not np.all(np.isfinite(score)) or _repeats_a_pair(topics, docs):
        return None
    return PlainRun(_strings(topics), _strings(docs), score, fields[-1])


def plain_qrels(data: bytes, layout: QrelsLayout = TREC_QRELS) -> PlainQrels | None:
    """The qrels in `data` if they have the plain shape, else None.

    As `read_qrels(data, layout=layout)` reads them: every label an integer
    within `qrels.LABEL_RANGE`, each (topic, docno) once.
    """
    width = len(layout.columns)
    fields = _fields(data, width)
    if fields is None:
        return None
    position = {column: index for index, column in enumerate(layout.columns)}
    columns: dict[str, np.ndarray] = {}
    for column in layout.labels:
        texts = fields[position[column] :: width]
        # Labels take few distinct texts: check and convert each once.
        distinct = dict.fromkeys(texts)
        if not all(_INTEGER.fullmatch(text) for text in distinct):
            return None
        value = {text: int(text) for text in distinct}
        values = np.fromiter(map(value.__getitem__, texts), np.int64, len(texts))
        if not np.all(labels_in_range(values)):
            return None
        columns[column] = values
    topics = coded(_strings(fields[position["query_id"] :: width]))
    docs = coded(_strings(fields[position["doc_id"] :: width]))
    pairs = np.sort(topics.codes * len(docs.values) + docs.codes)
    if np.any(pairs[1:] == pairs[:-1]):  # a (topic, docno) judged twice
        return None
    kept = {column: columns[column] for column in layout.kept if column in columns}
    return PlainQrels(topics, docs, kept)


def _fields(data: bytes, width: int) -> list[str] | None:
    """Every field of a file in the plain shape (see the module docstring) whose
    lines have `width` fields, line after line; None for any other file."""
    data = data.removeprefix(codecs.BOM_UTF8)
    if not data or data[:1] in b"# \t\r\n":
        return None
    end_of_first = data.find(b"\n")
    separator, other = (b"\t", b" ") if b"\t" in data[:end_of_first] else (b" ", b"\t")
    if any(character in data for character in (other, b"\r", b"\v", b"\f")):
        return None
    if not data.endswith(b"\n"):
        data += b"\n"
    if b"\n#" in data:
        return None
    buffer = np.frombuffer(data, dtype=np.uint8)
    breaks = np.flatnonzero((buffer == separator[0]) | (buffer == ord("\n")))
    lines = data.count(b"\n")
    if len(breaks) != width * lines or not np.all(buffer[breaks[width - 1 :: width]] == 10):
        return None  # a line with more or fewer fields
    if np.any(np.diff(breaks) == 1):
        return None  # an empty field: two separators in a row, or a blank line
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    sep = separator.decode()
    fields = text.replace("\n", sep).split(sep)
    fields.pop()  # the empty string after the last newline
    return fields


def _repeats_a_pair(topics: list[str], docs: list[str]) -> bool:
    """Whether some (topic, docno) pair appears twice."""
    if len(set(docs)) == len(docs):
        return False
    # Run files list each topic's documents together: check each topic's alone.
    topic = _strings(topics)
    bounds = [0, *(np.flatnonzero(topic[1:] != topic[:-1]) + 1).tolist(), len(docs)]
    if len({topics[start] for start in bounds[:-1]}) == len(bounds) - 1:
        return any(len(set(docs[a:b])) != b - a for a, b in pairwise(bounds))
    return len(set(zip(topics, docs, strict=True))) != len(docs)


def _strings(values: list[str]) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array
