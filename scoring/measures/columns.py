"""The scorer's input frames: Arrow, pandas or plain NumPy columns. Pure core.

The scorer reads qrels and runs from three kinds of frames:

- Arrow tables: what the readers return (`pooling.run_files.read_run`,
  `scoring.qrels.read_qrels_table`);
- pandas frames: `scoring.qrels.read_qrels`, and the frames the web builds;
- plain columns, `PlainQrels` and `PlainRun`: what `scoring.plain_files`
  reads from small, well-formed files with Python and NumPy alone, so that
  the command line scores them without loading pyarrow or pandas.

Strings are then Arrow string arrays or NumPy arrays of `str`; `Vocabulary`
and the functions here do what the scorer does with them (codes, filter,
concatenate) either way, and import pyarrow only for Arrow input.

Frame columns: qrels have query_id, doc_id, relevance and maybe more
integer or float columns; runs have query_id, doc_id, score, run_id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import count, repeat
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

type Strings = np.ndarray | pa.Array | pa.ChunkedArray


@dataclass(frozen=True)
class PlainQrels:
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
            coded(_object_array(query_id)),
            coded(_object_array(doc_id)),
            {name: np.asarray(values, dtype=np.int64) for name, values in columns.items()},
        )


@dataclass(frozen=True)
class PlainRun:
    """One run as plain columns, in file order.

    query_id, doc_id: NumPy arrays of str; score: float64; run_id: the tag
    trec_eval reports, that of the last line.
    """

    query_id: np.ndarray
    doc_id: np.ndarray
    score: np.ndarray
    run_id: str


type Qrels = PlainQrels | pa.Table | pd.DataFrame
type Run = PlainRun | pa.Table | pd.DataFrame


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
                "query_id": pa.array(run.query_id, pa.string()),
                "doc_id": pa.array(run.doc_id, pa.string()),
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
    """Distinct strings in a fixed order, and the code (position) of any string among them."""

    def __init__(self, values: list[str] | pa.Array) -> None:
        self._values = values
        self._positions: dict[str, int] | None = None
        self._arrow: pa.Array | None = None

    def __len__(self) -> int:
        return len(self._values)

    @property
    def values(self) -> list[str]:
        values = self._values
        return values if isinstance(values, list) else list(values.to_pylist())

    def codes(self, strings: Strings) -> np.ndarray:
        """The code of each string, -1 for a string not among the values."""
        if isinstance(strings, np.ndarray):
            if self._positions is None:
                self._positions = dict(zip(self.values, count(), strict=False))
            starts = _run_starts(strings)
            if starts is not None:  # look up the first string of each run of equal ones
                heads = self._plain_codes(strings[starts])
                return np.repeat(heads, np.diff(starts, append=len(strings)))
            return self._plain_codes(strings)
        if self._arrow is None:
            import pyarrow as pa

            values = self._values
            self._arrow = pa.array(values, pa.string()) if isinstance(values, list) else values
        return _arrow_codes(strings, self._arrow)

    def _plain_codes(self, strings: np.ndarray) -> np.ndarray:
        assert self._positions is not None
        found = map(self._positions.get, strings.tolist(), repeat(-1))
        return np.fromiter(found, np.int64, len(strings))


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


@dataclass(frozen=True)
class Coded:
    """A string column as its distinct values, in order of first appearance,
    and the code of each row among them (what dictionary encoding gives)."""

    values: Vocabulary
    codes: np.ndarray


def coded(strings: Strings) -> Coded:
    """Dictionary-encode a column of strings."""
    if isinstance(strings, np.ndarray):
        starts = _run_starts(strings)
        heads = strings if starts is None else strings[starts]
        values = Vocabulary(list(dict.fromkeys(heads.tolist())))
        return Coded(values, values.codes(strings))
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(_as_strings(strings))
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks() if encoded.num_chunks else pa.array([], pa.string())
        if not isinstance(encoded, pa.DictionaryArray):
            encoded = pc.dictionary_encode(encoded)
    codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return Coded(Vocabulary(encoded.dictionary), codes)


def _object_array(values: Sequence[str]) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    array[:] = list(values)
    return array


def concatenated(parts: Iterable[Strings], *, arrow: bool) -> Strings:
    """Several string columns as one (Arrow when `arrow`, else a NumPy array of str)."""
    if not arrow:
        return np.concatenate([np.empty(0, dtype=object), *parts])
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
        return np.full(count, value, dtype=object)
    import pyarrow as pa

    return pa.array([value] * count, pa.string())


def run_tag(run: Run) -> str:
    """The run's tag as trec_eval reports it: that of its last line."""
    if isinstance(run, PlainRun):
        return run.run_id
    table = _arrow_table(run)
    return str(table.column("run_id")[-1].as_py()) if table.num_rows else ""
