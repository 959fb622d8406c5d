"""Filling in chunk vectors: batched, resumable, one model per base.

Each batch is embedded outside any transaction, then written in one short transaction
that also moves the base's vector revision, so Ctrl-C loses at most the batch in
flight and never leaves half of one. Whatever is left without a vector is what the
next run (`yuxi kb embed`, or the next ingest) fills in.
"""

from __future__ import annotations

import asyncio
import uuid

import numpy as np

from .._sql.store import SqlStore, Tx
from ._cancel import checkpoint
from ._dense import VECTOR_DTYPE
from ._dense_snapshot import delete_snapshot
from ._embedding import Embedder, EmbeddingError
from ._progress import IngestProgress

__all__ = ["EmbeddingMismatchError", "check_model", "fill_vectors", "reset_vectors"]

DEFAULT_BATCH = 32


class EmbeddingMismatchError(EmbeddingError):
    """The base's vectors come from another model than the one configured."""

    def __init__(self, kb_id: str, recorded: str, configured: str) -> None:
        super().__init__(
            f"knowledge base {kb_id!r} holds vectors from {recorded!r}, not {configured!r}:"
            f" set YUXI_EMBEDDING_MODEL={recorded}, or re-embed it with"
            f" `yuxi kb embed {kb_id} --replace`"
        )


async def _recorded(tx: Tx, kb_id: str) -> tuple[str, int] | None:
    row = await tx.fetchone(
        "SELECT model, dims FROM yx_kb_embeddings WHERE kb_id = :kb", {"kb": kb_id}
    )
    return None if row is None else (str(row[0]), int(row[1]))


async def check_model(store: SqlStore, kb_id: str, embedder: Embedder) -> None:
    """Refuses an embedder other than the one that made the base's vectors."""
    async with store.read() as tx:
        recorded = await _recorded(tx, kb_id)
    if recorded is not None and recorded[0] != embedder.name:
        raise EmbeddingMismatchError(kb_id, recorded[0], embedder.name)


async def _missing(store: SqlStore, kb_id: str, after: int, limit: int) -> list[tuple[int, str]]:
    async with store.read() as tx:
        rows = await tx.fetchall(
            "SELECT c.cid, c.content FROM yx_kb_chunks c LEFT JOIN yx_kb_vectors v"
            " ON v.cid = c.cid WHERE c.kb_id = :kb AND c.cid > :after AND v.cid IS NULL"
            f" ORDER BY c.cid LIMIT {int(limit)}",
            {"kb": kb_id, "after": after},
        )
    return [(int(r[0]), str(r[1])) for r in rows]


async def _count_missing(store: SqlStore, kb_id: str) -> int:
    async with store.read() as tx:
        row = await tx.fetchone(
            "SELECT count(*) FROM yx_kb_chunks c LEFT JOIN yx_kb_vectors v ON v.cid = c.cid"
            " WHERE c.kb_id = :kb AND v.cid IS NULL",
            {"kb": kb_id},
        )
    return int(row[0]) if row else 0


async def _write(
    store: SqlStore, kb_id: str, model: str, cids: list[int], vectors: np.ndarray
) -> None:
    dims = int(vectors.shape[1])
    async with store.write() as tx:
        recorded = await _recorded(tx, kb_id)
        params = {"kb": kb_id, "m": model, "d": dims, "r": uuid.uuid4().hex}
        if recorded is None:
            await tx.execute(
                "INSERT INTO yx_kb_embeddings (kb_id, model, dims, revision)"
                " VALUES (:kb, :m, :d, :r)",
                params,
            )
        elif recorded != (model, dims):
            raise EmbeddingMismatchError(kb_id, recorded[0], f"{model} ({dims} dimensions)")
        else:
            await tx.execute("UPDATE yx_kb_embeddings SET revision = :r WHERE kb_id = :kb", params)
        # A chunk deleted since it was read gets no vector (the SELECT finds nothing).
        await tx.executemany(
            "INSERT INTO yx_kb_vectors (cid, kb_id, file_id, vector)"
            " SELECT cid, kb_id, file_id, :v FROM yx_kb_chunks c WHERE c.cid = :cid"
            " AND NOT EXISTS (SELECT 1 FROM yx_kb_vectors x WHERE x.cid = :cid)",
            [
                {"cid": cid, "v": row.astype(VECTOR_DTYPE).tobytes()}
                for cid, row in zip(cids, vectors, strict=True)
            ],
        )


async def fill_vectors(
    store: SqlStore,
    kb_id: str,
    embedder: Embedder,
    *,
    progress: IngestProgress | None = None,
    batch: int = DEFAULT_BATCH,
) -> int:
    """Embeds every chunk of the base that has no vector yet; returns how many."""
    await check_model(store, kb_id, embedder)
    total = await _count_missing(store, kb_id)
    if progress:
        progress.stage("embedding", total)
    done, after = 0, -1
    while rows := await _missing(store, kb_id, after, batch):
        await checkpoint()
        vectors = await asyncio.to_thread(embedder.passages, [text for _, text in rows])
        await checkpoint()
        await _write(store, kb_id, embedder.name, [cid for cid, _ in rows], vectors)
        done += len(rows)
        after = rows[-1][0]
        if progress:
            progress.advance(len(rows))
    return done


async def reset_vectors(store: SqlStore, kb_id: str) -> None:
    """Drops the base's vectors and its model, so another model may embed it."""
    async with store.write() as tx:
        await tx.execute("DELETE FROM yx_kb_vectors WHERE kb_id = :kb", {"kb": kb_id})
        await tx.execute("DELETE FROM yx_kb_embeddings WHERE kb_id = :kb", {"kb": kb_id})
        await delete_snapshot(tx, kb_id)
