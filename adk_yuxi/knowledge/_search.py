"""Ranked chunk search: lexical indexes of knowledge bases, kept fresh by revision.

The same object serves both backends: the database holds the chunks, their term data
and a ``revision`` on each base that every ingest and delete changes in its own
transaction. An index (`_index`, in segments) is labelled with the revision read
*before* the file list it was brought up to date with (`_index_load.refresh`). A query
reads the base's current revision first: when it equals the label, the index holds
every write committed before the query began; otherwise another store (maybe another
process) wrote, and the index is refreshed: only the files added, replaced or deleted
since are read or dropped. The hits' rows are then read by chunk id, so a file deleted
meanwhile is never answered (its chunks are gone), and a replaced file only in its new
version (the old chunk ids are gone with it).

Indexes are kept least recently used first under a byte budget; small segments are
merged in the background, the merged index swapped in only if it is still current.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .._sql.store import SqlStore
from ..observability._tracing import annotate
from ._index import Bm25Index
from ._index_load import merge_plan, merge_small, refresh
from ._terms import query_keys

__all__ = ["DEFAULT_INDEX_BYTES", "ChunkHit", "KnowledgeSearch"]

DEFAULT_INDEX_BYTES = 2 << 30
_ATTEMPTS = 3


@dataclass(frozen=True)
class ChunkHit:
    kb_id: str
    file_id: str
    file_name: str
    seq: int
    start_line: int
    end_line: int
    content: str
    score: float
    signals: tuple[str, ...] = ("lexical",)
    """Which retrievers found it: "lexical", "dense", or both."""


@dataclass(frozen=True)
class _Entry:
    revision: str
    index: Bm25Index
    versions: dict[str, int]  # file id -> the version the index holds

    @property
    def nbytes(self) -> int:
        return self.index.nbytes + 80 * len(self.versions)


class KnowledgeSearch:
    """The indexes of one store's knowledge bases (one per base, built on first use)."""

    def __init__(self, max_bytes: int = DEFAULT_INDEX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}
        self._merges: dict[str, asyncio.Task[None]] = {}

    @property
    def nbytes(self) -> int:
        return sum(entry.nbytes for entry in self._entries.values())

    def forget(self, kb_id: str) -> None:
        self._entries.pop(kb_id, None)

    async def close(self) -> None:
        """Stops background merges (the indexes stay usable, merely unmerged)."""
        for task in list(self._merges.values()):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def search(
        self, store: SqlStore, kb_id: str, query: str, top_k: int, file_id: str | None
    ) -> list[ChunkHit]:
        ranked = await self.rank(store, kb_id, query_keys(query), top_k, file_id)
        return await _fetch(store, kb_id, ranked)

    async def rank(
        self, store: SqlStore, kb_id: str, keys: list[int], top_k: int, file_id: str | None,
        revision: str | None = None,
    ) -> list[tuple[int, float]]:  # fmt: skip
        """The best ``top_k`` (chunk id, score) pairs of the base, rows not read.

        ``revision`` is the base's revision as the caller just read it (saves reading
        it again); the index is brought up to it, or further, before ranking."""
        if not keys:
            return []
        entry = self._entries.get(kb_id)
        cached = entry is not None
        for attempt in range(_ATTEMPTS):
            if attempt or revision is None:
                revision = await _revision(store, kb_id)
            if revision is None:  # the base is gone
                self.forget(kb_id)
                return []
            if entry is not None and entry.revision == revision:
                if self._entries.get(kb_id) is entry:  # (not evicted meanwhile)
                    self._entries.move_to_end(kb_id)
                break
            if attempt == _ATTEMPTS - 1 and entry is not None:
                break  # changed at every try: rank on the newest index
            entry = await self._load(store, kb_id, None if entry is None else entry.revision)
            cached = False
            if entry is None:
                return []
        assert entry is not None
        annotate({"yuxi.knowledge.revision": entry.revision, "yuxi.knowledge.cache_hit": cached})
        return entry.index.search(keys, top_k, file_id)

    def holds(self, kb_id: str, keys: list[int], cids: list[int]) -> npt.NDArray[np.bool_]:
        """Which query keys each chunk holds (`Bm25Index.holds`), on the index a query
        just ranked on; every key when that index is no longer held (evicted)."""
        entry = self._entries.get(kb_id)
        if entry is None:
            return np.ones((len(cids), len(dict.fromkeys(keys))), dtype=bool)
        return entry.index.holds(keys, cids)

    async def _load(self, store: SqlStore, kb_id: str, stale: str | None) -> _Entry | None:
        lock = self._locks.setdefault(kb_id, asyncio.Lock())
        async with lock:
            current = self._entries.get(kb_id)
            if current is not None and current.revision != stale:
                return current  # another task refreshed it meanwhile
            revision = await _revision(store, kb_id)
            if revision is None:
                self.forget(kb_id)
                return None
            held = (current.index, current.versions) if current is not None else (None, {})
            index, versions = await refresh(store, kb_id, *held)
            entry = _Entry(revision, index, versions)
            self._entries[kb_id] = entry
            self._evict(keep=kb_id)
            self._merge_later(kb_id, entry)
            return entry

    def _merge_later(self, kb_id: str, entry: _Entry) -> None:
        plan = merge_plan(entry.index.segments)
        running = self._merges.get(kb_id)
        if plan and (running is None or running.done()):
            self._merges[kb_id] = asyncio.create_task(self._merge(kb_id, entry, plan))

    async def _merge(self, kb_id: str, entry: _Entry, plan: list[int]) -> None:
        segments = await asyncio.to_thread(merge_small, entry.index.segments, plan)
        if self._entries.get(kb_id) is entry:  # nothing refreshed it meanwhile
            merged = dataclasses.replace(entry, index=Bm25Index(segments))
            self._entries[kb_id] = merged
            self._merge_later(kb_id, merged)

    def _evict(self, keep: str) -> None:
        total = self.nbytes
        for kb_id in list(self._entries):
            if total <= self.max_bytes:
                break
            if kb_id != keep:
                total -= self._entries.pop(kb_id).nbytes


async def _revision(store: SqlStore, kb_id: str) -> str | None:
    async with store.read() as tx:
        row = await tx.fetchone("SELECT revision FROM yx_kb_bases WHERE kb_id = :kb", {"kb": kb_id})
    return None if row is None else str(row[0])


@functools.lru_cache(maxsize=64)
def _hits_sql(count: int) -> str:
    return (
        "SELECT c.cid, c.kb_id, c.file_id, c.seq, c.start_line, c.end_line, c.content, f.name"
        " FROM yx_kb_chunks c JOIN yx_kb_files f ON f.file_id = c.file_id"
        f" WHERE c.cid IN ({', '.join(f':c{i}' for i in range(count))})"
    )


async def _fetch(store: SqlStore, kb_id: str, ranked: list[tuple[int, float]]) -> list[ChunkHit]:
    """The ranked chunks that still exist, read by id in one statement."""
    if not ranked:
        return []
    params: dict[str, Any] = {f"c{i}": cid for i, (cid, _) in enumerate(ranked)}
    async with store.read() as tx:
        rows = await tx.fetchall(_hits_sql(len(ranked)), params)
    # Chunk ids are never reused, so these are this base's; the check costs nothing.
    found = {int(r[0]): r for r in rows if r[1] == kb_id}
    return [
        ChunkHit(
            kb_id=kb_id, file_id=r[2], file_name=r[7], seq=int(r[3]),
            start_line=int(r[4]), end_line=int(r[5]), content=r[6], score=score,
        )
        for cid, score in ranked
        if (r := found.get(cid)) is not None
    ]  # fmt: skip
