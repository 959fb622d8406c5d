"""A segment's term dictionary: sorted 64-bit keys, stored in 2 bytes where they fit.

Most distinct terms of a base are CJK characters and bigrams, keys below 2**37 (see
`_terms`), and a segment holds millions of them (60% seen once). Those are kept as
their low 16 bits, grouped by the rest of the key (a bigram's group is its first
character: a few thousand groups, each with the row it starts at); word keys (62-bit
digests) stay whole. Rows keep the order of the 64-bit keys.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._terms import CJK_KEY_LIMIT

__all__ = ["TermKeys"]

Ints = npt.NDArray[np.int64]
_SHIFT = 16
_LOW = (1 << _SHIFT) - 1


class TermKeys:
    """Immutable, sorted. ``find`` gives each key's row (-1 when absent)."""

    __slots__ = ("heads", "low", "starts", "words")

    def __init__(self, heads: Ints, starts: Ints, low: npt.NDArray[np.uint16], words: Ints) -> None:
        self.heads, self.starts, self.low, self.words = heads, starts, low, words

    @classmethod
    def of(cls, keys: npt.NDArray[np.integer]) -> TermKeys:
        """From sorted, distinct keys."""
        n_cjk = int(np.searchsorted(keys, CJK_KEY_LIMIT))
        cjk = np.asarray(keys[:n_cjk], dtype=np.int64)
        heads, first = np.unique(cjk >> _SHIFT, return_index=True)
        starts = np.append(first, n_cjk).astype(np.int64)
        words = np.array(keys[n_cjk:], dtype=np.int64)
        return cls(heads.astype(np.int64), starts, (cjk & _LOW).astype(np.uint16), words)

    def __len__(self) -> int:
        return len(self.low) + len(self.words)

    @property
    def nbytes(self) -> int:
        return self.heads.nbytes + self.starts.nbytes + self.low.nbytes + self.words.nbytes

    def keys(self) -> Ints:
        """Every key, as 64 bits (built on each call)."""
        high = np.repeat(self.heads << _SHIFT, np.diff(self.starts))
        return np.concatenate([high | self.low, self.words])

    def take(self, rows: Ints) -> TermKeys:
        """The keys of these rows (ascending)."""
        return TermKeys.of(self.keys()[rows])

    def find(self, keys: Ints) -> Ints:
        """The row of each key, -1 where absent."""
        rows = np.full(len(keys), -1, dtype=np.int64)
        is_cjk = keys < CJK_KEY_LIMIT
        cjk = np.flatnonzero(is_cjk)
        if len(cjk) and len(self.heads):
            heads = keys[cjk] >> _SHIFT
            group = np.minimum(np.searchsorted(self.heads, heads), len(self.heads) - 1)
            found = self.heads[group] == heads
            for at, g, low in zip(
                cjk[found].tolist(), group[found].tolist(), (keys[cjk[found]] & _LOW).tolist(),
                strict=True,
            ):  # fmt: skip
                lo, hi = int(self.starts[g]), int(self.starts[g + 1])
                where = lo + int(np.searchsorted(self.low[lo:hi], low))
                if where < hi and self.low[where] == low:
                    rows[at] = where
        word = np.flatnonzero(~is_cjk)
        if len(word) and len(self.words):
            at = np.minimum(np.searchsorted(self.words, keys[word]), len(self.words) - 1)
            rows[word] = np.where(self.words[at] == keys[word], at + len(self.low), -1)
        return rows
