"""Knowledge bases, their files, parsed text and chunks on the platform database.

The store answers for data, not rights: callers on behalf of a user (the knowledge
server) check the user's current read right first. Ingestion converts and chunks a
file outside any transaction, then replaces the file's text and chunks in one
transaction, so a failed or cancelled ingest leaves the previous version intact.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from .._sql import register_schema_part
from .._sql.store import SqlStore, make_store
from ..access import AccessRepository, ResourceKind, ResourceRecord, ShareConfig
from ..documents import DEFAULT_MAX_BYTES, ConverterRegistry, DocumentSource, default_converters
from ._cancel import checkpoint
from ._chunking import chunk_lines
from ._dense import DenseSearch
from ._dense_snapshot import delete_snapshot
from ._embed_fill import check_model, fill_vectors, reset_vectors
from ._embedding import Embedder
from ._errors import (
    InvalidKnowledgeRequestError,
    KnowledgeConfigError,
    UnknownFileError,
    UnknownKnowledgeBaseError,
)
from ._file_reads import FileReads
from ._file_write import (
    FILE_COLUMNS,
    delete_file_rows,
    file_from_row,
    insert_chunks,
    new_revision,
    touch,
    upsert_file,
)
from ._hybrid import QUERY_CACHE, HybridSearch
from ._ids import check_file_name, check_ident, check_kb_name
from ._models import KnowledgeBase, KnowledgeFile
from ._progress import IngestProgress
from ._schema import KNOWLEDGE_SCHEMA
from ._search import DEFAULT_INDEX_BYTES, ChunkHit, KnowledgeSearch
from ._terms import chunk_terms
from ._vector_schema import VECTOR_SCHEMA

__all__ = ["KnowledgeStore"]

_KB_COLUMNS = "kb_id, name, description, created_at"


def _kb(row: Sequence[Any]) -> KnowledgeBase:
    return KnowledgeBase(row[0], row[1], row[2], float(row[3]))


def _check_bytes(name: str, value: object, *, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise KnowledgeConfigError(f"{name} must be a whole number of bytes, at least {low}")


class KnowledgeStore(FileReads):
    """Knowledge on an SQLAlchemy async URL, engine, or a shared `SqlStore` (file reads:
    `FileReads`)."""

    def __init__(
        self,
        db: str | URL | AsyncEngine | SqlStore,
        *,
        converters: ConverterRegistry | None = None,
        max_file_bytes: int = DEFAULT_MAX_BYTES,
        index_cache_bytes: int = DEFAULT_INDEX_BYTES,
        embedder: Embedder | None = None,
        query_cache: int = QUERY_CACHE,
        **engine_kwargs: Any,
    ) -> None:
        """``embedder`` embeds chunks at ingest and questions at query time (hybrid
        retrieval); without one, bases are searched lexically. The vectors of the last
        ``query_cache`` questions are kept: a repeated question is not embedded again."""
        _check_bytes("max_file_bytes", max_file_bytes, low=1)
        _check_bytes("index_cache_bytes", index_cache_bytes, low=0)
        self._store, self._owns_store = make_store(db, **engine_kwargs)
        # Its tables, in every store it works on.
        register_schema_part(KNOWLEDGE_SCHEMA)
        register_schema_part(VECTOR_SCHEMA)
        self._converters = converters or default_converters()
        self._max_bytes = max_file_bytes
        self._search = KnowledgeSearch(index_cache_bytes)
        self._dense = DenseSearch()
        if isinstance(query_cache, bool) or not isinstance(query_cache, int) or query_cache < 0:
            raise KnowledgeConfigError("query_cache must be a whole number, at least 0")
        self._hybrid = HybridSearch(self._search, self._dense, embedder, query_cache)

    @property
    def embedder(self) -> Embedder | None:
        return self._hybrid.embedder

    @property
    def store(self) -> SqlStore:
        return self._store

    @property
    def index_bytes(self) -> int:
        """Memory held by the cached search indexes of this store's bases."""
        return self._search.nbytes

    async def prepare(self) -> None:
        """Creates or migrates the schema, the ``knowledge`` part included."""
        await self._store.ready()

    async def close(self) -> None:
        await self._search.close()
        await self._dense.close()
        if self._owns_store:
            await self._store.close()

    # -- knowledge bases ----------------------------------------------------------------

    async def create_kb(
        self,
        name: str,
        *,
        creator_id: str,
        share: ShareConfig | None = None,
        description: str = "",
        kb_id: str | None = None,
    ) -> KnowledgeBase:
        """A new knowledge base and its access record (share config), in one transaction."""
        await self.prepare()
        kb = KnowledgeBase(
            kb_id=check_ident(kb_id or f"kb_{uuid.uuid4().hex[:16]}", "kb_id"),
            name=check_kb_name(name),
            description=description.strip()[:2000],
            created_at=time.time(),
        )
        record = ResourceRecord(
            kind=ResourceKind.KNOWLEDGE_BASE,
            id=kb.kb_id,
            creator_id=creator_id,
            share=share or ShareConfig.private(),
        )
        async with self._store.write() as tx:
            taken = await tx.fetchone(
                "SELECT kb_id FROM yx_kb_bases WHERE kb_id = :id OR name = :name",
                {"id": kb.kb_id, "name": kb.name},
            )
            if taken is not None:
                raise InvalidKnowledgeRequestError(
                    f"a knowledge base with the id {kb.kb_id!r} or the name {kb.name!r} exists"
                )
            await AccessRepository.save_resource_in(tx, record)
            await tx.execute(
                f"INSERT INTO yx_kb_bases ({_KB_COLUMNS}, revision)"
                " VALUES (:kb_id, :name, :description, :created_at, :revision)",
                {"kb_id": kb.kb_id, "name": kb.name, "description": kb.description,
                 "created_at": kb.created_at, "revision": new_revision()},
            )  # fmt: skip
        return kb

    async def get_kb(self, kb_id: str) -> KnowledgeBase:
        await self.prepare()
        async with self._store.read() as tx:
            row = await tx.fetchone(
                f"SELECT {_KB_COLUMNS} FROM yx_kb_bases WHERE kb_id = :id", {"id": kb_id}
            )
        if row is None:
            raise UnknownKnowledgeBaseError(kb_id)
        return _kb(row)

    async def find_kb(self, name: str) -> KnowledgeBase:
        await self.prepare()
        async with self._store.read() as tx:
            row = await tx.fetchone(
                f"SELECT {_KB_COLUMNS} FROM yx_kb_bases WHERE name = :name", {"name": name}
            )
        if row is None:
            raise UnknownKnowledgeBaseError(name)
        return _kb(row)

    async def list_kbs(self, kb_ids: Iterable[str] | None = None) -> list[KnowledgeBase]:
        """Every base, or those among ``kb_ids``, by name."""
        await self.prepare()
        sql = f"SELECT {_KB_COLUMNS} FROM yx_kb_bases"
        params: dict[str, Any] = {}
        if kb_ids is not None:
            params = {f"k{i}": ident for i, ident in enumerate(sorted(set(kb_ids)))}
            if not params:
                return []
            sql += f" WHERE kb_id IN ({', '.join(':' + key for key in params)})"
        async with self._store.read() as tx:
            rows = await tx.fetchall(sql + " ORDER BY name", params)
        return [_kb(row) for row in rows]

    async def delete_kb(self, kb_id: str) -> None:
        """The base, its files, text, chunks and access record, in one transaction."""
        await self.prepare()
        self._search.forget(kb_id)
        self._dense.forget(kb_id)
        async with self._store.write() as tx:
            if not await tx.execute("DELETE FROM yx_kb_bases WHERE kb_id = :id", {"id": kb_id}):
                raise UnknownKnowledgeBaseError(kb_id)
            # Explicit, so nothing depends on the connection's foreign-key setting.
            await tx.execute("DELETE FROM yx_kb_terms WHERE kb_id = :id", {"id": kb_id})
            await tx.execute("DELETE FROM yx_kb_vectors WHERE kb_id = :id", {"id": kb_id})
            await tx.execute("DELETE FROM yx_kb_embeddings WHERE kb_id = :id", {"id": kb_id})
            await delete_snapshot(tx, kb_id)
            await tx.execute("DELETE FROM yx_kb_chunks WHERE kb_id = :id", {"id": kb_id})
            await tx.execute(
                "DELETE FROM yx_kb_texts WHERE file_id IN"
                " (SELECT file_id FROM yx_kb_files WHERE kb_id = :id)",
                {"id": kb_id},
            )
            await tx.execute("DELETE FROM yx_kb_files WHERE kb_id = :id", {"id": kb_id})
            await tx.execute(
                "DELETE FROM yx_resources WHERE kind = :kind AND id = :id",
                {"kind": ResourceKind.KNOWLEDGE_BASE.value, "id": kb_id},
            )

    # -- files --------------------------------------------------------------------------

    async def ingest(
        self,
        kb_id: str,
        source: str | os.PathLike[str] | bytes,
        *,
        name: str | None = None,
        mime_type: str | None = None,
        progress: IngestProgress | None = None,
        replace_unchanged: bool = False,
    ) -> KnowledgeFile:
        """Adds a file, or replaces the file of the same name in this base atomically.

        The same bytes under the same name are left as they are (the stored file is
        returned) unless ``replace_unchanged`` asks for a re-conversion.
        """
        await self.get_kb(kb_id)
        if self.embedder is not None:  # before anything is written
            await check_model(self._store, kb_id, self.embedder)
        loaded = await asyncio.to_thread(
            DocumentSource.load, source, name=name, mime_type=mime_type, max_bytes=self._max_bytes
        )
        file_name = check_file_name(loaded.name)
        digest = hashlib.sha256(loaded.data).hexdigest()
        if not replace_unchanged:
            async with self._store.read() as tx:
                row = await tx.fetchone(
                    f"SELECT {FILE_COLUMNS} FROM yx_kb_files"
                    " WHERE kb_id = :kb AND name = :name AND sha256 = :sha",
                    {"kb": kb_id, "name": file_name, "sha": digest},
                )
            if row is not None:
                await self._embed_missing(kb_id, progress)
                return file_from_row(row)
        if progress:
            progress.stage("converting", 1)
        document = await asyncio.to_thread(self._converters.convert, loaded)
        lines = document.lines
        chunks = chunk_lines(lines)
        terms = await asyncio.to_thread(lambda: [chunk_terms(c.content) for c in chunks])
        if progress:
            progress.advance(1)
        meta = {
            "kb_id": kb_id,
            "name": file_name,
            "mime_type": document.mime_type,
            "title": document.title,
            "size": len(loaded.data),
            "sha256": digest,
            "total_lines": len(lines),
            "chunk_count": len(chunks),
            "updated_at": time.time(),
        }
        async with self._store.write() as tx:
            # First, so concurrent ingests into one base queue on its row (PostgreSQL).
            await touch(tx, kb_id)
            file_id = await upsert_file(tx, meta)
            await delete_file_rows(tx, file_id)
            await tx.execute(
                "INSERT INTO yx_kb_texts (file_id, markdown) VALUES (:f, :md)",
                {"f": file_id, "md": document.markdown},
            )
            await insert_chunks(tx, kb_id, file_id, chunks, terms, progress)
            await checkpoint()
            row = await tx.fetchone(
                f"SELECT {FILE_COLUMNS} FROM yx_kb_files WHERE file_id = :f", {"f": file_id}
            )
        await self._embed_missing(kb_id, progress)
        if progress:
            progress.done()
        assert row is not None
        return file_from_row(row)

    async def _embed_missing(self, kb_id: str, progress: IngestProgress | None) -> None:
        """Vectors for the base's chunks that lack one (this file's, and any an earlier
        ingest left when it was interrupted), and the dense index brought up to them."""
        if self.embedder is not None:
            await fill_vectors(self._store, kb_id, self.embedder, progress=progress)
            await self._dense.refresh(self._store, kb_id, self.embedder.name)

    async def embed(
        self, kb_id: str, *, progress: IngestProgress | None = None, replace: bool = False
    ) -> int:
        """Fills in the vectors the base lacks (all of them again with ``replace``, for a
        new embedding model); returns how many chunks were embedded."""
        await self.get_kb(kb_id)
        if self.embedder is None:
            raise KnowledgeConfigError(
                "no embedding model is configured (YUXI_EMBEDDING_MODEL=none)"
            )
        if replace:
            await reset_vectors(self._store, kb_id)
            self._dense.forget(kb_id)
        count = await fill_vectors(self._store, kb_id, self.embedder, progress=progress)
        await self._dense.refresh(self._store, kb_id, self.embedder.name)
        if progress:
            progress.done()
        return count

    async def delete_file(self, kb_id: str, file_id: str) -> None:
        await self.prepare()
        async with self._store.write() as tx:
            await delete_file_rows(tx, file_id)
            changed = await tx.execute(
                "DELETE FROM yx_kb_files WHERE file_id = :f AND kb_id = :kb",
                {"f": file_id, "kb": kb_id},
            )
            if not changed:
                raise UnknownFileError(kb_id, file_id)
            await touch(tx, kb_id)

    # -- search -------------------------------------------------------------------------

    async def query(
        self, kb_id: str, query: str, *, top_k: int = 5, file_id: str | None = None
    ) -> list[ChunkHit]:
        """The chunks of one base (or one file of it) ranked for ``query``: lexically,
        and fused with dense similarity where the base has vectors."""
        await self.prepare()
        return await self._hybrid.query(self._store, [kb_id], query, top_k, file_id)

    async def query_many(
        self, kb_ids: Sequence[str], query: str, *, top_k: int = 5
    ) -> list[ChunkHit]:
        """The chunks of several bases ranked together, by reciprocal rank fusion of each
        base's lexical ranking and one dense ranking across them (scores comparable)."""
        await self.prepare()
        return await self._hybrid.query(self._store, list(dict.fromkeys(kb_ids)), query, top_k)
