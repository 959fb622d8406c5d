"""Ranked chunk search: in-memory BM25 indexes of knowledge bases, kept fresh by revision.

The same object serves both backends: the database holds the chunks, their term data
and a ``revision`` on each base that every ingest and delete changes in its own
transaction. An index is built with the base's chunk rows (`ChunkTable`), labelled
with the revision read *before* its rows. A query reads the base's current revision
first: when it equals the label, the index holds every write committed before the
query began, and the answer comes from memory; otherwise another store (maybe another
process) wrote, and the index is rebuilt. A base that keeps changing under a query is
answered, on the last try, from rows fetched by chunk id, so a deleted file never
comes back.

Indexes are kept least recently used first under a byte budget.
"""

from __future__ import annotations

import asyncio
import functools
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from .._sql.store import SqlStore
from ..observability._tracing import annotate
from ._chunks import ChunkRows, ChunkTable
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
    signals: tuple[str, ...] = ("lexical",)
    """Which retrievers found it: "lexical", "dense", or both."""


@dataclass(frozen=True)
class _Entry:
    revision: str
    index: Bm25Index
    chunks: ChunkTable
    names: dict[str, str]  # file id -> name (a file keeps its name for life)

    @property
    def nbytes(self) -> int:
        return self.index.nbytes + self.chunks.nbytes

    def hits(self, kb_id: str, ranked: list[tuple[int, float]]) -> list[ChunkHit]:
        out = []
        for doc, score in ranked:
            file_id, seq, start_line, end_line, content = self.chunks.row(doc)
            name = self.names.get(file_id)
            if name is not None:  # (always, under the revision the entry is labelled with)
                out.append(
                    ChunkHit(
                        kb_id=kb_id, file_id=file_id, file_name=name, seq=seq,
                        start_line=start_line, end_line=end_line, content=content, score=score,
                    )
                )  # fmt: skip
        return out


