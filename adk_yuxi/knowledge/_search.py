"""Ranked chunk search, one object per backend, over the shared tokenizer's tokens.

Both index the same text (`index_tokens`) with a scope column naming the knowledge
base and the file, so the full-text index itself intersects a query with one base
(or one file) instead of ranking every base's matches and filtering afterwards.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Protocol

from .._sql.store import Tx
from .._sql.urls import Backend
from .._text import query_tokens

__all__ = ["ChunkHit", "ChunkSearch", "file_scope", "kb_scope", "search_for"]


def _digest(kind: str, ident: str) -> str:
    return kind + hashlib.sha256(f"{kind}\x00{ident}".encode()).hexdigest()[:24]


def kb_scope(kb_id: str) -> str:
    return _digest("k", kb_id)


def file_scope(file_id: str) -> str:
    return _digest("f", file_id)


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


_SELECT = "c.kb_id, c.file_id, f.name, c.seq, c.start_line, c.end_line, c.content"


class ChunkSearch(Protocol):
    async def search(
        self, tx: Tx, kb_id: str, query: str, top_k: int, file_id: str | None
    ) -> list[ChunkHit]: ...


def _hits(rows: list[Any]) -> list[ChunkHit]:
    return [
        ChunkHit(
            kb_id=row[0], file_id=row[1], file_name=row[2], seq=int(row[3]),
            start_line=int(row[4]), end_line=int(row[5]), content=row[6],
            score=float(row[7]),
        )
        for row in rows
    ]  # fmt: skip


class SqliteChunkSearch:
    """FTS5 ranked by ``rank`` (configured as BM25 over the body; the scope column only
    filters)."""

    async def search(
        self, tx: Tx, kb_id: str, query: str, top_k: int, file_id: str | None
    ) -> list[ChunkHit]:
        tokens = query_tokens(query)
        if not tokens:
            return []
        scope = f'"{file_scope(file_id)}"' if file_id else f'"{kb_scope(kb_id)}"'
        terms = " OR ".join(f'"{token}"' for token in tokens)
        # Top k inside the index first (ORDER BY rank LIMIT k over the FTS table alone),
        # then the join: the join and row reads happen for k rows, not every match.
        rows = await tx.fetchall(
            f"SELECT {_SELECT}, -r.rank AS score FROM"
            " (SELECT rowid, rank FROM yx_kb_chunks_fts WHERE yx_kb_chunks_fts MATCH :q"
            "  ORDER BY rank LIMIT :k) r"
            " JOIN yx_kb_chunks c ON c.cid = r.rowid"
            " JOIN yx_kb_files f ON f.file_id = c.file_id"
            " WHERE c.kb_id = :kb ORDER BY r.rank, c.cid",
            {"q": f"scope : {scope} AND body : ({terms})", "kb": kb_id, "k": top_k},
        )
        return _hits(rows)


class PostgresChunkSearch:
    """A stored tsvector (scope + body) under a GIN index, ranked with ``ts_rank``."""

    async def search(
        self, tx: Tx, kb_id: str, query: str, top_k: int, file_id: str | None
    ) -> list[ChunkHit]:
        tokens = query_tokens(query)
        if not tokens:
            return []
        scope = file_scope(file_id) if file_id else kb_scope(kb_id)
        terms = " | ".join(f"'{token}'" for token in tokens)
        rows = await tx.fetchall(
            f"SELECT {_SELECT}, ts_rank(c.tsv, to_tsquery('simple', :terms)) AS score"
            " FROM yx_kb_chunks c JOIN yx_kb_files f ON f.file_id = c.file_id"
            " WHERE c.tsv @@ to_tsquery('simple', :match) AND c.kb_id = :kb"
            " ORDER BY score DESC, c.cid LIMIT :k",
            {"match": f"'{scope}' & ({terms})", "terms": terms, "kb": kb_id, "k": top_k},
        )
        return _hits(rows)


_BY_BACKEND: dict[Backend, ChunkSearch] = {
    "sqlite": SqliteChunkSearch(),
    "postgresql": PostgresChunkSearch(),
}


def search_for(backend: Backend) -> ChunkSearch:
    return _BY_BACKEND[backend]
