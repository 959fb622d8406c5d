"""Exact top-k without summing every posting of a common word (MaxScore).

A term adds less than its idf to any document's score (``tf / (tf + norm)`` is below 1).
So when ``k`` documents are known to score at least ``theta``, a document whose sum on
the rarer (essential) terms, plus the idfs of the common terms left, stays below
``theta`` cannot enter the top ``k``, and a document holding only common terms cannot
either once their idfs sum below ``theta``.

The rarest terms are summed as the exhaustive path sums them; ``theta`` is the ``k``-th
best full score of each segment's best few; the common terms are then only looked up
for the documents that could still reach it. While those would be many, the next
rarest term joins the essential ones instead (at the end every term is summed: the
exhaustive path). Scores are the same float32 weights summed in float64 as on that
path (`_scoring`), so the answer is identical.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ._scoring import DENSE, Norms, Term, accumulate, look_up, spread, weights
from ._segment import Segment

__all__ = ["pruned_top"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
_MARGIN = 1 + 1e-6  # float32 weights: an upper bound kept safely above them
_LOOKUP_COST = 8  # a look-up costs about as much as summing this many postings


class _Sums:
    """One segment's sums on the essential terms so far: sparse (documents, sums) while
    few documents hold one, then dense (a float per document of the segment)."""

    __slots__ = ("dense", "docs", "norm", "segment", "sums", "terms")

    def __init__(self, segment: Segment, norm: Norms, terms: list[Term]) -> None:
        self.segment, self.norm, self.terms = segment, norm, terms
        self.docs: Ints = np.zeros(0, np.int64)
        self.sums: Floats = np.zeros(0)
        self.dense: Floats | None = None

    def add(self, keys: set[int]) -> None:
        adding = [t for t in self.terms if t.key in keys]
        postings = sum(t.end - t.start for t in adding)
        if not postings:
            return
        if self.dense is None and (len(self.docs) + postings) * DENSE < self.segment.n_docs:
            docs, sums = accumulate(self.segment, self.norm, adding)
            if not len(docs):  # (all tombstoned)
                return
            merged = np.concatenate([self.docs, docs])
            order = np.argsort(merged, kind="stable")
            merged = merged[order]
            starts = np.flatnonzero(np.concatenate(([True], merged[1:] != merged[:-1])))
            self.sums = np.add.reduceat(np.concatenate([self.sums, sums])[order], starts)
            self.docs = merged[starts]
            return
        pairs = [weights(self.segment, self.norm, t) for t in adding]
        dense = spread(self.segment, [p[0] for p in pairs], [p[1] for p in pairs])
        if self.dense is None:
            dense[self.docs] += self.sums
        else:
            dense += self.dense
        self.dense = dense

    def above(self, reach: float) -> Ints:
        """The documents whose sum is at least ``reach`` (above 0)."""
        if self.dense is None:
            return self.docs[self.sums >= reach]
        return np.flatnonzero(self.dense >= reach) if reach > 0 else np.flatnonzero(self.dense)

    def count(self, reach: float) -> int:
        values = self.sums if self.dense is None else self.dense
        return int(np.count_nonzero(values >= reach)) if reach > 0 else len(self.above(reach))

    def best(self, each: int) -> Ints:
        """Up to ``each`` documents with the highest sums."""
        if self.dense is None:
            values, docs = self.sums, self.docs
        else:
            values, docs = self.dense, None
        if len(values) <= each:
            top = np.arange(len(values))
        elif each == 1:
            top = np.array([int(np.argmax(values))])
        else:
            top = np.argpartition(values, len(values) - each)[len(values) - each :]
        top = top if docs is None else docs[top]
        return top if self.dense is None else top[self.dense[top] > 0]

    def full(self, docs: Ints, keys: set[int]) -> Floats:
        """The full scores of ``docs`` (holding an essential term)."""
        if self.dense is None:
            sums = self.sums[np.searchsorted(self.docs, docs)]
        else:
            sums = self.dense[docs]
        others = [t for t in self.terms if t.key not in keys]
        return sums + look_up(self.segment, self.norm, others, docs)


def pruned_top(
    segments: Sequence[Segment], norms: Sequence[Norms], terms: list[Term],
    idf: npt.NDArray[np.float32], df: Ints, k: int,
) -> tuple[Ints, Floats] | None:  # fmt: skip
    """Candidates holding the best ``k`` (chunk ids, full scores), or None for a query
    of one term (nothing to leave out)."""
    present = np.flatnonzero(df > 0)
    order = present[np.argsort(df[present], kind="stable")].tolist()  # rarest first
    if len(order) < 2:
        return None
    bounds = idf[order].astype(np.float64) * _MARGIN
    rest = np.concatenate([np.cumsum(bounds[::-1])[::-1], [0.0]])  # rest[j]: order[j:]
    by_segment: dict[int, list[Term]] = {}
    for term in terms:
        by_segment.setdefault(term.segment, []).append(term)
    parts = [_Sums(segments[at], norms[at], mine) for at, mine in by_segment.items()]
    essential, theta = 0, 0.0
    wanted = 1
    while wanted < len(order) and int(df[order[:wanted]].sum()) < k:
        wanted += 1
    while True:
        added = set(order[essential:wanted])
        essential = wanted
        keys = set(order[:essential])
        for part in parts:
            part.add(added)
        if essential == len(order):
            break
        theta = max(theta, _theta(parts, keys, k))
        needed = int(np.argmax(rest < theta)) if theta > 0 else len(order)
        if needed > essential:
            wanted = needed
            continue
        could = sum(part.count(theta - rest[essential]) for part in parts)
        left = int(df[order[essential:]].sum())
        if could * (len(order) - essential) * _LOOKUP_COST <= left:
            break
        wanted = essential + 1
    reach = theta - rest[essential]  # what an essential sum must reach to matter
    cids, scores = [], []
    for part in parts:
        docs = part.above(reach)
        if len(docs):
            cids.append(part.segment.cids[docs])
            scores.append(part.full(docs, keys))
    if not cids:
        return np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(cids), np.concatenate(scores)


def _theta(parts: list[_Sums], keys: set[int], k: int) -> float:
    """A score ``k`` documents are known to reach: the ``k``-th best full score among
    each segment's best few on the essential terms (0 while there are fewer than k)."""
    each = math.ceil(k / max(1, len(parts)))
    found = [part.full(docs, keys) for part in parts if len(docs := part.best(each))]
    scores = np.concatenate(found) if found else np.zeros(0)
    if len(scores) < k:
        return 0.0
    return float(np.partition(scores, len(scores) - k)[len(scores) - k])
