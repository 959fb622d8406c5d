"""Ranked chunk search: in-memory BM25 indexes of knowledge bases, kept fresh by revision.

The same object serves both backends: the database holds the chunks, their term data
and a ``revision`` on each base that every ingest and delete changes in its own
transaction. A query ranks on the cached index, then fetches the hit rows by chunk id
together with the base's current revision in one statement (one snapshot). When the
revision differs, another store (maybe another process) wrote since the index was
built: the index is rebuilt from a revision read *before* its rows, and the query runs
again on it. A deleted file never comes back (rows are fetched by id), and no answer
misses a write committed before the query began.

Indexes are kept least recently used first under a byte budget.
"""

from __future__ import annotations

import asyncio
import functools
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from .._sql.store import SqlStore
from ._index import Bm25Index, IndexRows
from ._terms import query_keys

__all__ = ["DEFAULT_INDEX_BYTES", "ChunkHit", "KnowledgeSearch"]

DEFAULT_INDEX_BYTES = 2 << 30
_ATTEMPTS = 3
_LOAD_PAGE = 5000


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


@dataclass(frozen=True)
class _Entry:
    revision: str
    index: Bm25Index
    names: dict[str, str]  # file id -> name (a file keeps its name for life)


class KnowledgeSearch:
    """The indexes of one store's knowledge bases (one per base, built on first use)."""

    def __init__(self, max_bytes: int = DEFAULT_INDEX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    @property
    def nbytes(self) -> int:
        return sum(entry.index.nbytes for entry in self._entries.values())

    def forget(self, kb_id: str) -> None:
        self._entries.pop(kb_id, None)

    async def search(
        self, store: SqlStore, kb_id: str, query: str, top_k: int, file_id: str | None
    ) -> list[ChunkHit]:
        keys = query_keys(query)
        if not keys:
            return []
        entry = self._entries.get(kb_id) or await self._load(store, kb_id, None)
        for attempt in range(_ATTEMPTS):
            if entry is None:
                return []
            if kb_id in self._entries:
                self._entries.move_to_end(kb_id)
            ranked = entry.index.search(keys, top_k, file_id)
            revision, hits = await _fetch(store, kb_id, ranked, entry.names)
            if revision is None:  # the base is gone
                self.forget(kb_id)
                return []
            if revision == entry.revision or attempt == _ATTEMPTS - 1:
                # (The last try ranks on an index rebuilt during this call.)
                return hits
            entry = await self._load(store, kb_id, entry.revision)
        return []

    async def _load(self, store: SqlStore, kb_id: str, stale: str | None) -> _Entry | None:
        lock = self._locks.setdefault(kb_id, asyncio.Lock())
        async with lock:
            current = self._entries.get(kb_id)
            if current is not None and current.revision != stale:
                return current  # another task rebuilt it meanwhile
            async with store.read() as tx:
                row = await tx.fetchone(
                    "SELECT revision FROM yx_kb_bases WHERE kb_id = :kb", {"kb": kb_id}
                )
            if row is None:
                self.forget(kb_id)
                return None
            rows = await _term_rows(store, kb_id)
            async with store.read() as tx:
                names = await tx.fetchall(
                    "SELECT file_id, name FROM yx_kb_files WHERE kb_id = :kb", {"kb": kb_id}
                )
            index = await asyncio.to_thread(Bm25Index, _index_rows(rows))
            entry = _Entry(str(row[0]), index, {str(f): str(n) for f, n in names})
            self._entries[kb_id] = entry
            self._evict(keep=kb_id)
            return entry

    def _evict(self, keep: str) -> None:
        total = self.nbytes
        for kb_id in list(self._entries):
            if total <= self.max_bytes:
                break
            if kb_id != keep:
                total -= self._entries.pop(kb_id).index.nbytes


async def _term_rows(store: SqlStore, kb_id: str, page_size: int = _LOAD_PAGE) -> list[Any]:
    """The base's term rows by file and chunk id, a page at a time: SQLite reads run on
    the event loop's thread, and one read of 100,000 rows would hold it for a second.
    Pages may see different commits; the revision read before them labels the index,
    so a write meanwhile makes the next query rebuild."""
    rows: list[Any] = []
    after: dict[str, Any] = {"kb": kb_id, "f": "", "c": -1}
    while True:
        async with store.read() as tx:
            page = await tx.fetchall(
                "SELECT cid, file_id, term_count, term_keys, term_freqs FROM yx_kb_terms"
                " WHERE kb_id = :kb AND (file_id > :f OR (file_id = :f AND cid > :c))"
                f" ORDER BY file_id, cid LIMIT {int(page_size)}",
                after,
            )
        rows.extend(page)
        if len(page) < page_size:
            return rows
        after = {"kb": kb_id, "f": page[-1][1], "c": int(page[-1][0])}
        await asyncio.sleep(0)  # let other requests run between pages


def _index_rows(rows: list[Any]) -> IndexRows:
    return IndexRows(
        cids=[int(r[0]) for r in rows],
        file_ids=[r[1] for r in rows],
        lengths=[int(r[2]) for r in rows],
        keys=[bytes(r[3]) for r in rows],
        freqs=[bytes(r[4]) for r in rows],
    )


@functools.lru_cache(maxsize=64)
def _hits_sql(count: int) -> str:
    """One statement, one snapshot: the revision row, then the chunks by primary key."""
    return (
        "SELECT revision, NULL, NULL, NULL, NULL, NULL, NULL, NULL"
        " FROM yx_kb_bases WHERE kb_id = :kb UNION ALL"
        " SELECT NULL, cid, kb_id, file_id, seq, start_line, end_line, content"
        f" FROM yx_kb_chunks WHERE cid IN ({', '.join(f':c{i}' for i in range(count))})"
    )


async def _fetch(
    store: SqlStore, kb_id: str, ranked: list[tuple[int, float]], names: dict[str, str]
) -> tuple[str | None, list[ChunkHit]]:
    """The base's revision and the ranked chunks that still exist, in one statement."""
    params: dict[str, Any] = {"kb": kb_id}
    params.update({f"c{i}": cid for i, (cid, _) in enumerate(ranked)})
    async with store.read() as tx:
        if not ranked:
            row = await tx.fetchone(
                "SELECT revision FROM yx_kb_bases WHERE kb_id = :kb", {"kb": kb_id}
            )
            return (None if row is None else str(row[0])), []
        rows = await tx.fetchall(_hits_sql(len(ranked)), params)
    revisions = [r[0] for r in rows if r[1] is None]
    if not revisions:
        return None, []
    # Chunk ids are never reused, so these are this base's; the check costs nothing.
    found = {int(r[1]): r for r in rows if r[1] is not None and r[2] == kb_id}
    hits = [
        ChunkHit(
            kb_id=kb_id, file_id=r[3], file_name=names[r[3]], seq=int(r[4]),
            start_line=int(r[5]), end_line=int(r[6]), content=r[7], score=score,
        )
        for cid, score in ranked
        if (r := found.get(cid)) is not None and r[3] in names
    ]  # fmt: skip
    return str(revisions[0]), hits
