"""Task files read in blocks of whole lines: the same lines, numbers and problems
whatever the block size, from a path, bytes or an open stream."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.core.tasks import line_blocks
from workbench.core.problems import ProblemLog


def _read(data: bytes, size: int) -> tuple[list[tuple[int, str]], list[str], list[int]]:
    """(line number, line) of every line, the problems, and the progress reported."""
    log = ProblemLog("f.tsv")
    progress: list[int] = []
    lines = []
    for block in line_blocks.blocks(data, log, size=size, progress=progress.append):
        assert block.text.endswith("\n")
        for offset, line in enumerate(block.text.split("\n")[:-1]):
            lines.append((block.first_line + offset, line))
    return lines, [str(problem) for problem in log.sorted()], progress


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="ab\t\r\né€", max_size=60),
    size=st.integers(1, 20),
    bom=st.booleans(),
)
def test_blocks_of_any_size_give_the_files_lines_and_numbers(text, size, bom):
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    lines, problems, progress = _read(data, size)
    expected = text.split("\n")
    if expected[-1] == "":  # the file ends with a newline: no further line
        expected.pop()
    assert lines == list(enumerate(expected, start=1))
    assert problems == []
    assert progress == sorted(progress)
    assert not progress or progress[-1] == len(data)


@pytest.mark.parametrize("size", [1, 3, 7, 64])
def test_text_that_is_not_utf8_is_reported_at_its_line_and_column_and_ends_the_reading(size):
    lines, problems, _ = _read(b"a\tb\nc\td\nxy\xffz\nlast\n", size)
    assert problems == ["f.tsv:3: not UTF-8 (byte 0xff at column 3)"]
    assert (3, "xy\ufffdz") not in lines
    assert (4, "last") not in lines


def test_a_line_longer_than_a_block_is_read_whole():
    long = "x" * 100
    lines, _, _ = _read(f"{long}\nb\n".encode(), 8)
    assert lines == [(1, long), (2, "b")]


def test_a_stream_is_read_from_its_start_and_left_open(tmp_path):
    stream = io.BytesIO(b"a\nb")
    stream.read(1)
    log = ProblemLog("f")
    assert [block.text for block in line_blocks.blocks(stream, log, size=2)] == ["a\n", "b\n"]
    assert not stream.closed
    path = tmp_path / "f.tsv"
    path.write_bytes(b"a\nb\n")
    assert [block.text for block in line_blocks.blocks(path, log)] == ["a\nb\n"]
    assert (line_blocks.source_size(path), line_blocks.source_size(b"abc")) == (4, 3)
    assert line_blocks.source_name(path, None) == str(path)
