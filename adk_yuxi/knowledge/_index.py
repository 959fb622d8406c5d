"""An in-memory BM25 index of one knowledge base, with exact top-k by MaxScore pruning.

Built from the per-chunk term data ingest stored (sorted 64-bit keys and their
frequencies), so building is array work, not tokenising. Postings are one CSC layout:
per term a sorted run of document numbers and the precomputed BM25 impact of the term
in each. Scores are bm25s's default ("lucene": idf ``log(1 + (N - df + .5) / (df + .5))``,
``tf / (tf + k1 (1 - b + b dl / avgdl))``, k1 1.5, b 0.75), so rankings equal bm25s's.

A query first scores the best few documents of its strongest terms to get a threshold
(the k-th best score found; for a long list those are picked at build time, so a query
does not partition a common word's postings), then only the terms whose upper bounds
together can reach it ("essential") produce candidates; a candidate is completed over
the other terms only while its bound still can, and the threshold rises as partial
scores come in. Common words therefore cost little when a rarer word is in the query.
Documents are numbered by file (the rows arrive ordered by file), so one file is one
contiguous range.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._terms import CJK_KEY_LIMIT

__all__ = ["Bm25Index", "IndexRows"]

K1 = 1.5
B = 0.75
_POSITION_BITS = 26  # CJK keys are below 2**37: key << 26 | position fits in 63 bits
_SEED_PER_HIT = 4
_SEED_LISTS = 8  # seeds are scored on the strongest lists: a lower bound is enough
_LONG_LIST = 256  # lists longer than this keep their best documents, picked at build
_TOP_DOCS = 64  # how many: seeding wants k * _SEED_PER_HIT (top_k 16 and below)

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class IndexRows:
    """Chunk rows ordered by file, then chunk id: what the index is built from."""

    cids: Sequence[int]
    file_ids: Sequence[str]
    lengths: Sequence[int]
    keys: Sequence[bytes]
    freqs: Sequence[bytes]


def _posting_order(
    keys: npt.NDArray[np.int64], position_bits: int = _POSITION_BITS
) -> tuple[Ints, Ints]:
    """The keys sorted, and the positions they came from (ascending within a key).

    Written into preallocated outputs, in place where it can: at 100,000 chunks each of
    these arrays is ~280 MB."""
    is_cjk = keys < CJK_KEY_LIMIT
    n_cjk = int(is_cjk.sum())
    sorted_keys = np.empty(len(keys), dtype=np.int64)
    order = np.empty(len(keys), dtype=np.int64)
    cjk = np.flatnonzero(is_cjk)
    if len(keys) < (1 << position_bits):
        # One SIMD sort of packed (key, position) instead of a stable argsort.
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


class Bm25Index:
    """Immutable once built: a write to the base means a new index (see `_search`)."""

    def __init__(self, rows: IndexRows, *, long_list: int = _LONG_LIST) -> None:
        n = len(rows.cids)
        self.cids = np.array(rows.cids, dtype=np.int64)
        self.n_docs = n
        self.files: dict[str, tuple[int, int]] = {}
        for doc, file_id in enumerate(rows.file_ids):
            low, _ = self.files.get(file_id, (doc, doc))
            self.files[file_id] = (low, doc + 1)
        per_doc = np.array([len(k) // 8 for k in rows.keys], dtype=np.int64)
        keys, order = _posting_order(np.frombuffer(b"".join(rows.keys), dtype="<i8"))
        starts = np.flatnonzero(keys[1:] != keys[:-1]) + 1
        starts = np.concatenate([np.zeros(min(len(keys), 1), dtype=np.int64), starts])
        self.terms: Ints = keys[starts]
        del keys
        self.indptr: Ints = np.append(starts, len(order)).astype(np.int64)
        counts = np.diff(self.indptr)
        self.docs = np.repeat(np.arange(n, dtype=np.int32), per_doc)[order]
        tf = np.frombuffer(b"".join(rows.freqs), dtype="<u2")[order].astype(np.float32)
        del order
        lengths = np.array(rows.lengths, dtype=np.float64)
        avg = float(lengths.mean()) if n and lengths.sum() else 1.0
        norm = (K1 * (1 - B + B * lengths / avg)).astype(np.float32)
        idf = np.log1p((n - counts + 0.5) / (counts + 0.5)).astype(np.float32)
        tf /= tf + norm[self.docs]
        tf *= np.repeat(idf, counts)
        self.impacts: npt.NDArray[np.float32] = tf
        self.upper = np.maximum.reduceat(tf, starts).astype(np.float64) if len(tf) else np.zeros(0)
        self.long_terms, self.top_docs = _best_documents(self.indptr, tf, self.docs, long_list)

    @property
    def nbytes(self) -> int:
        return sum(
            a.nbytes
            for a in (
                *(self.cids, self.terms, self.indptr, self.docs, self.impacts, self.upper),
                *(self.long_terms, self.top_docs),
            )
        ) + 120 * len(self.files)

    def search(
        self, query: Sequence[int], k: int, file_id: str | None = None
    ) -> list[tuple[int, float]]:
        """The top ``k`` (chunk id, score) pairs for these term keys, best first."""
        ranked = self.rank(query, k, file_id)
        return [(int(self.cids[doc]), score) for doc, score in ranked]

    def rank(
        self, query: Sequence[int], k: int, file_id: str | None = None
    ) -> list[tuple[int, float]]:
        """The top ``k`` (document number, score) pairs, best first."""
        low, high = 0, self.n_docs
        if file_id is not None:
            if file_id not in self.files:
                return []
            low, high = self.files[file_id]
        lists = self._lists(query, low, high)
        if not lists or k <= 0:
            return []
        docs, scores = _top(lists, k)
        return list(zip(docs.tolist(), scores.tolist(), strict=True))

    def _lists(self, query: Sequence[int], low: int, high: int) -> list[_Postings]:
        if not len(self.terms):
            return []
        keys = np.array(list(dict.fromkeys(query)), dtype=np.int64)
        at = np.minimum(np.searchsorted(self.terms, keys), len(self.terms) - 1)
        found = at[self.terms[at] == keys]
        bounds = zip(self.indptr[found].tolist(), self.indptr[found + 1].tolist(), strict=True)
        lists = []
        whole = low == 0 and high == self.n_docs
        rows = np.full(len(found), -1, dtype=np.int64)
        if whole and len(self.long_terms):
            rows = np.searchsorted(self.long_terms, found)
            rows[self.long_terms.take(rows, mode="clip") != found] = -1
        for term, (start, end), row in zip(found.tolist(), bounds, rows.tolist(), strict=True):
            docs = self.docs[start:end]
            top = self.top_docs[row] if row >= 0 else None
            if not whole:
                a, b = np.searchsorted(docs, [low, high]).tolist()
                start, end, docs = start + a, start + b, docs[a:b]
            if end > start:
                upper = float(self.upper[term])
                lists.append(_Postings(docs, self.impacts[start:end], upper, top))
        return lists


def _best_documents(
    indptr: Ints, impacts: npt.NDArray[np.float32], docs: npt.NDArray[np.int32], long_list: int
) -> tuple[Ints, npt.NDArray[np.int32]]:
    """The terms whose lists are longer than ``long_list`` (ascending) and, per such term,
    a row of its ``_TOP_DOCS`` highest-impact documents, best first: 264 bytes a term."""
    long = np.flatnonzero(np.diff(indptr) > max(long_list, _TOP_DOCS)).astype(np.int64)
    top = np.empty((len(long), _TOP_DOCS), dtype=np.int32)
    for row, term in enumerate(long.tolist()):
        start, end = int(indptr[term]), int(indptr[term + 1])
        part = impacts[start:end]
        best = np.argpartition(part, end - start - _TOP_DOCS)[end - start - _TOP_DOCS :]
        best = best[np.argsort(-part[best], kind="stable")]
        top[row] = docs[start:end][best]
    return long, top


class _Postings:
    """One term's postings (maybe cut to one file's range) and its impact bound."""

    __slots__ = ("docs", "impacts", "top", "upper")

    def __init__(
        self,
        docs: npt.NDArray[np.int32],
        impacts: npt.NDArray[np.float32],
        upper: float,
        top: npt.NDArray[np.int32] | None = None,
    ) -> None:
        self.docs = docs
        self.impacts = impacts
        self.upper = upper
        self.top = top  # its best documents, best first, when picked at build time


def _complete(
    docs: Ints, scores: Floats, lists: Sequence[_Postings], margin: float = -1.0, k: int = 0
) -> tuple[Ints, Floats]:
    """Adds each list's impact to the documents it contains, strongest list first.

    ``scores`` is the caller's own array (added to in place).

    With a ``margin``, a document is dropped as soon as even the remaining lists' bounds
    cannot lift it to the margin, and the margin rises to the ``k``-th best partial
    score (a partial score is a lower bound, so k documents are known to reach it)."""
    remaining = sum(p.upper for p in lists)
    for p in lists:
        at = np.searchsorted(p.docs, docs)
        hit = p.docs.take(at, mode="clip") == docs
        np.add(scores, p.impacts.take(at, mode="clip"), out=scores, where=hit)
        remaining -= p.upper
        if margin > 0:
            if len(scores) > k > 0:
                kth = float(np.partition(scores, len(scores) - k)[len(scores) - k])
                margin = max(margin, kth * (1 - 1e-9) - 1e-12)
            keep = scores + remaining >= margin
            docs, scores = docs[keep], scores[keep]
    return docs, scores


def _union(lists: Sequence[_Postings]) -> tuple[Ints, Floats]:
    """The documents of these lists and their summed impacts.

    Each list is sorted, so a stable sort of their concatenation is a merge of runs
    (timsort finds them): work and memory in the postings touched, where a dense
    accumulator over every document (800 KB at 100,000) evicted the caches the
    request's other work then missed. Impacts add in list order, as before."""
    if len(lists) == 1:
        return lists[0].docs.astype(np.int64), lists[0].impacts.astype(np.float64)
    docs = np.concatenate([p.docs for p in lists])
    order = np.argsort(docs, kind="stable")
    docs = docs[order]
    starts = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
    weights = np.concatenate([p.impacts for p in lists])[order].astype(np.float64)
    return docs[starts].astype(np.int64), np.add.reduceat(weights, starts)


