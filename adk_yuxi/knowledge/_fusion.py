"""Reciprocal rank fusion of ranked chunk lists, within a base and across bases.

Lexical BM25 scores are computed per base (its own term statistics), so they are not
comparable across bases; cosine similarities from one embedding model are. The lists
fused are therefore each base's lexical ranking, plus one dense ranking of every
base's nearest chunks merged by similarity. A chunk scores the sum of
``1 / (K + rank)`` over the lists it is in (K = 60, as Cormack et al. chose): a rank,
never a raw score, so no list's scale dominates, and a chunk both signals find rises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["RRF_K", "Fused", "fuse"]

RRF_K = 60
Key = tuple[str, str, int]  # (kb_id, file_id, seq)


@dataclass
class Fused:
    key: Key
    score: float = 0.0
    signals: set[str] = field(default_factory=set)


def fuse(lists: Sequence[tuple[str, Sequence[Key]]], limit: int) -> list[Fused]:
    """The best ``limit`` keys over ``(signal, ranked keys)`` lists, best first; ties go
    to the key found first (earlier lists, higher ranks)."""
    found: dict[Key, Fused] = {}
    for signal, keys in lists:
        for rank, key in enumerate(keys, start=1):
            item = found.get(key)
            if item is None:
                item = found[key] = Fused(key)
            item.score += 1.0 / (RRF_K + rank)
            item.signals.add(signal)
    ordered = sorted(found.values(), key=lambda item: -item.score)  # stable: ties keep order
    return ordered[:limit]
