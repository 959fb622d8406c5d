"""Reciprocal rank fusion of ranked chunk lists, within a base and across bases.

Lexical BM25 scores are computed per base (its own term statistics), so they are not
comparable across bases; cosine similarities from one embedding model are. The lists
fused are therefore each base's lexical ranking, plus one dense ranking of every
base's nearest chunks merged by similarity. A chunk scores the sum of
``weight / (K + rank)`` over the lists it is in: a rank, never a raw score, so no
list's scale dominates, and a chunk both signals find rises.

K = 2 and a lexical weight of 0.5 (dense 1), chosen on the bench's labelled set
(`bench/bench_semantic.py`): with Cormack et al.'s K = 60 ranks 1 and 20 differ little,
so a paraphrase's lexical top hit, matched on words such as "the", outranks the dense
top hit (hybrid recall@5 0.86 paraphrase, 0.42 cross-lingual, against 0.97 and 0.98
with these values; exact wording stays 1.00 either way).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["RRF_K", "WEIGHTS", "Fused", "fuse"]

RRF_K = 2
WEIGHTS = {"lexical": 0.5, "dense": 1.0}
Key = int  # a chunk id: unique across bases, never reused


@dataclass
class Fused:
    key: Key
    score: float
    signals: tuple[str, ...]


def fuse(lists: Sequence[tuple[str, Sequence[Key]]], limit: int) -> list[Fused]:
    """The best ``limit`` keys over ``(signal, ranked keys)`` lists, best first; ties go
    to the key found first (earlier lists, higher ranks). Plain dicts while summing and
    one sort: a query fuses about forty keys and keeps fifteen, so what costs is Python
    per key; the signals' tuples are made once per set of list names, not per query."""
    scores: dict[Key, float] = {}
    found: dict[Key, int] = {}  # a bit per list that has the key
    for bit, (signal, keys) in enumerate(lists):
        flag = 1 << bit
        weight = WEIGHTS[signal]
        for rank, key in enumerate(keys, start=RRF_K + 1):
            share = weight / rank
            if key in found:
                scores[key] += share
                found[key] |= flag
            else:
                scores[key] = share
                found[key] = flag
    best = sorted(scores, key=scores.__getitem__, reverse=True)[:limit]  # stable
    signals = _signals(tuple(signal for signal, _ in lists))
    return [Fused(key, scores[key], signals[found[key]]) for key in best]


@functools.lru_cache(maxsize=16)
def _signals(names: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The signals' names of every bit mask over ``names``, by mask."""
    return tuple(
        tuple(n for i, n in enumerate(names) if mask >> i & 1) for mask in range(1 << len(names))
    )