def _best(docs: Ints, scores: Floats, k: int) -> tuple[Ints, Floats]:
    """The best ``k``: score descending, document number ascending among equals."""
    if len(docs) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth
        docs, scores = docs[keep], scores[keep]
    order = np.lexsort((docs, -scores))[:k]
    return docs[order], scores[order]


def _seed(lists: Sequence[_Postings], want: int) -> Ints:
    """The highest-impact documents of the strongest lists, at least ``want`` of them
    when the lists hold that many: their exact scores give the first threshold."""
    picked: list[npt.NDArray[np.integer[Any]]] = []
    total = 0
    for p in lists:
        docs = p.docs
        if p.top is not None and want <= len(p.top):
            docs = p.top[:want]
        elif len(docs) > want:
            docs = docs[np.argpartition(p.impacts, len(docs) - want)[len(docs) - want :]]
        picked.append(docs)
        total += len(docs)
        if total >= want:
            break
    if len(picked) == 1:
        return picked[0].astype(np.int64)  # one list holds a document once
    return np.unique(np.concatenate(picked)).astype(np.int64)


def _top(lists: list[_Postings], k: int) -> tuple[Ints, Floats]:
    lists = sorted(lists, key=lambda p: -p.upper)
    seed = _seed(lists, k * _SEED_PER_HIT)
    # Partial scores on the strongest lists: lower bounds, so their k-th best is one too.
    seed, seed_scores = _complete(seed, np.zeros(len(seed)), lists[:_SEED_LISTS])
    threshold = 0.0
    if len(seed) >= k:
        threshold = float(np.partition(seed_scores, len(seed) - k)[len(seed) - k])
    # Terms whose bounds together stay below the threshold only rescore: a document
    # found in none of the others cannot enter the top k.
    margin = threshold * (1 - 1e-9) - 1e-12
    essential, rest = len(lists), 0.0
    while essential > 1 and rest + lists[essential - 1].upper < margin:
        rest += lists[essential - 1].upper
        essential -= 1
    docs, scores = _union(lists[:essential])
    keep = scores + rest >= margin
    # Every document of the top k is among these (its score reaches the threshold, so it
    # is in an essential list and its bound never falls below the margin), scored exactly.
    docs, scores = _complete(docs[keep], scores[keep], lists[essential:], margin, k)
    return _best(docs, scores, k)
