"""A segment's term dictionary: sorted 64-bit keys, stored in 4 bytes where they fit.

Most distinct terms of a base are CJK characters and bigrams, keys below 2**37 (see
`_terms`), and a segment holds millions of them (60% seen once). Those are kept as
their low 32 bits, with the row where each of the 32 possible high parts starts; word
keys (62-bit digests) stay whole. Rows keep the order of the 64-bit keys.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._terms import CJK_KEY_LIMIT

__all__ = ["TermKeys"]

Ints = npt.NDArray[np.int64]
_HIGHS = CJK_KEY_LIMIT >> 32  # 32 possible high parts of a CJK key
_LOW = 0xFFFFFFFF


class TermKeys:
    """Immutable, sorted. ``find`` gives each key's row (-1 when absent)."""

    __slots__ = ("bounds", "low", "words")

    def __init__(self, low: npt.NDArray[np.uint32], bounds: Ints, words: Ints) -> None:
        self.low, self.bounds, self.words = low, bounds, words

    @classmethod
    def of(cls, keys: npt.NDArray[np.integer]) -> TermKeys:
        """From sorted, distinct keys."""
        keys = np.asarray(keys, dtype=np.int64)
        n_cjk = int(np.searchsorted(keys, CJK_KEY_LIMIT))
        cjk = keys[:n_cjk]
        bounds = np.searchsorted(cjk >> 32, np.arange(_HIGHS + 1)).astype(np.int64)
        words = np.array(keys[n_cjk:], dtype=np.int64)
        return cls((cjk & _LOW).astype(np.uint32), bounds, words)

    def __len__(self) -> int:
        return len(self.low) + len(self.words)

    @property
    def nbytes(self) -> int:
        return self.low.nbytes + self.bounds.nbytes + self.words.nbytes

    def keys(self) -> Ints:
        """Every key, as 64 bits (built on each call)."""
        high = np.repeat(np.arange(_HIGHS, dtype=np.int64) << 32, np.diff(self.bounds))
        return np.concatenate([high | self.low, self.words])

    def take(self, rows: Ints) -> TermKeys:
        """The keys of these rows (ascending)."""
        n_cjk = len(self.low)
        split = int(np.searchsorted(rows, n_cjk))
        cjk, word = rows[:split], rows[split:] - n_cjk
        bounds = np.searchsorted(cjk, self.bounds).astype(np.int64)
        return TermKeys(self.low[cjk], bounds, self.words[word])

    def find(self, keys: Ints) -> Ints:
        """The row of each key, -1 where absent."""
        rows = np.full(len(keys), -1, dtype=np.int64)
        is_cjk = keys < CJK_KEY_LIMIT
        highs = keys >> 32
        for high in np.unique(highs[is_cjk]).tolist():
            at = np.flatnonzero(is_cjk & (highs == high))
            lo, hi = int(self.bounds[high]), int(self.bounds[high + 1])
            rows[at] = _lookup(self.low[lo:hi], (keys[at] & _LOW).astype(np.uint32), lo)
        word = np.flatnonzero(~is_cjk)
        if len(word):
            rows[word] = _lookup(self.words, keys[word], len(self.low))
        return rows


def _lookup(sorted_keys: npt.NDArray[np.integer], keys: npt.NDArray[np.integer], base: int) -> Ints:
    if not len(sorted_keys):
        return np.full(len(keys), -1, dtype=np.int64)
    where = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return np.where(sorted_keys[where] == keys, where + base, -1).astype(np.int64)
