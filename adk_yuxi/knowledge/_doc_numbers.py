"""The document numbers of a segment's postings: 2 bytes each, 1 for a common term's.

A segment's postings are runs of local document numbers (``uint16``), one run per term
in two ascending parts (frequency above 1 first). Most postings belong to a few
thousand common terms, which occur in most blocks of 256 documents: for those, each
part is stored as how many of its numbers fall in each block (a byte a block) and each
number's low byte. A term is stored so when its postings are at least four times the
blocks (the block counts then cost at most half of what they save), and no block holds
256 of one part.
"""

from __future__ import annotations

import bisect

import numpy as np
import numpy.typing as npt

__all__ = ["DocNumbers"]

Ints = npt.NDArray[np.int64]
Docs = npt.NDArray[np.integer]
_BLOCK_BITS = 8


class DocNumbers:
    """Immutable. ``run(row, start, end)``: term ``row``'s numbers (postings
    ``start:end``); ``all()``: every posting's, in storage order."""

    __slots__ = ("_at", "bases", "before", "counts", "low", "rows", "total", "wide")

    def __init__(self, docs: Docs, indptr: Ints, n_multi: Ints, n_docs: int) -> None:
        """From every posting's number, each term's offsets and count of postings with a
        frequency above 1."""
        n_blocks = max(1, -(-n_docs >> _BLOCK_BITS))
        self.bases = np.tile(np.arange(n_blocks, dtype=np.uint16) << _BLOCK_BITS, 2)
        df = np.diff(indptr)
        rows, counts = [], []
        common = df >= 4 * n_blocks if n_docs <= 1 << 16 else np.zeros(0, bool)  # (uint16)
        for row in np.flatnonzero(common).tolist():
            start, end = int(indptr[row]), int(indptr[row + 1])
            split = start + int(n_multi[row])
            parts = [
                np.bincount(docs[a:b] >> _BLOCK_BITS, minlength=n_blocks)
                for a, b in ((start, split), (split, end))
            ]
            if max(int(p.max()) for p in parts) < 256:
                rows.append(row)
                counts.extend(parts)
        self.rows: list[int] = rows
        self._at = {row: at for at, row in enumerate(rows)}
        self.total = len(docs)
        if not rows:
            self.wide, self.low = docs, np.zeros(0, np.uint8)
            self.counts = np.zeros((0, n_blocks), np.uint8)
            self.before = [0]
            return
        self.counts = np.array(counts, dtype=np.uint8)
        narrow = np.zeros(len(docs) + 1, dtype=np.int8)
        picked = np.array(rows, dtype=np.int64)
        np.add.at(narrow, indptr[picked], 1)
        np.add.at(narrow, indptr[picked + 1], -1)
        is_low = np.cumsum(narrow[:-1], dtype=np.int8).view(bool)
        self.low = (docs[is_low] & 0xFF).astype(np.uint8)
        self.wide = docs[~is_low]
        self.before = [0, *np.cumsum(df[picked]).tolist()]  # low numbers before each

    @property
    def nbytes(self) -> int:
        return self.wide.nbytes + self.low.nbytes + self.counts.nbytes + 16 * len(self.rows)

    def run(self, row: int, start: int, end: int) -> Docs:
        at = self._at.get(row)
        if at is None:
            shift = self.before[bisect.bisect_left(self.rows, row)]
            return self.wide[start - shift : end - shift]
        high = np.repeat(self.bases, self.counts[2 * at : 2 * at + 2].ravel())
        high |= self.low[self.before[at] : self.before[at + 1]]
        return high

    def all(self, indptr: Ints) -> Docs:
        """Every posting's number (built on each call); ``indptr``: the terms' offsets."""
        if not self.rows:
            return self.wide
        out = np.empty(self.total, dtype=self.wide.dtype)
        done = 0  # postings written
        for at, row in enumerate(self.rows):
            start, end = int(indptr[row]), int(indptr[row + 1])
            shift = self.before[at]
            out[done:start] = self.wide[done - shift : start - shift]
            out[start:end] = self.run(row, start, end)
            done = end
        shift = self.before[-1]
        out[done:] = self.wide[done - shift :]
        return out
