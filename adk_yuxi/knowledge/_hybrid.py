"""Hybrid retrieval over one or several bases: lexical BM25 and dense similarity, fused.

Each base answers lexically as it always has (its index, revision and freshness rules).
When bases hold vectors from the configured embedding model, the question is embedded
once and each of them answers densely too; `fuse` then ranks every candidate by
reciprocal rank. Across bases, or beside vectors, the lexical candidates are ordered
by the weighted share of the question they hold (their index says which terms), and
those holding too little are left out. A query reads, in one statement, every named
base's revision and vector revision; ranks on chunk ids alone; and reads the rows of
the fused best in one more statement. A chunk of a deleted file is never returned: its
row is gone. A single base without vectors answers exactly as before (BM25 scores),
and every hit says which signals found it. When the model cannot embed the question,
the query answers as if no base held vectors, and so do the next ones for a while
(`Backoff`): a search never fails because the embedding endpoint is down.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._sql.store import SqlStore
from ..observability._tracing import annotate
from ._backoff import Backoff
from ._dense import BaseState, DenseHit, DenseSearch, base_states
from ._embedding import Embedder
from ._fusion import fuse
from ._model_guard import CALL_SECONDS, ModelGuard
from ._search import ChunkHit, KnowledgeSearch
from ._terms import query_keys

__all__ = ["QUERY_CACHE", "HybridSearch"]

logger = logging.getLogger(__name__)

_CANDIDATES = 20
QUERY_CACHE = 256  # questions whose vectors are kept (a repeated question is not re-embedded)
_SPARE = 5  # fused hits read beyond top_k, for dense hits deleted meanwhile
EVIDENCE = 0.4
"""Beside vectors, a lexical candidate counts only if it holds this share of the
question's weighted terms: below it, it matched little but words such as "the", and
its rank only pushed the dense side's answer down (`bench/bench_cross_base.py`:
cross-lingual first hits 0.44 -> 0.69 across bases, 0.47 -> 0.69 in one)."""

Ranked = list[tuple[int, float]]  # (chunk id, score), best first


class HybridSearch:
    """The query path of one store: its lexical and dense indexes and its embedder."""

    def __init__(
        self,
        lexical: KnowledgeSearch,
        dense: DenseSearch,
        embedder: Embedder | None,
        query_cache: int = QUERY_CACHE,
        retry: Backoff | None = None,
        embed_seconds: float = CALL_SECONDS,
    ) -> None:
        # The question's embedding: lexical when the model fails or is slow.
        self.guard = ModelGuard(
            logger, "lexical", "yuxi.knowledge.dense", seconds=embed_seconds, retry=retry
        )
        self.lexical = lexical
        self.dense = dense
        self.embedder = embedder
        self.query_cache = query_cache
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._other_models: set[tuple[str, str]] = set()  # (base, model) already warned of

    def _cached(self, text: str) -> np.ndarray | None:
        vector = self._vectors.get(text)
        if vector is not None:
            self._vectors.move_to_end(text)
        return vector

    def _embed(self, text: str) -> tuple[np.ndarray, float]:
        """The question's vector and the milliseconds it took (in a worker thread)."""
        assert self.embedder is not None
        started = time.perf_counter()
        vector = self.embedder.query(text)
        return vector, (time.perf_counter() - started) * 1000

    def _remember(self, text: str, vector: np.ndarray) -> None:
        if self.query_cache:
            self._vectors[text] = vector
            while len(self._vectors) > self.query_cache:
                self._vectors.popitem(last=False)

    async def embed_query(self, text: str) -> np.ndarray:
        cached = self._cached(text)
        if cached is not None:
            return cached
        vector, _ = await asyncio.to_thread(self._embed, text)
        self._remember(text, vector)
        return vector

    async def query(
        self, store: SqlStore, kb_ids: Sequence[str], query: str, top_k: int,
        file_id: str | None = None,
    ) -> list[ChunkHit]:  # fmt: skip
        """The best ``top_k`` chunks of ``kb_ids`` for ``query``, best first."""
        # SQLite reads run inline and a cached index ranks without waiting, so a query
        # might never suspend: a loop of them (polling for a file) would starve every
        # other task of the loop, the ingest it waits for included. One turn each.
        await asyncio.sleep(0)
        states = await base_states(store, kb_ids)
        labels = self._dense_labels(states)
        vector = self._cached(query) if labels else None
        if vector is None and labels and self.guard.skipping():
            labels = {}  # the model failed a moment ago: lexical, as without vectors
        keys = query_keys(query)
        if not labels and len(kb_ids) == 1:
            return await self._lexical_only(store, kb_ids[0], states, keys, top_k, file_id)
        wanted = max(top_k, _CANDIDATES)
        embedding = None
        if labels and vector is None:  # the model runs while the lexical side ranks
            embedding = asyncio.ensure_future(asyncio.to_thread(self._embed, query))
            embedding.add_done_callback(_retrieved)
        try:
            lexical = {
                kb_id: await self.lexical.rank(
                    store, kb_id, keys, wanted, file_id, states[kb_id].revision
                )
                for kb_id in kb_ids
                if kb_id in states
            }
            if embedding is not None:
                got = await self.guard.call(embedding, what="question not embedded")
                if got is None:  # lexical, as without vectors
                    labels, vector = {}, None
                else:
                    vector, spent_ms = got
                    self._remember(query, vector)
                    annotate({"yuxi.knowledge.embed_ms": spent_ms})
        finally:
            if embedding is not None and not embedding.done():
                embedding.cancel()
        dense = await self._dense(store, labels, vector, wanted, file_id) if labels else []
        rows: dict[int, Any] = {}
        if len(lexical) == 1 and not labels:
            lexical_order = [cid for ranked in lexical.values() for cid, _ in ranked]
        else:  # several bases, or vectors beside: ranked on what each candidate holds
            holds = {
                kb: self.lexical.holds(kb, keys, [c for c, _ in r]) for kb, r in lexical.items()
            }
            lexical_order = _lexical_ranking(lexical, holds, EVIDENCE if labels else 0.0)
        lists = [("lexical", lexical_order), ("dense", [h.cid for h in dense])]
        fused = fuse(lists, top_k + _SPARE)
        out: list[ChunkHit] = []
        at = 0
        while len(out) < top_k and at < len(fused):
            # The rows of as many as are still wanted: more only when some were deleted.
            batch = fused[at : at + top_k - len(out)]
            at += len(batch)
            missing = [f.key for f in batch if f.key not in rows]
            if missing:
                rows.update(await _rows(store, missing))
            out += [
                _hit(rows[f.key], round(f.score, 6), f.signals)
                for f in batch
                if _live(rows, f.key, kb_ids)
            ]
        return out

    async def _lexical_only(
        self, store: SqlStore, kb_id: str, states: dict[str, BaseState], keys: list[int],
        top_k: int, file_id: str | None,
    ) -> list[ChunkHit]:  # fmt: skip
        """A base without vectors: its BM25 ranking and scores, as before hybrid."""
        state = states.get(kb_id)
        if state is None:
            return []
        ranked = await self.lexical.rank(store, kb_id, keys, top_k, file_id, state.revision)
        rows = await _rows(store, [cid for cid, _ in ranked])
        return [_hit(rows[cid], score) for cid, score in ranked if _live(rows, cid, [kb_id])]

    def _dense_labels(self, states: dict[str, BaseState]) -> dict[str, tuple[str, str]]:
        if self.embedder is None:
            return {}
        model = self.embedder.name
        found: dict[str, tuple[str, str]] = {}
        for kb, state in states.items():
            label = state.dense_label(model)
            if label is not None:
                found[kb] = label
            elif state.vectors is not None:
                self._warn_other_model(kb, state.vectors[1])
        return found

    def _warn_other_model(self, kb_id: str, recorded: str) -> None:
        """Once per base and model: a base embedded by another model answers lexically
        only, which a user who just configured a model would not otherwise see."""
        if (kb_id, recorded) in self._other_models:
            return
        self._other_models.add((kb_id, recorded))
        assert self.embedder is not None
        logger.warning(
            "knowledge base %r holds vectors from %r, not %r: it answers lexically only"
            " until re-embedded (`yuxi kb embed %s --replace`)",
            kb_id, recorded, self.embedder.name, kb_id,
        )  # fmt: skip

    async def _dense(
        self, store: SqlStore, labels: dict[str, tuple[str, str]], vector: np.ndarray | None,
        wanted: int, file_id: str | None,
    ) -> list[DenseHit]:  # fmt: skip
        """The ``wanted`` nearest chunks over the bases with vectors, by similarity."""
        assert self.embedder is not None and vector is not None
        found: list[DenseHit] = []
        for kb_id, label in labels.items():
            found += await self.dense.search(
                store, kb_id, label, self.embedder.name, vector, wanted, file_id
            )
        if len(labels) > 1:
            found.sort(key=lambda hit: -hit.similarity)
        return found[:wanted]


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Marks an embedding's failure seen when the query it served failed first."""
    if not task.cancelled():
        task.exception()


