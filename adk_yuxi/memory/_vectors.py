"""Memory vectors: the embedder's side of `SqlMemoryService` (opt-in, `embedder=`).

Texts are embedded in a worker thread and before any transaction opens, so neither
the event loop nor a database lock waits on the model. When the model fails (or a
search's question takes over 10 s), memories are stored by text and a search answers by
full text (`ModelGuard`: logged, and the model is not asked again for a while); only
`fill` raises `MemoryEmbeddingError`. A vector is written in the
same transaction as its memory row, and only where that row is live and still holds
the text that was embedded (its ``body``), so a memory replaced or deleted meanwhile
never gets a vector of other words. Each vector records its model: a search ranks
only the vectors of the configured model, so two models never mix, and memories
without one answer by full text until `fill` (``embed_missing``) embeds them.
Vectors are float16 rows, L2-normalised, as the knowledge bases store theirs; a
search reads the user's vectors and ranks them exactly (a user's memories are few).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from google.genai import types

from .._sql.store import SqlStore, Tx
from ..knowledge._backoff import Backoff
from ..knowledge._dense import VECTOR_DTYPE
from ..knowledge._embedding import Embedder
from ..knowledge._fusion import fuse
from ..knowledge._model_guard import CALL_SECONDS, ModelGuard
from ._content import text_of
from ._errors import MemoryEmbeddingError

__all__ = ["MemoryVectors", "Pending"]

logger = logging.getLogger("adk_yuxi.memory")

_FILL_BATCH = 32
_IN_BATCH = 500  # memory ids per lookup statement
Pending = tuple[dict[str, Any], str]  # (memory row as inserted, the text it holds)

_WRITE = (
    "INSERT INTO yx_memory_vectors (mid, model, vector)"
    " SELECT mid, :model, :vector FROM yx_memories"
    " WHERE {key} AND deleted = :deleted AND body = :body"
    " ON CONFLICT (mid) DO UPDATE SET model = excluded.model, vector = excluded.vector"
)
_BY_ID = _WRITE.format(key="app_name = :app AND user_id = :user AND memory_id = :memory_id")
_BY_MID = _WRITE.format(key="mid = :mid")
_COLUMN = {"app": "app_name", "user": "user_id"}


class MemoryVectors:
    """One embedder's vectors in the memory tables."""

    def __init__(
        self, embedder: Embedder, retry: Backoff | None = None, seconds: float = CALL_SECONDS
    ) -> None:
        self.embedder = embedder
        # A failing or (for a search) slow model: stored by text, searched by full text.
        self.guard = ModelGuard(
            logger, "full text", "yuxi.memory.dense", seconds=seconds, retry=retry
        )

    async def passages_or_none(self, texts: Sequence[str]) -> np.ndarray | None:
        """The texts' vectors, or None when the model fails (logged) or failed a moment
        ago: the memories are stored by text and embedded by a later ingest of their
        session or `fill`, so a turn never fails because the model is down. Not bounded
        in time: a session's first ingest may embed many texts."""
        if self.guard.skipping():
            return None
        return await self.guard.call(self.passages(texts), bounded=False)

    async def query_or_none(self, text: str) -> np.ndarray | None:
        """The question's vector, or None as above (or after `seconds`): the search
        answers by full text."""
        if self.guard.skipping():
            return None
        return await self.guard.call(self.query(text))

    @property
    def model(self) -> str:
        return self.embedder.name

    async def passages(self, texts: Sequence[str]) -> np.ndarray:
        """The texts' vectors (one row each, unit length), in a worker thread."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), np.float32)
        rows = await self._run("store", len(texts), self.embedder.passages, texts)
        if rows.ndim != 2 or len(rows) != len(texts):
            raise MemoryEmbeddingError(
                model=self.model, action="store", count=len(texts),
                reason=f"it returned {rows.shape} for {len(texts)} texts",
            )  # fmt: skip
        return rows

    async def query(self, text: str) -> np.ndarray:
        """The question's vector, in a worker thread."""
        row = await self._run("search", 1, self.embedder.query, text)
        if row.ndim != 1 or not row.size:
            raise MemoryEmbeddingError(
                model=self.model, action="search", count=1, reason=f"it returned {row.shape}"
            )
        return row

    async def _run(self, action: str, count: int, work: Any, arg: Any) -> np.ndarray:
        try:
            out = np.asarray(await asyncio.to_thread(work, arg), dtype=np.float32)
        except Exception as exc:  # any embedder: a provider, the offline engine, a plug-in
            raise MemoryEmbeddingError(
                model=self.model, action=action, count=count, reason=str(exc) or repr(exc)
            ) from exc
        if not np.isfinite(out).all():
            raise MemoryEmbeddingError(
                model=self.model, action=action, count=count, reason="a vector is not finite"
            )
        return out

    async def unembedded(
        self, store: SqlStore, app: str, user: str, pending: list[Pending]
    ) -> list[Pending]:
        """The rows an ingest (which never replaces a memory) must still embed: new
        ones, and live ones stored before the embedder (with no vector of its model)."""
        done: set[str] = set()
        ids = list(dict.fromkeys(row["memory_id"] for row, _ in pending))
        async with store.read() as tx:
            for at in range(0, len(ids), _IN_BATCH):
                batch = {f"i{n}": i for n, i in enumerate(ids[at : at + _IN_BATCH])}
                found = await tx.fetchall(
                    "SELECT m.memory_id FROM yx_memories m LEFT JOIN yx_memory_vectors v"
                    " ON v.mid = m.mid AND v.model = :model"
                    " WHERE m.app_name = :app AND m.user_id = :user"
                    f" AND m.memory_id IN ({', '.join(':' + k for k in batch)})"
                    " AND (m.deleted = :deleted OR v.mid IS NOT NULL)",
                    {"model": self.model, "app": app, "user": user, "deleted": True, **batch},
                )
                done.update(str(r[0]) for r in found)
        return [(row, text) for row, text in pending if row["memory_id"] not in done]

    async def write(self, tx: Tx, pending: list[Pending], vectors: np.ndarray) -> None:
        """Stores the rows' vectors, in the transaction that wrote the rows."""
        await tx.executemany(
            _BY_ID,
            [
                {
                    "model": self.model, "vector": _blob(vector), "app": row["app"],
                    "user": row["user"], "memory_id": row["memory_id"], "deleted": False,
                    "body": row["body"],
                }
                for (row, _), vector in zip(pending, vectors, strict=True)
            ],
        )  # fmt: skip

    async def nearest(
        self, tx: Tx, app: str, user: str, vector: np.ndarray, limit: int
    ) -> list[int]:
        """The row ids of the user's ``limit`` live memories nearest ``vector``."""
        rows = await tx.fetchall(
            "SELECT v.mid, v.vector FROM yx_memories m JOIN yx_memory_vectors v"
            " ON v.mid = m.mid WHERE m.app_name = :app AND m.user_id = :user"
            " AND m.deleted = :deleted AND v.model = :model",
            {"app": app, "user": user, "deleted": False, "model": self.model},
        )
        width = vector.size * np.dtype(VECTOR_DTYPE).itemsize
        rows = [r for r in rows if len(r[1]) == width]  # same name, other dimensions: none
        if not rows:
            return []
        matrix = np.frombuffer(b"".join(bytes(r[1]) for r in rows), VECTOR_DTYPE)
        scores = matrix.reshape(len(rows), vector.size).astype(np.float32) @ vector
        order = np.argsort(-scores, kind="stable")[:limit]
        return [int(rows[i][0]) for i in order]

    @staticmethod
    def fused(lexical: list[int], dense: list[int], limit: int) -> list[int]:
        """The best ``limit`` row ids of both rankings, by the knowledge bases' reciprocal
        rank fusion (its K and weights, chosen on the same labelled set)."""
        return [f.key for f in fuse([("lexical", lexical), ("dense", dense)], limit)]

    async def fill(
        self, store: SqlStore, app: str | None, user: str | None, batch: int = _FILL_BATCH
    ) -> int:
        """Embeds the live memories (of ``app``/``user`` when given) with no vector of
        this model, a batch at a time: each embedded outside any transaction, then
        written in a short one. Returns how many got a vector."""
        given = {"app": app, "user": user}
        scoped = {key: value for key, value in given.items() if value is not None}
        scope = "".join(f" AND m.{_COLUMN[key]} = :{key}" for key in scoped)
        done, after = 0, -1
        while True:
            async with store.read() as tx:
                rows = await tx.fetchall(
                    "SELECT m.mid, m.content, m.body FROM yx_memories m"
                    " LEFT JOIN yx_memory_vectors v ON v.mid = m.mid AND v.model = :model"
                    f" WHERE m.mid > :after AND m.deleted = :deleted AND m.body <> ''{scope}"
                    f" AND v.mid IS NULL ORDER BY m.mid LIMIT {int(batch)}",
                    {"model": self.model, "after": after, "deleted": False, **scoped},
                )
            if not rows:
                return done
            after = int(rows[-1][0])
            texts = [text_of(types.Content.model_validate_json(str(r[1]))) for r in rows]
            vectors = await self.passages(texts)
            self.guard.succeeded()  # it works again: stores and searches may ask it
            async with store.write() as tx:
                await tx.executemany(
                    _BY_MID,
                    [
                        {"model": self.model, "vector": _blob(v), "mid": int(r[0]),
                         "deleted": False, "body": r[2]}
                        for r, v in zip(rows, vectors, strict=True)
                    ],
                )  # fmt: skip
            done += len(rows)


def _blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, np.float32).astype(VECTOR_DTYPE).tobytes()
