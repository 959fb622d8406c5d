"""Postings as arrays: sorted by term key, packed so that a frequency of 1 costs nothing.

The array work under `_segment.Segment`: one sort of a segment's (key, document)
pairs, the narrowest integer types that hold the values, and each term's run reordered
with its postings of frequency above 1 first (their frequencies stored apart).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

from ._terms import CJK_KEY_LIMIT

__all__ = ["Postings", "lean_postings", "narrow", "pack", "posting_order"]

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


# The lean build: each posting one uint64, (term, frequency above 1 or not, document,
# frequency) from the high bits down, sorted in place; a term is a CJK key (below 2**37)
# or the number of a word key among the segment's words.
_DOC_SHIFT = 10
_SINGLE_SHIFT = 26
_TERM_SHIFT = 27
_TF_CAP = (1 << _DOC_SHIFT) - 1  # this and above: the exact value looked up apart
_BLOCK = 1 << 22  # postings unpacked at a time


class Postings:
    """A segment's postings as `Segment` stores them (see `pack`)."""

    __slots__ = ("docs", "indptr", "multi_offsets", "multi_terms", "multi_tf", "terms")

    def __init__(
        self, terms: Ints, indptr: Ints, docs: npt.NDArray[np.uint16], multi: _Multi
    ) -> None:
        self.terms, self.indptr, self.docs = terms, indptr, docs
        self.multi_terms, self.multi_offsets, self.multi_tf = multi


_Multi = tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], Tf]


def lean_postings(
    parts: Iterator[tuple[Ints, npt.NDArray[np.integer], npt.NDArray[np.uint16]]], total: int
) -> Postings:
    """The postings of (keys, documents, frequencies) parts, ``total`` postings in all,
    documents below 2**16 and ascending over the parts. The parts are consumed one by
    one, so the peak is about 8 bytes a posting (the packed array) plus the output's 2,
    where a sort with an order array takes about 40."""
    packed = np.empty(total, dtype=np.uint64)
    fill = 0
    words: list[tuple[Ints, npt.NDArray[np.integer], npt.NDArray[np.uint16]]] = []
    over: dict[tuple[int, int], int] = {}  # (CJK key, document) -> frequency >= cap
    for keys, docs, tf in parts:
        cjk = keys < CJK_KEY_LIMIT
        if not cjk.all():
            rest = ~cjk
            words.append((keys[rest], docs[rest], tf[rest]))
            keys, docs, tf = keys[cjk], docs[cjk], tf[cjk]
        fill += _pack_into(packed[fill:], keys, docs, tf, over)
    n_cjk = fill
    if words:
        word_keys = np.concatenate([w[0] for w in words])
        vocabulary, numbers = np.unique(word_keys, return_inverse=True)
        del word_keys
        docs = np.concatenate([w[1] for w in words])
        tf = np.concatenate([w[2] for w in words])
        words.clear()
        word_over: dict[tuple[int, int], int] = {}
        _pack_into(packed[fill:], numbers.reshape(-1), docs, tf, word_over)
        del numbers, docs, tf
    out_docs = np.empty(total, dtype=np.uint16)
    cjk_part = _unpack(packed[:n_cjk], out_docs[:n_cjk], over)
    if n_cjk == total:
        return Postings(cjk_part[0].astype(np.int64), cjk_part[1], out_docs, cjk_part[2])
    word_part = _unpack(packed[n_cjk:], out_docs[n_cjk:], word_over)
    del packed
    terms = np.concatenate([cjk_part[0].astype(np.int64), vocabulary[word_part[0]]])
    n_terms = len(cjk_part[0])
    (c_terms, c_offsets, c_tf), (w_terms, w_offsets, w_tf) = cjk_part[2], word_part[2]
    multi = (
        np.concatenate([c_terms, w_terms + n_terms]).astype(np.int32),
        np.concatenate([c_offsets[:-1], w_offsets + c_offsets[-1]]).astype(np.int32),
        narrow(np.concatenate([c_tf, w_tf]), [np.uint8, np.uint16]),
    )
    indptr = np.concatenate([cjk_part[1][:-1], word_part[1] + n_cjk])
    return Postings(terms, indptr, out_docs, multi)


def _pack_into(
    out: npt.NDArray[np.uint64],
    terms: npt.NDArray[np.integer],
    docs: npt.NDArray[np.integer],
    tf: npt.NDArray[np.uint16],
    over: dict[tuple[int, int], int],
) -> int:
    n = len(terms)
    high = tf >= _TF_CAP
    if high.any():
        found = (terms[high].tolist(), docs[high].tolist(), tf[high].tolist())
        for term, doc, f in zip(*found, strict=True):
            over[(term, doc)] = f
    view = out[:n]
    np.left_shift(terms.astype(np.uint64), np.uint64(_TERM_SHIFT), out=view)
    view |= (tf == 1).astype(np.uint64) << np.uint64(_SINGLE_SHIFT)
    view |= docs.astype(np.uint64) << np.uint64(_DOC_SHIFT)
    view |= np.minimum(tf, _TF_CAP).astype(np.uint64)
    return n


def _unpack(
    packed: npt.NDArray[np.uint64], docs: npt.NDArray[np.uint16], over: dict[tuple[int, int], int]
) -> tuple[npt.NDArray[np.uint64], Ints, _Multi]:
    """Sorts ``packed`` in place and unpacks it block by block: (term of each row,
    indptr, the frequencies above 1 as `pack` lays them out); documents into ``docs``."""
    packed.sort()
    starts, terms, multi_at, multi_tf = [], [], [], []
    previous: int | None = None
    for low in range(0, len(packed), _BLOCK):
        block = packed[low : low + _BLOCK]
        term = block >> np.uint64(_TERM_SHIFT)
        new = np.empty(len(term), dtype=bool)
        new[0] = previous is None or int(term[0]) != previous
        np.not_equal(term[1:], term[:-1], out=new[1:])
        at = np.flatnonzero(new)
        starts.append(at + low)
        terms.append(term[at])
        previous = int(term[-1])
        doc = block >> np.uint64(_DOC_SHIFT)
        docs[low : low + len(block)] = doc & np.uint64(0xFFFF)
        multi = (block & np.uint64(1 << _SINGLE_SHIFT)) == 0
        tf = (block[multi] & np.uint64(_TF_CAP)).astype(np.uint16)
        capped = np.flatnonzero(tf == _TF_CAP)
        if len(capped):
            pairs = zip(term[multi][capped].tolist(), doc[multi][capped].tolist(), strict=True)
            tf[capped] = [over[(t, d & 0xFFFF)] for t, d in pairs]
        multi_at.append(np.flatnonzero(multi) + low)
        multi_tf.append(tf)
    indptr = np.concatenate([*starts, [len(packed)]]).astype(np.int64)
    where = np.concatenate(multi_at) if multi_at else np.zeros(0, np.int64)
    n_multi = np.searchsorted(where, indptr[1:]) - np.searchsorted(where, indptr[:-1])
    rows = np.flatnonzero(n_multi).astype(np.int32)
    offsets = np.zeros(len(rows) + 1, dtype=np.int32)
    np.cumsum(n_multi[rows], out=offsets[1:])
    tfs = np.concatenate(multi_tf) if multi_tf else np.zeros(0, np.uint16)
    all_terms = np.concatenate(terms) if terms else np.zeros(0, np.uint64)
    return all_terms, indptr, (rows, offsets, narrow(tfs, [np.uint8, np.uint16]))
