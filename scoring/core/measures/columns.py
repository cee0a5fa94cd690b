"""The scorer's input frames: Arrow, pandas or plain NumPy columns. Pure core.

The scorer reads qrels and runs from three kinds of frames:

- Arrow tables: what the readers return (`workbench.core.run_files.read_run`,
  `scoring.core.qrels.read_qrels_table`);
- pandas frames: `scoring.core.qrels.read_qrels`, and the frames the web builds;
- plain columns, `PlainQrels` and `PlainRun`: what `scoring.core.plain_files`
  reads from small, well-formed files with NumPy alone, so that the command
  line scores them without loading pyarrow or pandas.

Strings are Arrow string arrays, or NumPy bytes arrays (`S`: UTF-8, padded
with NUL, so they hold no NUL; `plain_strings` makes them). `Vocabulary`
and the functions here do what the scorer does with them (codes, filter,
concatenate) either way, and import pyarrow only for Arrow input. Bytes
arrays compare and sort in byte order, the order of the ranking rule.

Frame columns: qrels have query_id, doc_id, relevance and maybe more
integer or float columns; runs have query_id, doc_id, score, run_id.
(The plain frames are NamedTuples: a frozen dataclass costs the command
line's start-up a millisecond each.)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

type Strings = np.ndarray | pa.Array | pa.ChunkedArray

_MIX_A = np.uint64(0x9E3779B97F4A7C15)
_MIX_B = np.uint64(0xC2B2AE3D27D4EB4F)


class PlainQrels(NamedTuple):
    """Qrels as plain columns, in file order.

    query_id, doc_id: coded strings (`Coded`). columns: relevance and the
    layout's other integer columns (int64).
    """

    query_id: Coded
    doc_id: Coded
    columns: dict[str, np.ndarray]

    @classmethod
    def of(
        cls, query_id: Sequence[str], doc_id: Sequence[str], **columns: Sequence[int]
    ) -> PlainQrels:
        """From lists of strings and of integers (relevance=..., aspect_2=...)."""
        return cls(
            coded(plain_strings(query_id), in_runs=True),
            coded(plain_strings(doc_id)),
            {name: np.asarray(values, dtype=np.int64) for name, values in columns.items()},
        )


class PlainRun(NamedTuple):
    """One run as plain columns, in file order.

    query_id, doc_id: bytes arrays (`plain_strings`); score: float64; run_id:
    the tag trec_eval reports, that of the last line.
    """

    query_id: np.ndarray
    doc_id: np.ndarray
    score: np.ndarray
    run_id: str


type Qrels = PlainQrels | pa.Table | pd.DataFrame
type Run = PlainRun | pa.Table | pd.DataFrame


def plain_strings(values: Iterable[str]) -> np.ndarray:
    """Strings as a bytes array (UTF-8); refuses a NUL, which the padding would hide."""
    encoded = [value.encode() for value in values]
    if any(b"\0" in value for value in encoded):
        raise ValueError("a plain string column cannot hold a NUL character")
    return np.array(encoded, dtype=bytes) if encoded else np.empty(0, dtype="S1")


def decoded(strings: np.ndarray) -> list[str]:
    return [value.decode() for value in strings.tolist()]


def fingerprints(strings: np.ndarray) -> np.ndarray:
    """One uint64 per string of a bytes array, mixed from its bytes: equal strings
    always get equal fingerprints, different ones nearly always different ones."""
    n, width = len(strings), strings.dtype.itemsize
    padded = np.zeros((n, -(-width // 8) * 8), dtype=np.uint8)
    padded[:, :width] = strings.view(np.uint8).reshape(n, width)
    mixed = np.full(n, _MIX_A, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for word in np.ascontiguousarray(padded.view("<u8").T):
            # A word past a string's end is all NUL, and one within it is not:
            # mixing only the latter makes the fingerprint independent of the width.
            within = word != 0
            if within.all():
                mixed *= _MIX_B
                mixed ^= word
            else:
                mixed = np.where(within, (mixed * _MIX_B) ^ word, mixed)
        mixed *= _MIX_A
    return mixed


def qrels_columns(qrels: Qrels) -> tuple[Coded, Coded, dict[str, np.ndarray]]:
    """(query_id, doc_id, numeric columns by name, relevance among them)."""
    if isinstance(qrels, PlainQrels):
        return qrels.query_id, qrels.doc_id, qrels.columns
    import pyarrow as pa

    table = _arrow_table(qrels)
    numeric = {
        field.name: np.asarray(table.column(field.name).to_numpy())
        for field in table.schema
        if field.name not in ("query_id", "doc_id")
        and (pa.types.is_integer(field.type) or pa.types.is_floating(field.type))
    }
    return coded(table.column("query_id")), coded(table.column("doc_id")), numeric


def arrow_runs(runs: Sequence[Run]) -> list[pa.Table] | None:
    """The runs as Arrow tables of query_id, doc_id, score, run_id, or None when every
    run is plain (then the scorer needs no Arrow)."""
    if all(isinstance(run, PlainRun) for run in runs):
        return None
    import pyarrow as pa

    columns = ["query_id", "doc_id", "score", "run_id"]
    return [
        pa.table(
            {
                "query_id": pa.array(decoded(run.query_id), pa.string()),
                "doc_id": pa.array(decoded(run.doc_id), pa.string()),
                "score": pa.array(run.score, pa.float64()),
                "run_id": pa.array([run.run_id] * len(run.score), pa.string()),
            }
        )
        if isinstance(run, PlainRun)
        else _arrow_table(run).select(columns)
        for run in runs
    ]


def _arrow_table(frame: pa.Table | pd.DataFrame) -> pa.Table:
    import pyarrow as pa

    if isinstance(frame, pa.Table):
        return frame
    return pa.Table.from_pandas(frame, preserve_index=False)


class Vocabulary:
    """Strings, and the code of any string: the position of one of its copies
    among them, always the same one.

    The values are an Arrow string array or a bytes array, and may repeat a
    string (a plain column is its own vocabulary: `coded`). Strings of the
    other kind are looked up too, converted.
    """

    def __init__(self, values: np.ndarray | pa.Array) -> None:
        self._values = values
        self._plain: np.ndarray | None = values if isinstance(values, np.ndarray) else None
        self._index: _FingerprintIndex | None = None
        self._arrow: tuple[pa.Array, np.ndarray | None] | None = None

    def __len__(self) -> int:
        return len(self._values)

    @property
    def raw(self) -> np.ndarray | pa.Array:
        """The values as given: a bytes array or an Arrow array."""
        return self._values

    def like(self, values: list[str]) -> Vocabulary:
        """A vocabulary of `values` of the same kind as this one (Arrow strings may
        hold a NUL, which a bytes array cannot)."""
        if isinstance(self._values, np.ndarray):
            return Vocabulary(plain_strings(values))
        import pyarrow as pa

        return Vocabulary(pa.array(values, pa.string()))

    @property
    def values(self) -> list[str]:
        values = self._values
        return decoded(values) if isinstance(values, np.ndarray) else values.to_pylist()

    def codes(self, strings: Strings, *, in_runs: bool = False) -> np.ndarray:
        """The code of each string, -1 for a string not among the values. `in_runs`:
        equal strings mostly come together (a file's topics): look up each run once."""
        if not isinstance(strings, np.ndarray):
            return self._arrow_codes(strings)
        starts = _run_starts(strings) if in_runs else None
        if starts is not None:
            found = self._plain_codes(strings[starts])
            return np.repeat(found, np.diff(starts, append=len(strings)))
        return self._plain_codes(strings)

    def _plain_codes(self, strings: np.ndarray) -> np.ndarray:
        index = self._fingerprint_index()
        return index.own_codes() if strings is index.values else index.find(strings)

    def _fingerprint_index(self) -> _FingerprintIndex:
        if self._index is None:
            if self._plain is None:
                self._plain = plain_strings(self.values)
            self._index = _FingerprintIndex(self._plain)
        return self._index

    def _arrow_codes(self, strings: pa.Array | pa.ChunkedArray) -> np.ndarray:
        if self._arrow is None:
            import pyarrow as pa

            if isinstance(self._values, np.ndarray):  # distinct values, and their codes
                first = np.flatnonzero(self._plain_codes(self._values) == np.arange(len(self)))
                distinct = pa.array(decoded(self._values[first]), pa.string())
                self._arrow = (distinct, first)
            else:
                self._arrow = (self._values, None)
        dictionary, code_of = self._arrow
        found = _arrow_codes(strings, dictionary)
        return found if code_of is None else np.where(found >= 0, code_of[found], -1)


class _FingerprintIndex:
    """Where a copy of each string of a bytes array is, found by its fingerprint."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values
        mixed = fingerprints(values)
        # Among equal fingerprints the order is arbitrary: the code of a string is
        # the row of the first of its fingerprints in sorted order, the same for all.
        self.order = np.argsort(mixed)
        self.sorted = mixed[self.order]
        # A bitmap of the fingerprints' top bits, 64 bits a value: most strings
        # looked up (a run's docnos, mostly unjudged) are ruled out by one read.
        bits = min(max((64 * len(values)).bit_length(), 10), 24)
        self.shift = np.uint64(64 - bits)
        self.present = np.zeros(1 << bits, dtype=bool)
        self.present[self.sorted >> self.shift] = True
        # Two different strings with one fingerprint: look them up by dictionary.
        same = self.sorted[1:] == self.sorted[:-1]
        self.collided = bool(np.any(same & (values[self.order[1:]] != values[self.order[:-1]])))
        self.first: dict[bytes, int] = {}
        if self.collided:
            for code, value in enumerate(values.tolist()):
                self.first.setdefault(value, code)

    def own_codes(self) -> np.ndarray:
        """find(self.values), without finding them again."""
        if self.collided:
            return self.find(self.values)
        first = np.r_[True, self.sorted[1:] != self.sorted[:-1]]
        codes = np.empty(len(self.values), dtype=np.int64)
        codes[self.order] = self.order[np.flatnonzero(first)][np.cumsum(first) - 1]
        return codes

    def find(self, strings: np.ndarray) -> np.ndarray:
        if self.collided:
            get = self.first.get
            return np.fromiter((get(s, -1) for s in strings.tolist()), np.int64, len(strings))
        if not len(self.values):
            return np.full(len(strings), -1, dtype=np.int64)
        wanted = fingerprints(strings)
        maybe = np.flatnonzero(self.present[wanted >> self.shift])
        wanted = wanted[maybe]
        at = np.minimum(np.searchsorted(self.sorted, wanted), len(self.sorted) - 1)
        code = self.order[at]
        found = (self.sorted[at] == wanted) & (self.values[code] == strings[maybe])
        codes = np.full(len(strings), -1, dtype=np.int64)
        codes[maybe[found]] = code[found]
        return codes


def _run_starts(strings: np.ndarray) -> np.ndarray | None:
    """Where each run of equal strings starts, when the runs are long (a run
    file's topics, a qrels file's): None when that would not save lookups."""
    if len(strings) < 64:
        return None
    starts = np.flatnonzero(np.r_[True, strings[1:] != strings[:-1]])
    return starts if len(starts) * 8 <= len(strings) else None


def _arrow_codes(values: pa.Array | pa.ChunkedArray, dictionary: pa.Array) -> np.ndarray:
    """Index of each value in `dictionary`, -1 where absent.

    A dictionary-encoded array is looked up once per distinct value.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(values, pa.DictionaryArray):
        distinct = _arrow_codes(values.dictionary, dictionary)
        return distinct[np.asarray(values.indices.to_numpy(), dtype=np.int64)]
    if (
        isinstance(values, pa.ChunkedArray)
        and values.num_chunks
        and all(isinstance(chunk, pa.DictionaryArray) for chunk in values.chunks)
    ):
        return np.concatenate([_arrow_codes(chunk, dictionary) for chunk in values.chunks])
    found = pc.fill_null(pc.index_in(_as_strings(values), value_set=dictionary), -1)
    return np.asarray(found.to_numpy(), dtype=np.int64)


def _as_strings(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    import pyarrow as pa

    return values if values.type == pa.string() else values.cast(pa.string())


class Coded(NamedTuple):
    """A string column as a `Vocabulary` and the code of each row in it."""

    values: Vocabulary
    codes: np.ndarray


def coded(strings: Strings, *, in_runs: bool = False) -> Coded:
    """Code a column of strings (see `Vocabulary`); `in_runs` as for `Vocabulary.codes`."""
    if isinstance(strings, np.ndarray):
        starts = _run_starts(strings) if in_runs else None
        if starts is None:
            values = Vocabulary(strings)  # its own vocabulary: no pass to find the distinct
        else:
            heads = strings[starts]
            values = Vocabulary(heads[Vocabulary(heads).codes(heads) == np.arange(len(heads))])
        return Coded(values, values.codes(strings, in_runs=in_runs))
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(_as_strings(strings))
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks() if encoded.num_chunks else pa.array([], pa.string())
        if not isinstance(encoded, pa.DictionaryArray):
            encoded = pc.dictionary_encode(encoded)
    codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return Coded(Vocabulary(encoded.dictionary), codes)


def concatenated(parts: Iterable[Strings], *, arrow: bool) -> Strings:
    """Several string columns as one (Arrow when `arrow`, else a bytes array)."""
    if not arrow:
        return np.concatenate([np.empty(0, dtype="S1"), *parts])
    import pyarrow as pa

    chunks = [
        chunk
        for part in parts
        for chunk in (part.chunks if isinstance(part, pa.ChunkedArray) else [part])
    ]
    return pa.chunked_array([_as_strings(chunk) for chunk in chunks], type=pa.string())


def filtered(strings: Strings, keep: np.ndarray) -> Strings:
    """The strings where `keep` is True."""
    if isinstance(strings, np.ndarray):
        return strings[keep]
    import pyarrow as pa

    return strings.filter(pa.array(keep))


def repeated(value: str, count: int, *, like: Strings) -> Strings:
    """`value` `count` times, as the same kind of column as `like`."""
    if isinstance(like, np.ndarray):
        encoded = value.encode()
        return np.full(count, encoded, dtype=f"S{len(encoded)}")
    import pyarrow as pa

    return pa.array([value] * count, pa.string())


def run_tag(run: Run) -> str:
    """The run's tag as trec_eval reports it: that of its last line."""
    if isinstance(run, PlainRun):
        return run.run_id
    table = _arrow_table(run)
    return str(table.column("run_id")[-1].as_py()) if table.num_rows else ""
