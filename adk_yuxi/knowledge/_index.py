"""A knowledge base's BM25 index: segments (`_segment`) scored with base-wide statistics.

Scores are bm25s's default ("lucene": idf ``log(1 + (N - df + .5) / (df + .5))``,
``tf / (tf + k1 (1 - b + b dl / avgdl))``, k1 1.5, b 0.75), so rankings equal bm25s's.
``N``, ``avgdl`` and each query term's ``df`` are summed over the segments, so an index
of many segments scores exactly as one built whole: adding a file is a new small
segment, dropping one masks its segment, and neither rescores the rest. Impacts are
computed at query time from the stored frequencies, on the query terms' postings only
(a document's length normaliser is kept per index, 4 bytes a document).

Per segment the query terms' postings are summed into a dense accumulator when they
cover a good part of the segment (one ``bincount``), else by merging the sorted runs;
each segment gives its best ``k`` and the best ``k`` of those is the answer, ties by
chunk id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._segment import SEGMENT_DOCS, Segment, SegmentRows

__all__ = ["K1", "B", "Bm25Index"]

K1 = 1.5
B = 0.75
_DENSE = 16  # postings above 1/16 of a segment's documents: a dense accumulator

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class _Term:
    segment: int
    row: int
    start: int
    end: int
    idf: np.float32


class Bm25Index:
    """Immutable: a change to the base makes a new index from these segments (cheap)."""

    def __init__(self, segments: Sequence[Segment]) -> None:
        self.segments = tuple(s for s in segments if s.live_docs)
        self.n_docs = sum(s.live_docs for s in self.segments)
        total = sum(s.live_length for s in self.segments)
        avg = total / self.n_docs if self.n_docs and total else 1.0
        self._norms = [
            (K1 * (1 - B + B * s.lengths.astype(np.float64) / avg)).astype(np.float32)
            for s in self.segments
        ]
        self.files: dict[str, tuple[int, int, int]] = {}
        for at, segment in enumerate(self.segments):
            for file_id, (low, high) in segment.files.items():
                self.files[file_id] = (at, low, high)

    @classmethod
    def from_rows(cls, rows: SegmentRows, segment_docs: int = SEGMENT_DOCS) -> Bm25Index:
        """Rows cut into segments of at most ``segment_docs`` (whole files, so a file
        larger than that is a segment of its own)."""
        return cls([Segment.build(part) for part in split_rows(rows, segment_docs)])

    @property
    def nbytes(self) -> int:
        return sum(s.nbytes for s in self.segments) + sum(n.nbytes for n in self._norms)

    def search(
        self, query: Sequence[int], k: int, file_id: str | None = None
    ) -> list[tuple[int, float]]:
        """The top ``k`` (chunk id, score) pairs for these term keys, best first."""
        if k <= 0 or not self.n_docs or not query:
            return []
        only: tuple[int, int, int] | None = None
        if file_id is not None:
            if file_id not in self.files:
                return []
            only = self.files[file_id]
        terms = self._terms(np.array(list(dict.fromkeys(query)), dtype=np.int64))
        cids, scores = [], []
        for at, segment in enumerate(self.segments):
            if only is not None and only[0] != at:
                continue
            mine = [t for t in terms if t.segment == at]
            if mine:
                docs, got = _score(segment, self._norms[at], mine, only)
                docs, got = _best(docs, got, segment.cids, k)
                cids.append(segment.cids[docs])
                scores.append(got)
        if not cids:
            return []
        best, top = _best(np.concatenate(cids), np.concatenate(scores), None, k)
        return list(zip(best.tolist(), top.tolist(), strict=True))

    def _terms(self, keys: Ints) -> list[_Term]:
        """Each query term's postings run in each segment, with its base-wide idf."""
        found: list[tuple[int, int, int, int, int]] = []  # segment, key number, row, span
        df = np.zeros(len(keys), dtype=np.int64)
        for at, segment in enumerate(self.segments):
            where = segment.terms.find(keys)
            hit = np.flatnonzero(where >= 0)
            rows = where[hit]
            spans = segment.offsets.spans(rows)
            starts, ends = spans[0].tolist(), spans[1].tolist()
            dead = segment.dead
            for number, row, start, end in zip(
                hit.tolist(), rows.tolist(), starts, ends, strict=True
            ):
                found.append((at, number, row, start, end))
                df[number] += end - start
                if dead is not None:  # tombstoned documents count for nothing
                    df[number] -= segment.dead_in(row, start, end)
        idf = np.log1p((self.n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
        return [_Term(at, row, start, end, idf[n]) for at, n, row, start, end in found]


def split_rows(rows: SegmentRows, segment_docs: int) -> list[SegmentRows]:
    """Consecutive runs of whole files, each at most ``segment_docs`` rows when its
    files allow."""
    parts: list[SegmentRows] = []
    part = SegmentRows()
    previous = None
    for cid, file_id, length, keys, freqs in zip(
        rows.cids, rows.file_ids, rows.lengths, rows.keys, rows.freqs, strict=True
    ):
        if file_id != previous and len(part) >= segment_docs:
            parts.append(part)
            part = SegmentRows()
        part.add(cid, file_id, length, keys, freqs)
        previous = file_id
    if len(part):
        parts.append(part)
    return parts


def _score(
    segment: Segment,
    norm: npt.NDArray[np.float32],
    terms: list[_Term],
    only: tuple[int, int, int] | None,
) -> tuple[Ints, Floats]:
    """The documents of this segment holding any query term, and their scores."""
    docs_of, weights_of = [], []
    for term in terms:
        docs = segment.docs.run(term.row, term.start, term.end)
        tf = segment.multi_frequencies(term.row)
        if only is not None:
            inside = (docs >= only[1]) & (docs < only[2])
            docs = docs[inside]
            if tf is not None:  # (the first postings, those with a frequency above 1)
                tf = tf[inside[: len(tf)]]
        if not len(docs):
            continue
        if tf is None:  # every frequency 1
            weight = norm[docs] + np.float32(1)
            np.divide(np.float32(1), weight, out=weight)
        else:
            many = np.ones(len(docs), dtype=np.float32)
            many[: len(tf)] = tf
            weight = many / (many + norm[docs])
        weight *= term.idf
        docs_of.append(docs)
        weights_of.append(weight)
    total = sum(len(d) for d in docs_of)
    if not total:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    dead = segment.dead if only is None else None  # (a file asked for is live)
    if total * _DENSE >= segment.n_docs:
        dense = np.bincount(
            np.concatenate(docs_of), np.concatenate(weights_of), minlength=segment.n_docs
        )
        if dead is not None:  # tombstones: their spans zeroed, no pass over the rest
            for low, high in zip(*segment.dead_spans, strict=True):
                dense[low:high] = 0
        hit: Ints = np.flatnonzero(dense).astype(np.int64)
        return hit, dense[hit].astype(np.float64)
    weights: Floats
    if len(docs_of) == 1:
        found, weights = docs_of[0].astype(np.int64), weights_of[0].astype(np.float64)
    else:
        merged = np.concatenate(docs_of)
        order = np.argsort(merged, kind="stable")
        merged = merged[order]
        starts = np.flatnonzero(np.concatenate(([True], merged[1:] != merged[:-1])))
        weights = np.add.reduceat(np.concatenate(weights_of)[order].astype(np.float64), starts)
        found = merged[starts].astype(np.int64)
    if dead is not None:
        alive = ~dead[found]
        found, weights = found[alive], weights[alive]
    return found, weights


def _best(docs: Ints, scores: Floats, cids: Ints | None, k: int) -> tuple[Ints, Floats]:
    """The best ``k``: score descending, chunk id ascending among equals (``docs`` are
    chunk ids when ``cids`` is None, else numbers into it)."""
    if len(docs) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth
        docs, scores = docs[keep], scores[keep]
    ids = docs if cids is None else cids[docs]
    order = np.lexsort((ids, -scores))[:k]
    return docs[order], scores[order]
