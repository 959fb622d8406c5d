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

import numpy as np
import numpy.typing as npt

from ._pruning import pruned_top
from ._scoring import Term, accumulate, best, frequencies
from ._segment import SEGMENT_DOCS, Segment, SegmentRows

__all__ = ["K1", "B", "Bm25Index"]

K1 = 1.5
B = 0.75

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
_Found = tuple[list[Term], npt.NDArray[np.float32], Ints]  # terms, idf and df per key


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
        self._last: tuple[bytes, _Found] | None = None  # the last query's terms (`holds`)
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
        terms, idf, df = self._terms(np.array(list(dict.fromkeys(query)), dtype=np.int64))
        found = pruned_top(self.segments, self._norms, terms, idf, df, k) if only is None else None
        if found is None:
            found = self.exhaustive(terms, k, only)
        top_cids, top = best(*found, None, k)
        return list(zip(top_cids.tolist(), top.tolist(), strict=True))

    def exhaustive(
        self, terms: list[Term], k: int, only: tuple[int, int, int] | None = None
    ) -> tuple[Ints, Floats]:
        """Candidates holding the best ``k`` (chunk ids, scores) by summing every
        posting of ``terms`` (each segment's best ``k``)."""
        cids, scores = [np.zeros(0, np.int64)], [np.zeros(0)]
        for at, segment in enumerate(self.segments):
            if only is not None and only[0] != at:
                continue
            mine = [t for t in terms if t.segment == at]
            if mine:
                docs, got = accumulate(segment, self._norms[at], mine, only)
                docs, got = best(docs, got, segment.cids, k)
                cids.append(segment.cids[docs])
                scores.append(got)
        return np.concatenate(cids), np.concatenate(scores)

    def holds(self, query: Sequence[int], cids: Sequence[int]) -> npt.NDArray[np.bool_]:
        """Which of the query's distinct keys (columns, in query order) each chunk (rows)
        holds; a chunk not here holds none."""
        keys = np.array(list(dict.fromkeys(query)), dtype=np.int64)
        out = np.zeros((len(cids), len(keys)), dtype=bool)
        if not len(cids) or not len(keys):
            return out
        terms, _, _ = self._terms(keys)
        ids = np.array(cids, dtype=np.int64)
        for at, segment in enumerate(self.segments):
            mine = [t for t in terms if t.segment == at]
            local = segment.locate(ids) if mine else ids[:0]
            here = np.flatnonzero(local >= 0)
            for term in mine if len(here) else []:
                out[here, term.key] = frequencies(segment, term, local[here]) > 0
        return out

    def _terms(self, keys: Ints) -> _Found:
        """Each query term's postings run in each segment, with its base-wide idf; and
        per key its idf and document frequency (the last query's kept: a hybrid query
        asks `holds` right after `search`)."""
        asked = keys.tobytes()
        if self._last is not None and self._last[0] == asked:
            return self._last[1]
        found = self._find(keys)
        self._last = (asked, found)
        return found

    def _find(self, keys: Ints) -> _Found:
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
        terms = [Term(at, n, row, start, end, idf[n]) for at, n, row, start, end in found]
        return terms, idf, df


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
