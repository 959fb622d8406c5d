"""Hybrid retrieval over one or several bases: lexical BM25 and dense similarity, fused.

Each base answers lexically as it always has (its index, revision and freshness rules).
When bases hold vectors from the configured embedding model, the question is embedded
once and each of them answers densely too; `fuse` then ranks every candidate by
reciprocal rank. Dense candidates are read back by chunk id after the search, so a
chunk of a deleted file is never returned. A single base without vectors answers
exactly as before (BM25 scores), and every hit says which signals found it.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._sql.store import SqlStore
from ..observability._tracing import annotate
from ._dense import DenseHit, DenseSearch, vector_labels
from ._embedding import Embedder
from ._fusion import Key, fuse
from ._search import ChunkHit, KnowledgeSearch
from ._terms import chunk_terms, query_keys

__all__ = ["HybridSearch"]

_CANDIDATES = 20
_QUERY_CACHE = 256


class HybridSearch:
    """The query path of one store: its lexical and dense indexes and its embedder."""

    def __init__(
        self, lexical: KnowledgeSearch, dense: DenseSearch, embedder: Embedder | None
    ) -> None:
        self.lexical = lexical
        self.dense = dense
        self.embedder = embedder
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    async def embed_query(self, text: str) -> np.ndarray:
        assert self.embedder is not None
        vector = self._vectors.get(text)
        if vector is None:
            vector = await asyncio.to_thread(self.embedder.query, text)
            self._vectors[text] = vector
            if len(self._vectors) > _QUERY_CACHE:
                self._vectors.popitem(last=False)
        self._vectors.move_to_end(text)
        return vector

    async def _dense_labels(
        self, store: SqlStore, kb_ids: Sequence[str]
    ) -> dict[str, tuple[str, str]]:
        if self.embedder is None:
            return {}
        found = await vector_labels(store, kb_ids)
        return {kb: label for kb, (label, model) in found.items() if model == self.embedder.name}

    async def query(
        self, store: SqlStore, kb_ids: Sequence[str], query: str, top_k: int,
        file_id: str | None = None,
    ) -> list[ChunkHit]:  # fmt: skip
        """The best ``top_k`` chunks of ``kb_ids`` for ``query``, best first."""
        labels = await self._dense_labels(store, kb_ids)
        wanted = max(top_k, _CANDIDATES) if labels or len(kb_ids) > 1 else top_k
        lexical = {
            kb_id: await self.lexical.search(store, kb_id, query, wanted, file_id)
            for kb_id in kb_ids
        }
        if not labels and len(kb_ids) == 1:
            return lexical[kb_ids[0]]
        dense: list[tuple[str, DenseHit]] = []
        if labels:
            assert self.embedder is not None
            started = time.perf_counter()
            vector = await self.embed_query(query)
            annotate({"yuxi.knowledge.embed_ms": (time.perf_counter() - started) * 1000})
            for kb_id, label in labels.items():
                found = await self.dense.search(
                    store, kb_id, label, self.embedder.name, vector, wanted, file_id
                )
                dense.extend((kb_id, hit) for hit in found)
            dense.sort(key=lambda pair: -pair[1].similarity)
        lists: list[tuple[str, Sequence[Key]]] = [("lexical", _lexical_ranking(query, lexical))]
        lists.append(("dense", [(kb, h.file_id, h.seq) for kb, h in dense[:wanted]]))
        fused = fuse(lists, top_k + 5)  # a few spare, for dense hits deleted meanwhile
        known = {(h.kb_id, h.file_id, h.seq): h for hits in lexical.values() for h in hits}
        cids = {(kb, h.file_id, h.seq): h.cid for kb, h in dense}
        rows = await _rows(store, [cids[f.key] for f in fused if f.key not in known])
        out = []
        for item in fused:
            hit = known.get(item.key)
            if hit is None:
                row = rows.get(cids[item.key])
                if row is None or row[1] != item.key[0] or row[7] is None:
                    continue
                hit = ChunkHit(
                    kb_id=row[1], file_id=row[2], file_name=row[7], seq=int(row[3]),
                    start_line=int(row[4]), end_line=int(row[5]), content=row[6], score=0.0,
                )  # fmt: skip
            out.append(_with(hit, round(item.score, 6), item.signals))
            if len(out) == top_k:
                break
        return out


def _lexical_ranking(query: str, per_base: dict[str, list[ChunkHit]]) -> list[Key]:
    """One base: its BM25 order. Several: BM25 scores of different bases do not compare
    (a base of one chunk ranks it first on the word "the"), so the candidates of all of
    them are scored alike: the share of the question's terms each contains, every term
    weighted by its inverse frequency among the candidates (a word most of them hold,
    "the", counts for little); ties keep each base's own order."""
    if len(per_base) == 1:
        return [(h.kb_id, h.file_id, h.seq) for hits in per_base.values() for h in hits]
    wanted = np.array(query_keys(query), dtype=np.int64)
    pool = [(rank, h) for hits in per_base.values() for rank, h in enumerate(hits)]
    if not pool or not len(wanted):
        return []
    holds = np.array([np.isin(wanted, chunk_terms(h.content).keys) for _, h in pool])
    found = holds.sum(axis=0)
    weights = np.log1p((len(pool) - found + 0.5) / (found + 0.5))
    shares = holds @ weights / weights.sum()
    order = sorted(range(len(pool)), key=lambda i: (-float(shares[i]), pool[i][0]))
    return [(pool[i][1].kb_id, pool[i][1].file_id, pool[i][1].seq) for i in order if shares[i]]


def _with(hit: ChunkHit, score: float, signals: set[str]) -> ChunkHit:
    order = ("lexical", "dense")
    return ChunkHit(
        kb_id=hit.kb_id, file_id=hit.file_id, file_name=hit.file_name, seq=hit.seq,
        start_line=hit.start_line, end_line=hit.end_line, content=hit.content, score=score,
        signals=tuple(s for s in order if s in signals),
    )  # fmt: skip


@functools.lru_cache(maxsize=64)
def _rows_sql(count: int) -> str:
    return (
        # The name by a subquery, not a join: SQLite may otherwise walk every chunk of
        # every file instead of the few chunk ids asked for.
        "SELECT c.cid, c.kb_id, c.file_id, c.seq, c.start_line, c.end_line, c.content,"
        " (SELECT f.name FROM yx_kb_files f WHERE f.file_id = c.file_id)"
        f" FROM yx_kb_chunks c WHERE c.cid IN ({', '.join(f':c{i}' for i in range(count))})"
    )


async def _rows(store: SqlStore, cids: list[int]) -> dict[int, Any]:
    if not cids:
        return {}
    async with store.read() as tx:
        rows = await tx.fetchall(_rows_sql(len(cids)), {f"c{i}": c for i, c in enumerate(cids)})
    return {int(r[0]): r for r in rows}
