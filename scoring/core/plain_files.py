"""Well-formed run and qrels files read with NumPy alone. Pure core.

The readers of record are `workbench.core.run_files.read_run` and
`scoring.core.qrels.read_qrels`: they check every line and report every problem
with its file and line, on Arrow, which takes 0.3 s to load with the pandas
it loads at its first array. A command-line scorer that people call once per
run in a shell loop should not pay that, so the scorer first tries the
readers here, which are also faster on large files: they accept only
the plain shape nearly every file has, and answer None for anything else
(a problem, a comment, a blank line, CRLF, two separators in a row, a line
with more fields, ...), and the caller then reads the file with the reader
of record, which says what is wrong or reads what is unusual.

So these readers never report: for a file they accept they give exactly
what the reader of record gives (tests/scoring/core/test_plain_files.py checks
that on generated files), and they refuse whatever that reader would refuse.
The plain shape: UTF-8 (a byte-order mark is dropped) without NUL; lines of
exactly the layout's fields, separated by one space, or by one tab when the
first line has one, and no other ASCII whitespace; a newline after each
line (the last may lack it); no line starting with `#`; no (topic, docno)
twice.

They work on the file's bytes as arrays: a field is a (start, end) pair of
offsets, a column of strings a NumPy bytes array (`S`, padded with NUL, which
is why no field may hold one), a column of numbers is parsed where it lies.
No Python object is made per line, which is what makes them fast.
"""

from __future__ import annotations

import codecs

import numpy as np

from scoring.core.measures.columns import PlainQrels, PlainRun, coded, fingerprints
from scoring.core.qrels import TREC_QRELS, QrelsLayout, labels_in_range

RUN_FIELDS = 6  # topic Q0 docno rank score tag
_MIX = 0x9E3779B97F4A7C15
_DIGIT_LOW, _DIGIT_HIGH = ord("0"), ord("9")
_PLUS, _MINUS, _POINT = ord("+"), ord("-"), ord(".")
# The bytes of the decimal numbers the run reader accepts; Python's float()
# reads exactly those numbers among the strings made of them.
_DECIMAL_BYTES = np.zeros(256, dtype=bool)
_DECIMAL_BYTES[[*range(_DIGIT_LOW, _DIGIT_HIGH + 1), _PLUS, _MINUS, _POINT, ord("e"), ord("E")]] = 1
MAX_INTEGER_DIGITS = 18  # what an int64 always holds (longer labels: the reader of record)
_POWERS_OF_TEN = np.array([float(f"1e{k}") for k in range(23)])  # each exact in a double


def plain_run(data: bytes) -> PlainRun | None:
    """The run in `data` (a 6-field run file) if it has the plain shape, else None.

    As `read_run(data, extra_fields="ignore")` reads it: the score a finite
    decimal number, each docno once per topic; run_id is the last line's tag.
    """
    fields = _located(data, RUN_FIELDS)
    if fields is None:
        return None
    score = _decimals(fields.column(4))
    if score is None:
        return None
    topics, docs = fields.column(0), fields.column(2)
    if _repeats_a_pair(coded(topics, in_runs=True).codes, fingerprints(docs)):
        return None
    return PlainRun(topics, docs, score, fields.last(5).decode())


def plain_qrels(data: bytes, layout: QrelsLayout = TREC_QRELS) -> PlainQrels | None:
    """The qrels in `data` if they have the plain shape, else None.

    As `read_qrels(data, layout=layout)` reads them: every label an integer
    within `qrels.LABEL_RANGE`, each (topic, docno) once.
    """
    fields = _located(data, len(layout.columns))
    if fields is None:
        return None
    position = {column: index for index, column in enumerate(layout.columns)}
    columns: dict[str, np.ndarray] = {}
    for column in layout.labels:
        values = _integers(fields.column(position[column]))
        if values is None or not np.all(labels_in_range(values)):
            return None
        columns[column] = values
    topics = coded(fields.column(position["query_id"]), in_runs=True)
    docs = coded(fields.column(position["doc_id"]))
    pairs = np.sort(topics.codes * len(docs.values) + docs.codes)
    if np.any(pairs[1:] == pairs[:-1]):  # a (topic, docno) judged twice
        return None
    kept = {column: columns[column] for column in layout.kept if column in columns}
    return PlainQrels(topics, docs, kept)


