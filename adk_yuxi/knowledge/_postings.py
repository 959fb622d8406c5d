"""Postings as arrays: sorted by term key, packed so that a frequency of 1 costs nothing.

The array work under `_segment.Segment`: one sort of a segment's (key, document)
pairs, the narrowest integer types that hold the values, and each term's run reordered
with its postings of frequency above 1 first (their frequencies stored apart).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ._terms import CJK_KEY_LIMIT

__all__ = ["narrow", "pack", "posting_order"]

Ints = npt.NDArray[np.int64]
Tf = npt.NDArray[np.integer]


def posting_order(keys: Ints, position_bits: int = 26) -> tuple[Ints, Ints]:
    """The keys sorted, and the positions they came from (ascending within a key).

    CJK keys (below 2**37) with positions below 2**``position_bits`` sort as one packed
    SIMD sort of (key, position); the rest by a stable argsort."""
    is_cjk = keys < CJK_KEY_LIMIT
    n_cjk = int(is_cjk.sum())
    sorted_keys = np.empty(len(keys), dtype=np.int64)
    order = np.empty(len(keys), dtype=np.int64)
    cjk = np.flatnonzero(is_cjk)
    if len(keys) < (1 << position_bits):
        packed = keys[cjk]
        packed <<= position_bits
        packed |= cjk
        del cjk
        packed.sort()
        np.bitwise_and(packed, (1 << position_bits) - 1, out=order[:n_cjk])
        np.right_shift(packed, position_bits, out=sorted_keys[:n_cjk])
        del packed
    else:
        order[:n_cjk] = cjk[np.argsort(keys[cjk], kind="stable")]
        del cjk
        sorted_keys[:n_cjk] = keys[order[:n_cjk]]
    rest = np.flatnonzero(~is_cjk)
    order[n_cjk:] = rest[np.argsort(keys[rest], kind="stable")]
    sorted_keys[n_cjk:] = keys[order[n_cjk:]]
    return sorted_keys, order


def narrow(values: npt.NDArray[np.integer], dtypes: Sequence[type]) -> npt.NDArray[np.integer]:
    top = int(values.max()) if len(values) else 0
    for dtype in dtypes:
        if top <= np.iinfo(dtype).max:
            return values.astype(dtype)
    return values.astype(dtypes[-1])


def pack(
    indptr: Ints, docs: npt.NDArray[np.integer], tf: npt.NDArray[np.integer]
) -> tuple[npt.NDArray[np.integer], npt.NDArray[np.int32], npt.NDArray[np.int32], Tf]:
    """Each term's postings with a frequency above 1 first, then the rest (relative order
    kept): (documents, terms with such postings, their offsets into the frequencies,
    those frequencies). A frequency of 1, most postings, then costs nothing."""
    multi = tf > 1
    n = len(indptr) - 1
    frequencies = narrow(tf[multi], [np.uint8, np.uint16])
    if not multi.any():
        none = np.zeros(0, dtype=np.int32)
        return docs, none, np.zeros(1, dtype=np.int32), frequencies
    small = np.int32  # a segment's postings: at most a few hundred million
    first = indptr[:-1].astype(small)
    term_of = np.repeat(np.arange(n, dtype=small), np.diff(indptr))
    before = np.zeros(len(docs) + 1, dtype=small)  # multi postings before each position
    np.cumsum(multi, out=before[1:])
    n_multi = before[indptr[1:]] - before[indptr[:-1]]
    start = first[term_of]
    rank = before[:-1] - before[first][term_of]  # rank among the term's multi postings
    single = np.arange(len(docs), dtype=small) - start - rank + n_multi[term_of]
    moved = np.where(multi, start + rank, start + single)
    del term_of, start, rank, single
    packed = np.empty_like(docs)
    packed[moved] = docs
    terms = np.flatnonzero(n_multi).astype(np.int32)
    offsets = np.zeros(len(terms) + 1, dtype=np.int32)
    np.cumsum(n_multi[terms], out=offsets[1:])
    return packed, terms, offsets, frequencies