class KnowledgeSearch:
    """The indexes of one store's knowledge bases (one per base, built on first use)."""

    def __init__(self, max_bytes: int = DEFAULT_INDEX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    @property
    def nbytes(self) -> int:
        return sum(entry.nbytes for entry in self._entries.values())

    def forget(self, kb_id: str) -> None:
        self._entries.pop(kb_id, None)

    async def search(
        self, store: SqlStore, kb_id: str, query: str, top_k: int, file_id: str | None
    ) -> list[ChunkHit]:
        keys = query_keys(query)
        if not keys:
            return []
        entry = self._entries.get(kb_id)
        cached = entry is not None
        for attempt in range(_ATTEMPTS):
            revision = await _revision(store, kb_id)
            if revision is None:  # the base is gone
                self.forget(kb_id)
                return []
            if entry is not None and entry.revision == revision:
                if self._entries.get(kb_id) is entry:  # (not evicted meanwhile)
                    self._entries.move_to_end(kb_id)
                annotate({"yuxi.knowledge.revision": revision, "yuxi.knowledge.cache_hit": cached})
                return entry.hits(kb_id, entry.index.rank(keys, top_k, file_id))
            if attempt == _ATTEMPTS - 1 and entry is not None:
                break
            entry = await self._load(store, kb_id, None if entry is None else entry.revision)
            cached = False
            if entry is None:
                return []
        # The base changed at every try: rank on the newest index, answer with the rows
        # that still exist.
        assert entry is not None
        annotate({"yuxi.knowledge.revision": entry.revision, "yuxi.knowledge.cache_hit": False})
        ranked = entry.index.search(keys, top_k, file_id)
        return await _fetch(store, kb_id, ranked, entry.names)

    async def _load(self, store: SqlStore, kb_id: str, stale: str | None) -> _Entry | None:
        lock = self._locks.setdefault(kb_id, asyncio.Lock())
        async with lock:
            current = self._entries.get(kb_id)
            if current is not None and current.revision != stale:
                return current  # another task rebuilt it meanwhile
            revision = await _revision(store, kb_id)
            if revision is None:
                self.forget(kb_id)
                return None
            rows = await _term_rows(store, kb_id)
            async with store.read() as tx:
                names = await tx.fetchall(
                    "SELECT file_id, name FROM yx_kb_files WHERE kb_id = :kb", {"kb": kb_id}
                )
            index, chunks = await asyncio.to_thread(_build, rows)
            del rows
            entry = _Entry(revision, index, chunks, {str(f): str(n) for f, n in names})
            self._entries[kb_id] = entry
            self._evict(keep=kb_id)
            return entry

    def _evict(self, keep: str) -> None:
        total = self.nbytes
        for kb_id in list(self._entries):
            if total <= self.max_bytes:
                break
            if kb_id != keep:
                total -= self._entries.pop(kb_id).nbytes


async def _term_rows(store: SqlStore, kb_id: str, page_size: int = _LOAD_PAGE) -> list[Any]:
    """The base's chunk and term rows by file and chunk id, a page at a time (one
    statement each, so a page's chunks match its term rows): SQLite reads run on
    the event loop's thread, and one read of 100,000 rows would hold it for a second.
    Pages may see different commits; the revision read before them labels the index,
    and an answer from it follows a revision read equal to that label, so a write
    meanwhile makes the query rebuild instead."""
    rows: list[Any] = []
    after: dict[str, Any] = {"kb": kb_id, "f": "", "c": -1}
    while True:
        async with store.read() as tx:
            page = await tx.fetchall(
                "SELECT t.cid, t.file_id, t.term_count, t.term_keys, t.term_freqs,"
                " c.seq, c.start_line, c.end_line, c.content"
                " FROM yx_kb_terms t JOIN yx_kb_chunks c ON c.cid = t.cid WHERE t.kb_id = :kb"
                " AND (t.file_id > :f OR (t.file_id = :f AND t.cid > :c))"
                f" ORDER BY t.file_id, t.cid LIMIT {int(page_size)}",
                after,
            )
        rows.extend(page)
        if len(page) < page_size:
            return rows
        after = {"kb": kb_id, "f": page[-1][1], "c": int(page[-1][0])}
        await asyncio.sleep(0)  # let other requests run between pages


def _build(rows: list[Any]) -> tuple[Bm25Index, ChunkTable]:
    file_ids = [r[1] for r in rows]
    index = Bm25Index(
        IndexRows(
            cids=[int(r[0]) for r in rows],
            file_ids=file_ids,
            lengths=[int(r[2]) for r in rows],
            keys=[bytes(r[3]) for r in rows],
            freqs=[bytes(r[4]) for r in rows],
        )
    )
    chunks = ChunkTable(
        ChunkRows(
            file_ids=file_ids,
            seqs=[int(r[5]) for r in rows],
            start_lines=[int(r[6]) for r in rows],
            end_lines=[int(r[7]) for r in rows],
            contents=[r[8] for r in rows],
        )
    )
    return index, chunks


async def _revision(store: SqlStore, kb_id: str) -> str | None:
    async with store.read() as tx:
        row = await tx.fetchone("SELECT revision FROM yx_kb_bases WHERE kb_id = :kb", {"kb": kb_id})
    return None if row is None else str(row[0])


@functools.lru_cache(maxsize=64)
def _hits_sql(count: int) -> str:
    return (
        "SELECT cid, kb_id, file_id, seq, start_line, end_line, content FROM yx_kb_chunks"
        f" WHERE cid IN ({', '.join(f':c{i}' for i in range(count))})"
    )


async def _fetch(
    store: SqlStore, kb_id: str, ranked: list[tuple[int, float]], names: dict[str, str]
) -> list[ChunkHit]:
    """The ranked chunks that still exist, read by id."""
    if not ranked:
        return []
    params: dict[str, Any] = {f"c{i}": cid for i, (cid, _) in enumerate(ranked)}
    async with store.read() as tx:
        rows = await tx.fetchall(_hits_sql(len(ranked)), params)
    # Chunk ids are never reused, so these are this base's; the check costs nothing.
    found = {int(r[0]): r for r in rows if r[1] == kb_id}
    return [
        ChunkHit(
            kb_id=kb_id, file_id=r[2], file_name=names[r[2]], seq=int(r[3]),
            start_line=int(r[4]), end_line=int(r[5]), content=r[6], score=score,
        )
        for cid, score in ranked
        if (r := found.get(cid)) is not None and r[2] in names
    ]  # fmt: skip
