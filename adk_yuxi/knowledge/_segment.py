"""One segment of a lexical index: the postings of a set of whole files, immutable.

A base's index is a list of segments (`_index.Bm25Index`). A segment stores what does
not depend on the rest of the base: per term (sorted 64-bit keys) a run of document
numbers and term frequencies, and per document its chunk id and length. Corpus
statistics (document count, average length, document frequencies) are summed over the
segments at query time, so adding or dropping a segment never rescores the others.

Compact by construction: document numbers are local (``uint16`` while a segment holds
at most 65,536 documents); frequencies are kept only for the postings whose frequency
is above 1 (a term's such postings come first in its run, ``uint8`` unless one exceeds
255); a CJK term's key takes 2 bytes (`_term_keys`), its offset about 1 (`_offsets`).
About 1.6 bytes a posting and 3 a distinct term, where precomputed float impacts would
take 8 a posting. A build packs each posting in one integer and sorts them in place
(the array work: `_postings`), so it needs about 10 bytes a posting while it runs.
Dropping files tombstones them: the same arrays with a mask of dead documents, whose
statistics the index subtracts; purging them later makes a new segment by masking, and
merging segments is one stable sort of their postings by key.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ._doc_numbers import DocNumbers
from ._offsets import Offsets
from ._postings import Postings, lean_postings, posting_order
from ._postings import narrow as _narrow
from ._postings import pack as _pack
from ._segment_rows import SegmentRows, file_ranges, row_parts
from ._term_keys import TermKeys

__all__ = ["SEGMENT_DOCS", "Segment", "SegmentRows", "posting_order"]

SEGMENT_DOCS = 1 << 16  # documents per segment: local numbers fit in uint16
_LOCAL = np.uint16

Ints = npt.NDArray[np.int64]
Tf = npt.NDArray[np.integer]


class Segment:
    """Immutable. Documents ``0..n-1`` in file order; ``files`` maps a file to its range."""

    __slots__ = (
        *("cids", "dead", "docs", "files", "lengths", "live_docs", "live_length", "offsets"),
        *("multi_offsets", "multi_terms", "multi_tf", "terms", "total_length", "dead_spans"),
        "by_cid",
    )

    def __init__(
        self,
        *,
        cids: Ints,
        lengths: npt.NDArray[np.int32],
        files: dict[str, tuple[int, int]],
        terms: TermKeys | Ints,
        indptr: npt.NDArray[np.integer],
        docs: npt.NDArray[np.integer],
        tf: Tf | None = None,
        multi: tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], Tf] | None = None,
    ) -> None:
        """``tf`` is every posting's frequency (the postings are then packed), or
        ``multi`` the packed form of postings already packed."""
        self.cids = cids
        self.lengths = lengths
        self.files = files
        self.terms = terms if isinstance(terms, TermKeys) else TermKeys.of(terms)
        self.offsets = Offsets(indptr)
        if multi is not None:
            self.multi_terms, self.multi_offsets, self.multi_tf = multi
        else:
            assert tf is not None
            docs, self.multi_terms, self.multi_offsets, self.multi_tf = _pack(
                indptr.astype(np.int64), docs, tf
            )
        offsets = np.asarray(indptr, dtype=np.int64)
        n_multi = np.zeros(len(offsets) - 1, dtype=np.int64)
        n_multi[self.multi_terms] = np.diff(self.multi_offsets)
        self.docs = DocNumbers(docs, offsets, n_multi, len(cids))
        self.total_length = int(lengths.sum(dtype=np.int64))
        self.dead: npt.NDArray[np.bool_] | None = None  # tombstones: deleted documents
        self.dead_spans = (np.zeros(0, np.int64), np.zeros(0, np.int64))  # as (lows, highs)
        self.live_docs = len(cids)
        self.live_length = self.total_length
        self.by_cid: tuple[npt.NDArray[np.int32], Ints] | None = None  # (`locate`)

    @property
    def n_docs(self) -> int:
        return len(self.cids)

    @property
    def nbytes(self) -> int:
        arrays = (
            *(self.cids, self.lengths),
            *(self.multi_terms, self.multi_offsets, self.multi_tf),
        )
        dead = 0 if self.dead is None else self.dead.nbytes
        dead += 0 if self.by_cid is None else sum(a.nbytes for a in self.by_cid)
        index = self.terms.nbytes + self.offsets.nbytes + self.docs.nbytes
        return sum(a.nbytes for a in arrays) + index + dead + 120 * len(self.files)

    @classmethod
    def build(cls, rows: SegmentRows) -> Segment:
        """From chunk rows (consumed): one sort of their postings, the rest array work,
        page by page so the peak stays near the segment's own size."""
        n = len(rows)
        parts = rows.take_parts()
        facts = {
            "cids": np.array(rows.cids, dtype=np.int64),
            "lengths": np.array(rows.lengths, dtype=np.int32),
            "files": file_ranges(rows.file_ids),
        }
        if n > SEGMENT_DOCS:  # (one file larger than a segment)
            per_doc, keys, freqs = (np.concatenate(a) for a in zip(*parts, strict=True))
            docs = np.repeat(np.arange(n, dtype=np.int64), per_doc)
            return cls._from_postings(keys, docs, freqs, **facts)  # type: ignore[arg-type]
        total = sum(len(part[1]) for part in parts)
        return cls._lean(lean_postings(row_parts(parts), total), **facts)  # type: ignore[arg-type]

    @classmethod
    def _lean(
        cls, postings: Postings, *, cids: Ints, lengths: npt.NDArray[np.int32],
        files: dict[str, tuple[int, int]],
    ) -> Segment:  # fmt: skip
        multi = (postings.multi_terms, postings.multi_offsets, postings.multi_tf)
        return cls(
            cids=cids, lengths=lengths, files=files, terms=postings.terms,
            indptr=postings.indptr, docs=postings.docs, multi=multi,
        )  # fmt: skip

    @classmethod
    def _from_postings(
        cls,
        keys: Ints,
        docs: Ints,
        tf: npt.NDArray[np.integer],
        *,
        cids: Ints,
        lengths: npt.NDArray[np.int32],
        files: dict[str, tuple[int, int]],
    ) -> Segment:
        """From postings in any order where each document's ascend within a key."""
        if len(cids) <= SEGMENT_DOCS:
            parts = iter([(np.asarray(keys, dtype=np.int64), docs, np.asarray(tf, np.uint16))])
            postings = lean_postings(parts, len(keys))
            return cls._lean(postings, cids=cids, lengths=lengths, files=files)
        keys, order = posting_order(np.asarray(keys, dtype=np.int64))
        starts = np.flatnonzero(keys[1:] != keys[:-1]) + 1
        starts = np.concatenate([np.zeros(min(len(keys), 1), dtype=np.int64), starts])
        terms = keys[starts]
        del keys
        indptr = np.append(starts, len(order))
        local = [_LOCAL] if len(cids) <= SEGMENT_DOCS else [np.int32]
        return cls(
            cids=cids,
            lengths=lengths,
            files=files,
            terms=terms,
            indptr=indptr.astype(np.int32 if len(order) < 2**31 else np.int64),
            docs=_narrow(docs[order], local),
            tf=np.asarray(tf)[order],
        )

    def multi_frequencies(self, row: int) -> Tf | None:
        """The frequencies of term number ``row``'s first postings, those above 1 (None
        when it has none); its other postings have frequency 1."""
        at = int(np.searchsorted(self.multi_terms, row))
        if at == len(self.multi_terms) or self.multi_terms[at] != row:
            return None
        return self.multi_tf[int(self.multi_offsets[at]) : int(self.multi_offsets[at + 1])]

    @property
    def indptr(self) -> Ints:
        """Where each term's postings start, and the end (built on each call)."""
        return self.offsets.indptr()

    @property
    def tf(self) -> npt.NDArray[np.uint16]:
        """Every posting's frequency, in storage order (built on each call)."""
        tf = np.ones(self.docs.total, dtype=np.uint16)
        counts = np.diff(self.multi_offsets)
        first = self.indptr[self.multi_terms].astype(np.int64) - self.multi_offsets[:-1]
        tf[np.repeat(first, counts) + np.arange(len(self.multi_tf))] = self.multi_tf
        return tf

    def postings(self) -> tuple[Ints, Ints]:
        """(key, document) of every posting, in storage order."""
        offsets = self.indptr.astype(np.int64)
        counts = offsets[1:] - offsets[:-1]
        return np.repeat(self.terms.keys(), counts), self.docs.all(offsets).astype(np.int64)

    def tombstoned(self, file_ids: set[str]) -> Segment | None:
        """This segment less some files, in constant time but for a mask of its
        documents: the postings stay, the files' documents are marked dead (filtered at
        query time, their statistics subtracted) until `purged` drops them. None when
        nothing is left."""
        gone = [self.files[f] for f in file_ids if f in self.files]
        if not gone:
            return self
        dead = np.zeros(self.n_docs, dtype=bool) if self.dead is None else self.dead.copy()
        for low, high in gone:
            dead[low:high] = True
        live = self.n_docs - int(dead.sum())
        if not live:
            return None
        out = Segment.__new__(Segment)
        for name in Segment.__slots__:
            setattr(out, name, getattr(self, name))
        out.files = {f: span for f, span in self.files.items() if f not in file_ids}
        out.dead = dead
        # Whole files are contiguous: the dead documents as ranges, for `dead_in`.
        edges = np.flatnonzero(np.diff(np.concatenate(([0], dead.view(np.int8), [0]))))
        out.dead_spans = (edges[0::2].astype(np.int64), edges[1::2].astype(np.int64))
        out.live_docs = live
        out.live_length = int(self.lengths[~dead].sum(dtype=np.int64))
        return out

    def dead_in(self, row: int, start: int, end: int) -> int:
        """How many of term number ``row``'s postings (``start:end``) are tombstoned:
        by binary search of the dead files' ranges in its two ascending runs (postings
        with a frequency above 1, then the rest), not a pass over the postings."""
        assert self.dead is not None
        at = int(np.searchsorted(self.multi_terms, row))
        multi = 0
        if at < len(self.multi_terms) and self.multi_terms[at] == row:
            multi = int(self.multi_offsets[at + 1] - self.multi_offsets[at])
        lows, highs = self.dead_spans
        count = 0
        run = self.docs.run(row, start, end)
        for part in (run[:multi], run[multi:]):
            count += int((np.searchsorted(part, highs) - np.searchsorted(part, lows)).sum())
        return count

    def locate(self, cids: Ints) -> Ints:
        """Each chunk id's document number in this segment, -1 where it is not here
        (the ids sorted once, on the first call: 12 bytes a document)."""
        if self.by_cid is None:
            order = np.argsort(self.cids, kind="stable").astype(np.int32)
            self.by_cid = (order, self.cids[order])
        order, ids = self.by_cid
        at = np.minimum(np.searchsorted(ids, cids), len(ids) - 1)
        return np.where(ids[at] == cids, order[at], -1).astype(np.int64)

    @property
    def dead_share(self) -> float:
        return 1 - self.live_docs / self.n_docs if self.n_docs else 0.0

    def purged(self) -> Segment:
        """The same live documents without the dead ones' postings (array work)."""
        if self.dead is None:
            return self
        out = self._masked(set(), ~self.dead)
        assert out is not None  # a segment with no live document is dropped, not kept
        return out

    def without(self, file_ids: set[str]) -> Segment | None:
        """This segment less some files (None when nothing is left): masks, no re-sort."""
        gone = [self.files[f] for f in file_ids if f in self.files]
        if not gone and self.dead is None:
            return self
        keep = np.ones(self.n_docs, dtype=bool) if self.dead is None else ~self.dead
        for low, high in gone:
            keep[low:high] = False
        return self._masked(file_ids, keep)

    def _masked(self, file_ids: set[str], keep: npt.NDArray[np.bool_]) -> Segment | None:
        """The documents of ``keep`` (the files left: ours but ``file_ids``)."""
        if not keep.any():
            return None
        renumber = np.cumsum(keep) - 1
        indptr = self.indptr
        docs = self.docs.all(indptr)
        kept = keep[docs]
        ends = np.concatenate([[0], np.cumsum(kept, dtype=np.int64)])[indptr]
        live = np.flatnonzero(ends[1:] > ends[:-1])
        files = {}
        for file_id, (low, high) in self.files.items():
            if file_id not in file_ids:
                files[file_id] = (int(renumber[low]), int(renumber[high - 1]) + 1)
        # A term's multi postings stay first in its run: only their counts change.
        counts = np.diff(self.multi_offsets)
        first = indptr[self.multi_terms] - self.multi_offsets[:-1]
        held = kept[np.repeat(first, counts) + np.arange(len(self.multi_tf))]
        left = (
            np.add.reduceat(held.astype(np.int32), self.multi_offsets[:-1]) if len(held) else counts
        )
        still = left > 0
        row = np.cumsum(ends[1:] > ends[:-1]) - 1  # a live term's new number
        offsets = np.zeros(int(still.sum()) + 1, dtype=np.int32)
        np.cumsum(left[still], out=offsets[1:])
        multi = (row[self.multi_terms[still]].astype(np.int32), offsets, self.multi_tf[held])
        return Segment(
            cids=self.cids[keep],
            lengths=self.lengths[keep],
            files=files,
            terms=self.terms.take(live),
            indptr=np.append(ends[live], ends[-1]),
            docs=renumber[docs[kept]].astype(docs.dtype),
            multi=multi,
        )

    @classmethod
    def merge(cls, segments: Sequence[Segment]) -> Segment:
        """One segment holding these segments' live documents, in their order."""
        keys, docs, tfs, files = [], [], [], {}
        offset = 0
        segments = [segment.purged() for segment in segments]
        for segment in segments:
            k, d = segment.postings()
            keys.append(k)
            docs.append(d + offset)
            tfs.append(segment.tf)
            for file_id, (low, high) in segment.files.items():
                files[file_id] = (low + offset, high + offset)
            offset += segment.n_docs
        return cls._from_postings(
            np.concatenate(keys),
            np.concatenate(docs),
            np.concatenate(tfs),
            cids=np.concatenate([s.cids for s in segments]),
            lengths=np.concatenate([s.lengths for s in segments]),
            files=files,
        )
