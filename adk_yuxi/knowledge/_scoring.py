"""BM25 on one segment: summing query terms' postings, or looking documents up in them.

Weights are float32 (``idf * tf / (tf + norm)``), summed per document in float64; a
score is then the same whichever way it was summed (a few float32 values add exactly
in float64), so the exhaustive and the pruned paths (`_pruning`) agree to the bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._segment import Segment

__all__ = ["DENSE", "Term", "accumulate", "best", "frequencies", "look_up", "spread", "weights"]

DENSE = 16  # postings above 1/16 of a segment's documents: a dense accumulator

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Norms = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Term:
    """One query term's postings run in one segment, with its base-wide idf."""

    segment: int
    key: int  # the term's number in the query
    row: int
    start: int
    end: int
    idf: np.float32


def weights(
    segment: Segment, norm: Norms, term: Term, only: tuple[int, int, int] | None = None
) -> tuple[npt.NDArray[np.integer], npt.NDArray[np.float32]]:
    """A term's documents (two ascending parts) and their float32 weights."""
    docs = segment.docs.run(term.row, term.start, term.end)
    tf = segment.multi_frequencies(term.row)
    if only is not None:
        inside = (docs >= only[1]) & (docs < only[2])
        docs = docs[inside]
        if tf is not None:  # (the first postings, those with a frequency above 1)
            tf = tf[inside[: len(tf)]]
    if tf is None:  # every frequency 1
        weight = norm[docs] + np.float32(1)
        np.divide(np.float32(1), weight, out=weight)
    else:
        many = np.ones(len(docs), dtype=np.float32)
        many[: len(tf)] = tf
        weight = many / (many + norm[docs])
    weight *= term.idf
    return docs, weight


def accumulate(
    segment: Segment, norm: Norms, terms: list[Term], only: tuple[int, int, int] | None = None
) -> tuple[Ints, Floats]:
    """The live documents of this segment holding any of ``terms`` (ascending, unless
    one term's) and the sum of their weights."""
    docs_of, weights_of = [], []
    for term in terms:
        docs, weight = weights(segment, norm, term, only)
        if len(docs):
            docs_of.append(docs)
            weights_of.append(weight)
    total = sum(len(d) for d in docs_of)
    if not total:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    dead = segment.dead if only is None else None  # (a file asked for is live)
    if total * DENSE >= segment.n_docs:
        dense = spread(segment, docs_of, weights_of, only is None)
        hit: Ints = np.flatnonzero(dense).astype(np.int64)
        return hit, dense[hit]
    summed: Floats
    if len(docs_of) == 1:
        found, summed = docs_of[0].astype(np.int64), weights_of[0].astype(np.float64)
    else:
        merged = np.concatenate(docs_of)
        order = np.argsort(merged, kind="stable")
        merged = merged[order]
        starts = np.flatnonzero(np.concatenate(([True], merged[1:] != merged[:-1])))
        summed = np.add.reduceat(np.concatenate(weights_of)[order].astype(np.float64), starts)
        found = merged[starts].astype(np.int64)
    if dead is not None:
        alive = ~dead[found]
        found, summed = found[alive], summed[alive]
    return found, summed


def spread(
    segment: Segment,
    docs_of: list[npt.NDArray[np.integer]],
    weights_of: list[npt.NDArray[np.float32]],
    live_only: bool = True,
) -> Floats:
    """Per document of the segment, the sum of these postings' weights (tombstoned
    documents zeroed by their spans, no pass over the rest)."""
    if not docs_of:
        return np.zeros(segment.n_docs)
    docs, values = np.concatenate(docs_of), np.concatenate(weights_of)
    dense = np.asarray(np.bincount(docs, values, minlength=segment.n_docs), dtype=np.float64)
    if live_only and segment.dead is not None:
        for low, high in zip(*segment.dead_spans, strict=True):
            dense[low:high] = 0
    return dense


def look_up(segment: Segment, norm: Norms, terms: list[Term], docs: Ints) -> Floats:
    """The sum of ``terms``' weights in each of ``docs``: binary search in each term's
    run when the documents are few against it, else its weights spread over the
    segment and picked."""
    total = np.zeros(len(docs))
    for term in terms:
        if len(docs) * 16 < term.end - term.start:
            total += _searched(segment, norm, term, docs)
        else:
            run, weight = weights(segment, norm, term)
            spread = np.zeros(segment.n_docs, dtype=np.float32)
            spread[run] = weight
            total += spread[docs]
    return total


def frequencies(segment: Segment, term: Term, docs: Ints) -> npt.NDArray[np.float32]:
    """The term's frequency in each of ``docs`` (0 where absent), by binary search in
    the two ascending parts of its run."""
    local = docs.astype(segment.docs.wide.dtype)
    run = segment.docs.run(term.row, term.start, term.end)
    multi = segment.multi_frequencies(term.row)
    split = 0 if multi is None else len(multi)
    tf = np.zeros(len(docs), dtype=np.float32)
    for part, values in ((run[:split], multi), (run[split:], None)):
        if len(part):
            at = np.minimum(np.searchsorted(part, local), len(part) - 1)
            hit = part[at] == local
            tf[hit] = 1 if values is None else values[at[hit]]
    return tf


def _searched(segment: Segment, norm: Norms, term: Term, docs: Ints) -> Floats:
    tf = frequencies(segment, term, docs)
    out = np.zeros(len(docs))
    held = np.flatnonzero(tf)
    if len(held):
        many = tf[held]
        weight = many / (many + norm[docs[held]])
        weight *= term.idf
        out[held] = weight
    return out


def best(docs: Ints, scores: Floats, cids: Ints | None, k: int) -> tuple[Ints, Floats]:
    """The best ``k``: score descending, chunk id ascending among equals (``docs`` are
    chunk ids when ``cids`` is None, else numbers into it)."""
    if len(docs) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth
        docs, scores = docs[keep], scores[keep]
    ids = docs if cids is None else cids[docs]
    order = np.lexsort((ids, -scores))[:k]
    return docs[order], scores[order]
