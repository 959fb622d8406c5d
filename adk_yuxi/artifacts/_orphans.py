"""Payload files no artifact version references: removed safely, beside writers.

Orphans come from a process killed between writing a payload and committing its
row, or between a delete's commit and its file removal. A file is removed only
inside a write transaction that holds the digest's lock and finds no row for the
digest; a save takes the same lock before it references a digest and rewrites
the file if it is missing, so a removal and a save of the same bytes never
interleave (SQLite: the one write lock; PostgreSQL: an advisory lock). Files
younger than the grace period are left alone, which spares saves that wrote
their file but have not committed yet a needless rewrite.
"""

from __future__ import annotations

import asyncio
import time

from .._sql.store import SqlStore
from ._blobs import BlobStore

__all__ = ["DEFAULT_SWEEP_GRACE_S", "OrphanPayloads", "blob_lock"]

DEFAULT_SWEEP_GRACE_S = 3600.0


def blob_lock(digest: str) -> str:
    """The lock a transaction holds while it references or frees a payload."""
    return "yx_artifact_blob:" + digest


class OrphanPayloads:
    """Removes payload files of one blob directory that no row references."""

    def __init__(self, store: SqlStore, blobs: BlobStore) -> None:
        self._store = store
        self._blobs = blobs

    async def remove_if_unreferenced(self, digest: str) -> bool:
        """Removes a payload file unless a committed row references its digest."""
        async with self._store.write() as tx:
            await tx.lock_key(blob_lock(digest))
            if await tx.fetchone(
                "SELECT refs FROM yx_artifact_blobs WHERE digest = :digest", {"digest": digest}
            ):
                return False
            self._blobs.remove(digest)
        return True

    async def sweep(self, older_than: float) -> int:
        """Removes orphans last modified more than ``older_than`` seconds ago."""
        removed = 0
        cutoff = time.time() - older_than
        for digest in await asyncio.to_thread(self._blobs.digests_older_than, cutoff):
            if await self.remove_if_unreferenced(digest):
                removed += 1
        await asyncio.to_thread(self._blobs.remove_temporaries_older_than, cutoff)
        return removed
