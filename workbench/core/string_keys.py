"""Fixed-width integer keys for Arrow string arrays. Pure core, no Django.

Hashing or sorting strings one by one is the slow part of checking and
pooling runs. Short strings such as docnos fit in a few 64-bit words, and
NumPy works on words many times faster than Arrow compares strings:

- `byte_words` cuts every string into 8-byte words (zero past its end),
  reading them straight from the Arrow data buffer without a copy per value;
- `fingerprints` mixes the words of (group, string) pairs into one uint64
  per row: equal pairs always get equal fingerprints, so distinct
  fingerprints prove distinct pairs;
- `sort_words` turns the words into keys whose order is the strings' byte
  order, for `numpy.lexsort` or an Arrow sort on integer columns.

Strings longer than `max_bytes` are refused (None), so callers keep an
exact string path for them.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

MAX_BYTES = 64  # longer strings cost more words than hashing them directly

# _TAIL_MASKS[n] keeps the first n bytes of a little-endian word (n = 0..8).
_TAIL_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [2**64 - 1], dtype=np.uint64)
_MIX_A = np.uint64(0x9E3779B97F4A7C15)
_MIX_B = np.uint64(0xC2B2AE3D27D4EB4F)


def value_bytes(strings: pa.Array) -> np.ndarray:
    """Every byte of a string or binary array's values, end to end, as one uint8
    array read from its data buffer (no copy)."""
    large = pa.types.is_large_string(strings.type) or pa.types.is_large_binary(strings.type)
    _, offsets_buffer, data_buffer = strings.buffers()
    if not len(strings) or data_buffer is None:
        return np.empty(0, dtype=np.uint8)
    count = strings.offset + len(strings) + 1
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64 if large else np.int32, count=count)
    start, end = int(offsets[strings.offset]), int(offsets[strings.offset + len(strings)])
    return np.frombuffer(data_buffer, dtype=np.uint8, count=end - start, offset=start)


def byte_words(
    strings: pa.Array | pa.ChunkedArray, *, max_bytes: int = MAX_BYTES
) -> tuple[np.ndarray, np.ndarray] | None:
    """(words, lengths) of a string or binary array without nulls.

    words has shape (w, n), w = ceil(longest / 8), at least 1: words[k, i]
    holds bytes 8k to 8k+7 of string i as a little-endian uint64, with zeros
    past the end of the string. lengths holds the byte lengths (int64).
    Two strings are equal exactly when their lengths and words are. Returns
    None when a string is longer than `max_bytes`.
    """
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks() if strings.num_chunks != 1 else strings.chunk(0)
    large = pa.types.is_large_string(strings.type) or pa.types.is_large_binary(strings.type)
    offset_type = np.int64 if large else np.int32
    _, offsets_buffer, data_buffer = strings.buffers()
    n = len(strings)
    offsets = np.frombuffer(
        offsets_buffer,
        dtype=offset_type,
        count=n + 1,
        offset=strings.offset * np.dtype(offset_type).itemsize,
    ).astype(np.int64)
    lengths = np.diff(offsets)
    longest = int(lengths.max(initial=0))
    if longest > max_bytes:
        return None
    n_words = max(1, -(-longest // 8))
    if n and int(lengths.min()) == longest:
        return _fixed_width_words(data_buffer, int(offsets[0]), n, longest, n_words), lengths
    end = int(offsets[-1]) if n else 0
    # Eight zero bytes after the data, so that a word read at the last
    # string's start never runs past the buffer.
    data = np.zeros(end + 8, dtype=np.uint8)
    if end:
        data[:end] = np.frombuffer(data_buffer, dtype=np.uint8, count=end)
    # Every byte position as the start of an (unaligned) little-endian word.
    windows = np.ndarray(shape=(end + 1,), dtype="<u8", buffer=data, strides=(1,))
    starts = offsets[:-1]
    words = np.empty((n_words, n), dtype=np.uint64)
    for k in range(len(words)):
        # Reads past a string's end see the next string's bytes: mask them.
        remaining = np.clip(lengths - 8 * k, 0, 8)
        words[k] = windows[np.minimum(starts + 8 * k, end)] & _TAIL_MASKS[remaining]
    return words, lengths


def _fixed_width_words(
    data_buffer: pa.Buffer, start: int, n: int, width: int, n_words: int
) -> np.ndarray:
    """byte_words' words when every string is `width` bytes long (docnos
    often are): the data is an n x width block, padded with one copy
    instead of gathering each word."""
    block = np.frombuffer(data_buffer, dtype=np.uint8, count=n * width, offset=start)
    padded = np.zeros((n, n_words * 8), dtype=np.uint8)
    padded[:, :width] = block.reshape(n, width)
    return np.ascontiguousarray(padded.view("<u8").T)


def fingerprints(group: np.ndarray, strings: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """One uint64 per row mixing its group code and its string's bytes.

    Equal (group, string) pairs always get equal fingerprints; different
    pairs nearly always different ones, so a repeated fingerprint means
    "check exactly". None when `byte_words` refuses the strings.
    """
    split = byte_words(strings)
    if split is None:
        return None
    words, lengths = split
    with np.errstate(over="ignore"):
        mixed = (group.astype(np.uint64) * _MIX_A) ^ lengths.astype(np.uint64)
        for word in words:
            mixed = (mixed * _MIX_B) ^ word
        mixed *= _MIX_A
    return mixed


def sort_words(strings: pa.Array | pa.ChunkedArray) -> list[np.ndarray] | None:
    """Integer columns whose lexicographic order is the strings' byte order.

    Most significant first: the words read big-endian (zero padding sorts a
    prefix before its extensions), then the length (so "a" sorts before
    "a\\0"). None when `byte_words` refuses the strings.
    """
    split = byte_words(strings)
    if split is None:
        return None
    words, lengths = split
    return [*words.byteswap(), lengths]