class _Fields:
    """A file in the plain shape: its bytes, and the offset of the separator or
    newline after each field (`width` of them a line)."""

    __slots__ = ("breaks", "buffer", "width")

    def __init__(self, buffer: np.ndarray, breaks: np.ndarray, width: int) -> None:
        self.buffer, self.breaks, self.width = buffer, breaks, width

    def _bounds(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        """Where each line's field `index` starts, and where it ends."""
        ends = self.breaks[index :: self.width]
        if index:
            return self.breaks[index - 1 :: self.width] + 1, ends
        starts = np.empty_like(ends)
        starts[0] = 0
        starts[1:] = self.breaks[self.width - 1 :: self.width][:-1] + 1
        return starts, ends

    def column(self, index: int) -> np.ndarray:
        """The fields of one column as a NumPy bytes array (`S`, NUL-padded)."""
        start, end = self._bounds(index)
        length = end - start
        width = int(length.max())
        if int(start.max()) + width > len(self.buffer):  # room for the last field's window
            self.buffer = np.concatenate([self.buffer, np.zeros(width, dtype=np.uint8)])
        # Each field's bytes and those after it (rows of a sliding window), then
        # the bytes past its end zeroed.
        windows = np.lib.stride_tricks.sliding_window_view(self.buffer, width)
        rows = windows[start]
        rows[np.arange(width) >= length[:, None]] = 0
        return rows.view(f"S{width}").ravel()

    def last(self, index: int) -> bytes:
        """The last line's field."""
        start, end = self._bounds(index)
        return self.buffer[start[-1] : end[-1]].tobytes()


def _located(data: bytes, width: int) -> _Fields | None:
    """The fields of a file in the plain shape (see the module docstring) whose
    lines have `width` fields; None for any other file."""
    data = data.removeprefix(codecs.BOM_UTF8)
    if not data or data[:1] in b"# \t\r\n":
        return None
    end_of_first = data.find(b"\n")
    separator = b"\t" if b"\t" in data[:end_of_first] else b" "
    if not data.endswith(b"\n"):
        data += b"\n"
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    buffer = np.frombuffer(data, dtype=np.uint8)
    # Every byte up to the space: the separators and newlines, and no other
    # (no other whitespace, no NUL, no control character) in the plain shape.
    breaks = np.flatnonzero(buffer <= ord(" "))
    if len(breaks) % width:
        return None  # a line with more or fewer fields
    line = np.full(width, separator[0], dtype=np.uint8)
    line[-1] = ord("\n")
    if not np.array_equal(
        buffer[breaks].reshape(-1, width), np.broadcast_to(line, (len(breaks) // width, width))
    ):
        return None  # another byte, or a line with more or fewer fields
    if breaks[0] == 0 or np.any(np.diff(breaks) == 1):
        return None  # an empty field: two separators in a row, or a blank line
    if np.any(buffer[breaks[width - 1 : -1 : width] + 1] == ord("#")):
        return None  # a comment line (the first line was checked above)
    return _Fields(buffer, breaks, width)


def _columns(strings: np.ndarray) -> np.ndarray:
    """A bytes array's bytes, position by position (width x rows): a number has
    a few bytes and a file many lines, so the work goes column by column.
    NUL past each string's end (no string holds one)."""
    return np.ascontiguousarray(strings.view(np.uint8).reshape(len(strings), -1).T)


def _integers(strings: np.ndarray) -> np.ndarray | None:
    """The integers `[+-]?[0-9]{1,18}`, or None if a string is not one of them
    (longer ones, with leading zeros, go to the reader of record)."""
    columns = _columns(strings)
    values = np.zeros(len(strings), dtype=np.int64)
    digits = np.zeros(len(strings), dtype=np.int64)
    for position, column in enumerate(columns):
        digit = (column >= _DIGIT_LOW) & (column <= _DIGIT_HIGH)
        other = (column != 0) & ~digit
        if position == 0:
            other &= (column != _PLUS) & (column != _MINUS)
        if np.any(other):
            return None
        values = np.where(digit, values * 10 + (column.astype(np.int64) - _DIGIT_LOW), values)
        digits += digit
    if np.any(digits == 0) or np.any(digits > MAX_INTEGER_DIGITS):
        return None
    return np.where(columns[0] == _MINUS, -values, values)


def _decimals(strings: np.ndarray) -> np.ndarray | None:
    """The finite decimal numbers the run reader accepts, as doubles; None if a
    string is not one (`1.2.3`, `inf`, `1_0`, `1e999`, ...).

    A number of at most 15 digits without an exponent (nearly every score) is
    its digits as an integer, exact in a double, divided by a power of ten up
    to 10**22, also exact: one division, so rounded once, correctly, as
    float() rounds it (Clinger's fast path). Python's float() reads the rest.
    """
    columns = _columns(strings)
    mantissa = np.zeros(len(strings), dtype=np.int64)
    digits = np.zeros(len(strings), dtype=np.int64)
    fraction = np.zeros(len(strings), dtype=np.int64)
    points = np.zeros(len(strings), dtype=np.int64)
    other = np.zeros(len(strings), dtype=bool)  # an exponent, or a sign past the first byte
    for position, column in enumerate(columns):
        if not np.all(_DECIMAL_BYTES[column] | (column == 0)):
            return None
        digit = (column >= _DIGIT_LOW) & (column <= _DIGIT_HIGH)
        point = column == _POINT
        if position:
            other |= (column != 0) & ~digit & ~point
        else:
            other |= (column != _PLUS) & (column != _MINUS) & ~digit & ~point
        mantissa = np.where(digit, mantissa * 10 + (column.astype(np.int64) - _DIGIT_LOW), mantissa)
        fraction += digit & (points > 0)
        digits += digit
        points += point
    fast = ~other & (points <= 1) & (digits >= 1) & (digits <= 15)
    values = mantissa / _POWERS_OF_TEN[np.where(fast, fraction, 0)]
    values = np.where(columns[0] == _MINUS, -values, values)
    slow = np.flatnonzero(~fast)
    if len(slow):
        try:
            values[slow] = np.fromiter(map(float, strings[slow].tolist()), np.float64, len(slow))
        except ValueError:  # "1.2.3", "+", "e5", ...
            return None
    return values if np.all(np.isfinite(values)) else None


def _repeats_a_pair(topic: np.ndarray, fingerprint: np.ndarray) -> bool:
    """Whether some (topic, docno) pair may appear twice, given topic codes and
    docno fingerprints: True for a repeated pair, and for the one in 2**64
    chance that two pairs share a key (the reader of record then decides)."""
    key = np.sort(fingerprint ^ (topic.astype(np.uint64) * np.uint64(_MIX)))
    return bool(np.any(key[1:] == key[:-1]))
