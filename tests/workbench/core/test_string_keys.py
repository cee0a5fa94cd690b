import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from workbench.core.string_keys import byte_words, fingerprints, sort_words

# Short alphabets make equal strings, common prefixes and NUL bytes likely.
docnos = st.text("ab\x00\u00e9\U0001f600", max_size=20)


def test_byte_words_splits_each_string_into_zero_padded_little_endian_words():
    words, lengths = byte_words(pa.array(["", "ab", "abcdefghi"]))
    assert lengths.tolist() == [0, 2, 9]
    assert words.shape == (2, 3)
    assert words[:, 0].tolist() == [0, 0]
    assert words[:, 1].tolist() == [int.from_bytes(b"ab", "little"), 0]
    assert words[:, 2].tolist() == [int.from_bytes(b"abcdefgh", "little"), ord("i")]


def test_byte_words_reads_sliced_chunked_and_large_arrays():
    values = ["x1", "y22", "z333", "w4444"]
    expected = byte_words(pa.array(values[1:3]))
    for strings in (
        pa.array(values).slice(1, 2),
        pa.chunked_array([["y22"], ["z333"]]),
        pa.array(values[1:3], pa.large_string()),
        pa.array([v.encode() for v in values[1:3]], pa.binary()),
    ):
        words, lengths = byte_words(strings)
        assert np.array_equal(words, expected[0])
        assert np.array_equal(lengths, expected[1])


def test_byte_words_refuses_strings_longer_than_the_limit():
    assert byte_words(pa.array(["a" * 9]), max_bytes=8) is None
    assert byte_words(pa.array(["a" * 8]), max_bytes=8) is not None


def test_byte_words_of_an_empty_array():
    words, lengths = byte_words(pa.array([], pa.string()))
    assert words.shape == (1, 0)
    assert lengths.shape == (0,)


@given(st.lists(docnos, max_size=30))
def test_equal_words_mean_equal_strings(values):
    words, lengths = byte_words(pa.array(values, pa.string()))
    rows = {(*words[:, i].tolist(), lengths[i]) for i in range(len(values))}
    assert len(rows) == len(set(values))


@given(st.lists(st.tuples(st.integers(0, 3), docnos), max_size=30))
def test_equal_pairs_get_equal_fingerprints(pairs):
    group = np.array([g for g, _ in pairs], dtype=np.int64)
    mixed = fingerprints(group, pa.array([d for _, d in pairs], pa.string()))
    for i, left in enumerate(pairs):
        for j, right in enumerate(pairs):
            if left == right:
                assert mixed[i] == mixed[j]


def test_fingerprints_tell_apart_pairs_that_differ_in_group_or_string():
    mixed = fingerprints(np.array([0, 1, 0, 0]), pa.array(["d1", "d1", "d2", "d1\x00"]))
    assert len(set(mixed.tolist())) == 4


@given(st.lists(docnos, max_size=30))
def test_sort_words_order_is_byte_order(values):
    keys = sort_words(pa.array(values, pa.string()))
    order = np.lexsort(keys[::-1]) if values else np.array([], dtype=np.int64)
    assert [values[i] for i in order] == sorted(values, key=lambda v: v.encode())


@given(st.lists(st.binary(min_size=11, max_size=11), min_size=1, max_size=30))
def test_equal_length_strings_give_the_same_words_as_mixed_lengths(values):
    # All 11 bytes long: the block path. With a longer string after them
    # (sliced off again): the path reading each word at the string's start.
    fixed = byte_words(pa.array(values, pa.binary()))
    mixed = byte_words(pa.array([*values, b"x" * 12], pa.binary()))
    assert np.array_equal(fixed[0], mixed[0][:, : len(values)])
    sliced = byte_words(pa.array([b"x" * 12, *values], pa.binary()).slice(1))
    assert np.array_equal(fixed[0], sliced[0])
