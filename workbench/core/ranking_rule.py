"""The decided ranking rule, written once. Pure core: NumPy, no Django, no pandas.

Inside one group (one topic of one run) documents are ranked by score
descending, scores compared as doubles, then by docno descending in byte
order; the rank column of a run file is ignored (design.md; trec_eval 10.0's
rule). The pooler (`pooling.core.ranking`) and the scorer
(`scoring.core.measures.rankings`) both rank with `rank_order`, and
tests/workbench/core/test_ranking_rule.py checks that they rank every generated run
alike.

Callers encode their groups as integer codes; the ranked order lists the
groups by code, ascending. Docnos are an Arrow string array (the pooler's
tables and the scorer's Arrow input: pyarrow, loaded by the caller already,
sorts the tied docnos), a NumPy bytes array (`S`, UTF-8 without NUL: the
scorer's plain input) or a NumPy array of `str` (Python compares str by code
point, which is the byte order of their UTF-8).
Scores must not be NaN (every reader refuses them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

type Docnos = np.ndarray | pa.Array | pa.ChunkedArray


class RankOrder(NamedTuple):
    """The ranked rows: `order` lists row indices by group code, then rank;
    `rank` is the 1-based rank of each of those rows within its group (int64)."""

    order: np.ndarray
    rank: np.ndarray


def rank_order(
    group: np.ndarray, score: np.ndarray, doc_id: Docnos, *, max_depth: int | None = None
) -> RankOrder:
    """Rank every group by the decided rule; keep only ranks <= max_depth if given.

    group: int64 code of each row's group; score: float64; doc_id: the docnos
    (see the module docstring). Each docno is expected at most once per group
    (the readers check it). Cutting at max_depth keeps memory and the
    tie-breaking work proportional to what the caller keeps.
    """
    group = np.asarray(group, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    if max_depth is not None and max_depth < 0:
        raise ValueError(f"max_depth must be at least 0, not {max_depth}")
    n = len(group)
    pieces = _pieces_in_score_order(group, score)
    if pieces is None:
        # Sort the rows, by score descending, then (stably) by group.
        by_score = np.argsort(-score, kind="stable")
        order = by_score[np.argsort(_small_codes(group[by_score]), kind="stable")]
        group, score = group[order], score[order]
    else:
        # Run files nearly always list each topic's documents together, best
        # first: rank in file order, and put the groups in order at the end.
        order = np.arange(n)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]]) if n else np.empty(0, int)
    rank = np.arange(1, n + 1) - np.repeat(starts, np.diff(starts, append=n))
    # Breaking a tie only reorders rows inside their block of equal scores,
    # so the ranks stand; and only blocks starting within max_depth matter.
    needed = None if max_depth is None else rank <= max_depth
    blocks = _tied_blocks(group, score, needed)
    if len(blocks.positions):
        order = _break_ties_by_docno(order, blocks, doc_id)
    if pieces is not None and not np.all(pieces[1:] > pieces[:-1]):
        # Each group is one piece of rows: order the pieces by group code.
        by_code = np.argsort(pieces, kind="stable")
        lengths = np.diff(starts, append=n)[by_code]
        moved = np.repeat(starts[by_code] - (np.cumsum(lengths) - lengths), lengths)
        moved += np.arange(n)
        order, rank = order[moved], rank[moved]
        if needed is not None:
            needed = needed[moved]
    if needed is not None:
        order, rank = order[needed], rank[needed]
    return RankOrder(order, rank)


def _pieces_in_score_order(group: np.ndarray, score: np.ndarray) -> np.ndarray | None:
    """The group code of each piece of consecutive rows of one group, when every
    group is one piece and lists its rows by score descending; else None."""
    same_group = group[1:] == group[:-1]
    if np.any(same_group & (score[1:] > score[:-1])):
        return None
    heads = group[np.flatnonzero(np.r_[True, ~same_group])] if len(group) else group
    if np.all(heads[1:] > heads[:-1]):
        return heads
    ordered = np.sort(heads)  # (np.unique would load numpy.ma: 10 ms of start-up)
    if not np.any(ordered[1:] == ordered[:-1]):
        return heads
    return None


def _small_codes(group: np.ndarray) -> np.ndarray:
    """The group codes in the smallest unsigned type that holds them: NumPy sorts
    16-bit keys stably by radix, several times faster than 64-bit ones."""
    low = int(group.min(initial=0))
    span = int(group.max(initial=0)) - low
    return (group - low).astype(np.uint16) if span < 1 << 16 else group


class _TiedBlocks(NamedTuple):
    """Blocks of equal (group, score) in sorted order: each block's sorted
    positions, and the block number of each position."""

    positions: np.ndarray
    block: np.ndarray


def _tied_blocks(
    sorted_group: np.ndarray, sorted_score: np.ndarray, needed: np.ndarray | None
) -> _TiedBlocks:
    """The blocks of two or more rows with equal (group, score) that start
    at a `needed` position (None: any), with every row of each (even past the cut).

    With a cut, looks only at the needed rows and the rows that continue a
    block past them, not at the whole run.
    """
    n = len(sorted_group)

    def tied_with_next(positions: np.ndarray) -> np.ndarray:
        following = positions + 1
        return (sorted_group[positions] == sorted_group[following]) & (
            sorted_score[positions] == sorted_score[following]
        )

    if needed is None:
        # p such that rows p and p+1 tie
        tied = np.flatnonzero(
            (sorted_group[1:] == sorted_group[:-1]) & (sorted_score[1:] == sorted_score[:-1])
        )
    else:
        candidates = np.flatnonzero(needed[:-1])
        tied = candidates[tied_with_next(candidates)]
        # A block crossing the cut goes on past it: follow it row by row.
        frontier = tied[~needed[tied + 1]] + 1
        extensions = []
        while len(frontier):
            frontier = frontier[frontier < n - 1]
            frontier = frontier[tied_with_next(frontier)]
            extensions.append(frontier)
            frontier = frontier + 1
        tied = np.sort(np.concatenate([tied, *extensions])) if extensions else tied
    if not len(tied):
        empty = np.empty(0, dtype=np.int64)
        return _TiedBlocks(empty, empty)
    # Chains of consecutive tied pairs are the blocks: pair p covers rows p, p+1.
    chain_start = np.r_[True, tied[1:] != tied[:-1] + 1]
    first = tied[chain_start]
    last = np.r_[tied[np.flatnonzero(chain_start)[1:] - 1], tied[-1]] + 1
    sizes = last - first + 1
    block = np.repeat(np.arange(len(first)), sizes)
    offset_in_block = np.arange(len(block)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return _TiedBlocks(np.repeat(first, sizes) + offset_in_block, block)


def _break_ties_by_docno(order: np.ndarray, blocks: _TiedBlocks, doc_id: Docnos) -> np.ndarray:
    """Reorder the rows of each tied block by docno descending, in byte order.

    Most blocks are two rows (runs print a few decimals): those are swapped
    where the second docno is the greater, with one comparison each; the
    rest are sorted.
    """
    order = order.copy()
    sizes = np.bincount(blocks.block)
    pair = sizes[blocks.block] == 2
    first = blocks.positions[pair][0::2]
    if len(first):
        upper, lower = order[first], order[first + 1]
        swap = _docno_less(doc_id, upper, lower)
        order[first[swap]], order[first[swap] + 1] = lower[swap], upper[swap]
    if np.all(pair):
        return order
    positions = blocks.positions[~pair]
    block = np.cumsum(np.r_[True, blocks.block[~pair][1:] != blocks.block[~pair][:-1]]) - 1
    tied_rows = order[positions]
    order[positions] = tied_rows[_by_block_then_docno_descending(block, doc_id, tied_rows)]
    return order


def _docno_less(doc_id: Docnos, rows: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Whether each row's docno comes before the other row's, in byte order."""
    if isinstance(doc_id, np.ndarray):
        return np.asarray(doc_id[rows] < doc_id[others])
    import pyarrow as pa
    import pyarrow.compute as pc

    less = pc.less(doc_id.take(pa.array(rows)), doc_id.take(pa.array(others)))
    return np.asarray(less.to_numpy(zero_copy_only=False), dtype=bool)


def _by_block_then_docno_descending(
    block: np.ndarray, doc_id: Docnos, rows: np.ndarray
) -> np.ndarray:
    """The order of `rows` by block, then docno descending in byte order."""
    if isinstance(doc_id, np.ndarray) and doc_id.dtype.kind == "S":
        # NUL-padded bytes: their big-endian 8-byte words sort in byte order, and
        # integers sort several times faster than strings. Descending: sort ~word.
        docnos = doc_id[rows]
        width = -(-docnos.dtype.itemsize // 8) * 8
        padded = np.zeros((len(docnos), width), dtype=np.uint8)
        padded[:, : docnos.dtype.itemsize] = docnos.view(np.uint8).reshape(len(docnos), -1)
        words = ~padded.view(">u8")
        return np.lexsort((*words.T[::-1], block))
    if isinstance(doc_id, np.ndarray):
        _, docno_rank = np.unique(doc_id[rows], return_inverse=True)
        return np.lexsort((-docno_rank.ravel(), block))
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.sort_indices(
        pa.table({"block": block, "doc_id": doc_id.take(pa.array(rows))}),
        sort_keys=[("block", "ascending"), ("doc_id", "descending")],
    ).to_numpy()
