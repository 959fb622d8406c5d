"""Where each term's postings start in a segment, in about one byte a term.

A segment holds millions of terms, most of them in one or a few documents, so a 4-byte
offset per term costs more than the term's postings. Kept instead: each term's posting
count as a byte (255 and above looked up in a short exact list) and the offset of
every 64th term; a term's offset is its block's plus the counts before it in the block.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["Offsets"]

Ints = npt.NDArray[np.int64]
_BLOCK = 64
_CAP = 255


class Offsets:
    """Immutable. ``spans(rows)`` gives each row's (start, end) into the postings."""

    __slots__ = ("base", "big_extra", "big_rows", "counts", "total")

    def __init__(self, indptr: npt.NDArray[np.integer]) -> None:
        indptr = np.asarray(indptr, dtype=np.int64)
        df = np.diff(indptr)
        self.counts = np.minimum(df, _CAP).astype(np.uint8)
        big = np.flatnonzero(df >= _CAP)
        self.big_rows = big.astype(np.int64)
        extra = np.zeros(len(big) + 1, dtype=np.int64)  # counts above the cap, summed
        np.cumsum(df[big] - _CAP, out=extra[1:])
        self.big_extra = extra
        self.base = np.ascontiguousarray(indptr[:-1:_BLOCK]) if len(df) else np.zeros(0, np.int64)
        self.total = int(indptr[-1]) if len(indptr) else 0

    def __len__(self) -> int:
        return len(self.counts)

    @property
    def nbytes(self) -> int:
        return self.counts.nbytes + self.big_rows.nbytes + self.big_extra.nbytes + self.base.nbytes

    def _extra_before(self, rows: Ints) -> Ints:
        return self.big_extra[np.searchsorted(self.big_rows, rows)]

    def spans(self, rows: Ints) -> tuple[Ints, Ints]:
        """(start, end) of each of these rows' postings."""
        rows = np.asarray(rows, dtype=np.int64)
        first = rows - rows % _BLOCK
        within = first[:, None] + np.arange(_BLOCK)
        before = within < rows[:, None]
        counts = self.counts[np.minimum(within, len(self.counts) - 1)].astype(np.int64)
        starts = self.base[rows // _BLOCK] + (counts * before).sum(axis=1)
        starts += self._extra_before(rows) - self._extra_before(first)
        ends = starts + self.counts[rows] + self._extra_before(rows + 1) - self._extra_before(rows)
        return starts, ends

    def indptr(self) -> Ints:
        """Every offset, as 64 bits (built on each call)."""
        df = self.counts.astype(np.int64)
        df[self.big_rows] += np.diff(self.big_extra)
        out = np.zeros(len(df) + 1, dtype=np.int64)
        np.cumsum(df, out=out[1:])
        return out
