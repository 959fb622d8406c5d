"""Serialised dense indexes, kept in the platform database beside the vectors.

Building an HNSW index of 100,000 vectors takes minutes on two busy cores; restoring
its serialised form takes about a second. So whoever builds a base's index (a query,
`yuxi kb embed`, an ingest) writes it here, and another process, a replica or a
restart starts from it. A snapshot is only a starting point: the loader compares the
chunk ids it holds with the base's vectors and adds or removes the difference (chunk
ids are never reused, so a held id's vector is still right). It records the model
that made its vectors; one of another model is ignored. It starts with a digest of
what follows, checked before usearch reads it: usearch trusts its input, and a snapshot
damaged in storage (bytes overwritten mid-graph) can crash or hang the process that
restores it; a damaged one is ignored, and the index built again.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any

import numpy as np

from .._sql.store import SqlStore, Tx

__all__ = ["delete_snapshot", "load_snapshot", "save_snapshot", "snapshot_keys"]

logger = logging.getLogger(__name__)

_PART = 4 << 20  # bytes a row: well under every backend's limit, cheap to page
_MAGIC = b"yx-usearch-b2b\x00\x01"  # then the payload's 32-byte BLAKE2b digest, then it


def _sealed(data: bytes) -> bytes:
    return _MAGIC + hashlib.blake2b(data, digest_size=32).digest() + data


def _opened(data: bytearray) -> bytearray | None:
    """The payload when the digest in front of it matches, else None."""
    head = len(_MAGIC) + 32
    if len(data) < head or not data.startswith(_MAGIC):
        return None
    payload = data[head:]
    if hashlib.blake2b(payload, digest_size=32).digest() != bytes(data[len(_MAGIC) : head]):
        return None
    return payload


def _restore(data: bytearray, index_class: Any) -> Any | None:
    payload = _opened(data)
    return None if payload is None else index_class.restore(payload)


async def load_snapshot(store: SqlStore, kb_id: str, model: str, index_class: Any) -> Any | None:
    """The base's restored index when one of ``model`` was saved, else None."""
    async with store.read() as tx:
        rows = await tx.fetchall(
            "SELECT model, data FROM yx_kb_dense_snapshots WHERE kb_id = :kb ORDER BY part",
            {"kb": kb_id},
        )
    if not rows or any(str(r[0]) != model for r in rows):
        return None
    data = bytearray().join(bytes(r[1]) for r in rows)
    del rows
    index = await asyncio.to_thread(_restore, data, index_class)
    if index is None:
        logger.warning("dense snapshot of %r is damaged or of an old format: ignored", kb_id)
    return index


def snapshot_keys(index: Any) -> np.ndarray:
    """The chunk ids an index holds, ascending (in one slice: iterating the keys looks
    each one up by offset, quadratic in the index's size)."""
    return np.sort(np.asarray(index.keys[0 : len(index)]).astype(np.int64))


async def save_snapshot(store: SqlStore, kb_id: str, model: str, data: bytes) -> None:
    """Replaces the base's snapshot with ``data`` (``index.save()``), in one transaction."""
    view = memoryview(await asyncio.to_thread(_sealed, data))
    async with store.write() as tx:
        await delete_snapshot(tx, kb_id)
        for part, at in enumerate(range(0, len(view), _PART)):
            await tx.execute(
                "INSERT INTO yx_kb_dense_snapshots (kb_id, part, model, data)"
                " VALUES (:kb, :p, :m, :d)",
                {"kb": kb_id, "p": part, "m": model, "d": bytes(view[at : at + _PART])},
            )


async def delete_snapshot(tx: Tx, kb_id: str) -> None:
    await tx.execute("DELETE FROM yx_kb_dense_snapshots WHERE kb_id = :kb", {"kb": kb_id})
