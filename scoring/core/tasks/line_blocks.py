"""Task files read in blocks of whole lines, so that memory does not grow with the file.

Pure core, no Django. The CodiEsp and SciFact readers take a file as a path,
its bytes or an open binary stream, and read it here a block at a time
(`BLOCK_BYTES`, cut after the last newline of the block, so no line and no
UTF-8 character is ever split): the text of each block, with the number of
its first line. What a reader keeps is what its scores need, never the
file.

- A UTF-8 byte-order mark at the start is dropped.
- Text that is not UTF-8 is reported once, at its line and column, and ends
  the reading (nothing after it can be trusted to be lines).
- `progress(done)` is called after each block with the bytes read so far.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from workbench.core.file_input import BOM
from workbench.core.problems import ProblemLog

BLOCK_BYTES = 4 * 1024 * 1024

Source = str | Path | bytes | BinaryIO
Progress = Callable[[int], None]


def source_name(source: Source, name: str | None) -> str:
    """The name a source's problems give: `name`, else its path, else a placeholder."""
    if name:
        return name
    if isinstance(source, str | Path):
        return str(source)
    return getattr(source, "name", None) or "<bytes>"


def source_size(source: Source) -> int | None:
    """The size in bytes, where it is known without reading."""
    if isinstance(source, bytes):
        return len(source)
    if isinstance(source, str | Path):
        return Path(source).stat().st_size
    size = getattr(source, "size", None)
    return size if isinstance(size, int) else None


@contextmanager
def opened(source: Source) -> Iterator[BinaryIO]:
    """A binary stream over the source, from its start; a path is closed afterwards,
    a stream the caller gave is left open."""
    if isinstance(source, bytes):
        yield io.BytesIO(source)
    elif isinstance(source, str | Path):
        with Path(source).open("rb") as stream:
            yield stream
    else:
        if source.seekable():
            source.seek(0)
        yield source


@dataclass(frozen=True)
class Block:
    """Whole lines of a file: `text` (each line ended by a newline, the file's last
    line too) and the number of its first line."""

    first_line: int
    text: str


def blocks(
    source: Source,
    log: ProblemLog,
    *,
    size: int | None = None,
    progress: Progress | None = None,
) -> Iterator[Block]:
    """The file's lines a block at a time (see the module docstring); `size` bytes
    are read at a time (default `BLOCK_BYTES`)."""
    size = size or BLOCK_BYTES
    line, done, carry = 1, 0, b""
    with opened(source) as stream:
        for read, chunk in _chunks(stream, size):
            done += read
            data = carry + chunk
            cut = data.rfind(b"\n") + 1
            if cut == 0:  # no line ends in it yet (a line longer than a block): read on
                carry = data
                continue
            data, carry = data[:cut], data[cut:]
            text = _decoded(data, line, log)
            if text is None:
                return
            yield Block(line, text)
            line += text.count("\n")
            if progress is not None:
                progress(done)
    if carry:  # the last line, without its newline
        text = _decoded(carry + b"\n", line, log)
        if text is not None:
            yield Block(line, text)
            if progress is not None:
                progress(done)


def _chunks(stream: BinaryIO, size: int) -> Iterator[tuple[int, bytes]]:
    """The stream's bytes, `size` at a time (with how many were read), without a
    byte-order mark at the start."""
    first = stream.read(size)
    while first and len(first) < len(BOM) and BOM.startswith(first):
        more = stream.read(size)  # too short to tell yet (a pipe's first few bytes)
        if not more:
            break
        first += more
    if first:
        yield len(first), first.removeprefix(BOM)
    while chunk := stream.read(size):
        yield len(chunk), chunk


def _decoded(data: bytes, line: int, log: ProblemLog) -> str | None:
    """The block's text; None, with the problem logged, when it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        where = line + data.count(b"\n", 0, error.start)
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        log.add(where, f"not UTF-8 (byte 0x{data[error.start]:02x} at column {column})")
        return None