def _lexical_ranking(
    per_base: dict[str, Ranked], holds: dict[str, np.ndarray], floor: float
) -> list[int]:
    """BM25 scores of different bases do not compare (a base of one chunk ranks it first
    on the word "the"), so the candidates of all of them are scored alike: the share of
    the question's terms each holds (``holds``: its base's index says which), every term
    weighted by its inverse frequency among the candidates (a word most of them hold,
    "the", counts for little); ties keep each base's own order. Candidates at or below
    ``floor`` are left out."""
    pool = [(rank, cid) for ranked in per_base.values() for rank, (cid, _) in enumerate(ranked)]
    if not pool:
        return []
    matrix = np.concatenate([holds[kb_id] for kb_id in per_base])
    if not matrix.shape[1]:
        return [cid for _, cid in sorted(pool)]
    found = matrix.sum(axis=0)
    weights = np.log1p((len(pool) - found + 0.5) / (found + 0.5))
    shares = matrix @ weights / weights.sum()
    order = sorted(range(len(pool)), key=lambda i: (-float(shares[i]), pool[i][0]))
    return [pool[i][1] for i in order if shares[i] > floor]


def _live(rows: dict[int, Any], cid: int, kb_ids: Sequence[str]) -> bool:
    """The chunk still exists, in one of the bases asked about, and its file too."""
    row = rows.get(cid)
    return row is not None and row[1] in kb_ids and row[7] is not None


def _hit(row: Any, score: float, signals: tuple[str, ...] = ("lexical",)) -> ChunkHit:
    return ChunkHit(
        kb_id=row[1], file_id=row[2], file_name=row[7], seq=int(row[3]),
        start_line=int(row[4]), end_line=int(row[5]), content=row[6], score=score,
        signals=signals,
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
    """The rows of these chunks that still exist, by chunk id, in one statement."""
    cids = list(dict.fromkeys(cids))
    if not cids:
        return {}
    async with store.read() as tx:
        rows = await tx.fetchall(_rows_sql(len(cids)), {f"c{i}": c for i, c in enumerate(cids)})
    return {int(r[0]): r for r in rows}
