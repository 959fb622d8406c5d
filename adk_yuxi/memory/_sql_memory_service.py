"""ADK memory service on the platform database, with ranked full-text search.

Each memory is one ``yx_memories`` row keyed by (app, user, memory id); a memory
made from an event uses the event id, so ingesting a session twice adds nothing
(``ON CONFLICT DO NOTHING``). Deleting leaves a tombstone with its content
cleared, so re-ingesting the session later does not resurrect the memory; an
explicit ``add_memory`` with the same id does. Deleting a session (`forget_session`)
also leaves a tombstone of the session itself (``_tombstones``): a later ingest of
what it held is refused. Search is scoped to (app, user)
inside the full-text query itself and ranked by the backend (see ``_tokens``).
With an embedder (opt-in), each memory also gets a vector in the same transaction,
and a search fuses both rankings (``_vectors``); while the model fails, memories are
stored and searched by text alone.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from google.adk.events.event import Event
from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from .._extras import require_extra
from .._sql.jsoncodec import check_text, dumps, dumps_checked, json_safe
from .._sql.names import check_app_name, check_session_id, check_user_id
from .._sql.store import SqlStore, Tx, make_store
from ._content import content_json, text_of
from ._pieces import PIECE_SUFFIX, piece_id, split_pieces
from ._search import entry_of, full_text, rows_by_mid
from ._tokens import index_tokens, query_tokens, scope_token
from ._tombstones import SESSION_TOMBSTONE, bury_session, refuse_deleted
from ._vector_schema import MEMORY_VECTOR_SCHEMA

if TYPE_CHECKING:
    from ..knowledge._embedding import Embedder
    from ._vectors import MemoryVectors, Pending

_ = MEMORY_VECTOR_SCHEMA  # registered on import: deletes clear vectors even without an embedder

_COLUMNS = (
    "app_name, user_id, memory_id, session_id, event_id, author, timestamp, content,"
    " custom_metadata, scope, body, deleted"
)
_VALUES = (
    ":app, :user, :memory_id, :session_id, :event_id, :author, :ts, :content, :meta, :scope,"
    " :body, :deleted"
)
# The pieces of a long memory (see ``_pieces``), by id prefix on both backends.
_PIECES = "substr(memory_id, 1, :prefix_len) = :prefix"
# Candidates each signal ranks before fusion (as the knowledge bases' hybrid search).
_CANDIDATES = 20


def _pieces_of(memory_id: str) -> dict[str, Any]:
    prefix = memory_id + PIECE_SUFFIX
    return {"prefix": prefix, "prefix_len": len(prefix)}


def _piece_rows(
    base: dict[str, Any], content: types.Content, as_json: str, text: str
) -> list[Pending]:
    """The rows of one memory, each with its text: itself, or its pieces when long."""
    pieces = split_pieces(text)
    if len(pieces) == 1:
        return [({**base, "content": as_json, "body": index_tokens(text)}, text)]
    meta = json.loads(base["meta"])
    rows: list[Pending] = []
    for index, piece in enumerate(pieces):
        piece_content = types.Content(role=content.role, parts=[types.Part(text=piece)])
        row = {
            **base,
            "memory_id": piece_id(base["memory_id"], index),
            "content": content_json(piece_content),
            "meta": dumps({**meta, "piece": index, "pieces": len(pieces)}),
            "body": index_tokens(piece),
        }
        rows.append((row, piece))
    return rows


def _event_memory_id(event: Event, as_json: str) -> str:
    if event.id:
        return event.id
    payload = f"{event.author}:{event.timestamp}:{as_json}".encode()
    return hashlib.sha256(payload).hexdigest()[:32]


def _timestamp_of(entry: MemoryEntry) -> float:
    if entry.timestamp:
        try:
            return datetime.fromisoformat(entry.timestamp).timestamp()
        except ValueError:
            pass
    return time.time()


class SqlMemoryService(BaseMemoryService):
    """Long-term memory in one SQL database, searchable in English and Chinese.

    Args:
      db: An SQLAlchemy async URL or an existing ``AsyncEngine`` (see
        ``SqlSessionService``).
      max_results: The most memories one search returns.
      embedder: Opt-in (an `adk_yuxi.knowledge` embedder, the `knowledge` extra):
        memories are embedded as they are stored, and a search fuses full text with
        cosine similarity, so a paraphrase or a question in the other language finds
        them (see ``_vectors``). Without one, nothing is embedded.
      **engine_kwargs: Passed to ``create_async_engine`` when ``db`` is a URL.
    """

    def __init__(
        self,
        db: str | URL | AsyncEngine | SqlStore,
        *,
        max_results: int = 10,
        embedder: Embedder | None = None,
        **engine_kwargs: Any,
    ) -> None:
        if max_results < 1:
            raise ValueError("max_results must be at least 1.")
        self._vectors: MemoryVectors | None = None
        if embedder is not None:
            require_extra("numpy", "knowledge", "Memory search with an embedder")
            from ._vectors import MemoryVectors

            self._vectors = MemoryVectors(embedder)
        self._store, self._owns_store = make_store(db, **engine_kwargs)
        self._max_results = max_results

    @property
    def embedder(self) -> Embedder | None:
        return None if self._vectors is None else self._vectors.embedder

    async def close(self) -> None:
        """Releases connections (and the engine, if this service created it)."""
        if self._owns_store:
            await self._store.close()

    async def add_session_to_memory(self, session: Session) -> None:
        await self.add_events_to_memory(
            app_name=session.app_name,
            user_id=session.user_id,
            events=session.events,
            session_id=session.id,
        )

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        app_name = check_app_name(app_name)
        user_id = check_user_id(user_id)
        session_id = check_session_id(session_id) if session_id else None
        meta = dumps_checked(json_safe(custom_metadata or {}), "memory custom_metadata")
        scope = scope_token(app_name, user_id)
        pending: list[Pending] = []
        for event in events:
            text = text_of(event.content)
            if not text or event.content is None:
                continue
            as_json = content_json(event.content)
            base = {
                "app": app_name,
                "user": user_id,
                "memory_id": check_text(_event_memory_id(event, as_json), "memory id"),
                "session_id": session_id,
                "event_id": check_text(event.id, "event id") or None,
                "author": check_text(event.author or "", "memory author") or None,
                "ts": float(event.timestamp),
                "meta": meta,
                "scope": scope,
                "deleted": False,
            }
            pending.extend(_piece_rows(base, event.content, as_json, text))
        if not pending:
            return
        embed = pending
        if self._vectors is not None:  # a memory already stored is not embedded again
            embed = await self._vectors.unembedded(self._store, app_name, user_id, pending)
        vectors = await self._embed(embed)
        async with self._store.write() as tx:
            if session_id is not None:
                earliest = min(row["ts"] for row, _ in pending)
                await refuse_deleted(tx, app_name, user_id, session_id, earliest)
            await tx.executemany(
                f"INSERT INTO yx_memories ({_COLUMNS}) VALUES ({_VALUES})"
                " ON CONFLICT (app_name, user_id, memory_id) DO NOTHING",
                [row for row, _ in pending],
            )
            await self._write_vectors(tx, embed, vectors)

    async def _embed(self, pending: list[Pending]) -> Any:
        """The rows' vectors, made before the write transaction opens (None: no embedder)."""
        if self._vectors is None or not pending:
            return None
        return await self._vectors.passages_or_none([text for _, text in pending])

    async def _write_vectors(self, tx: Tx, pending: list[Pending], vectors: Any) -> None:
        if self._vectors is not None and vectors is not None:
            await self._vectors.write(tx, pending, vectors)

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Adds or replaces explicit memories; an entry without an id gets one."""
        app_name = check_app_name(app_name)
        user_id = check_user_id(user_id)
        scope = scope_token(app_name, user_id)
        pending: list[Pending] = []
        prefixes: list[dict[str, Any]] = []
        for entry in memories:
            meta = json_safe({**dict(custom_metadata or {}), **entry.custom_metadata})
            memory_id = check_text(entry.id or uuid.uuid4().hex, "memory id")
            base = {
                "app": app_name,
                "user": user_id,
                "memory_id": memory_id,
                "session_id": None,
                "event_id": None,
                "author": None if entry.author is None else check_text(entry.author, "author"),
                "ts": _timestamp_of(entry),
                "meta": dumps_checked(meta, "memory custom_metadata"),
                "scope": scope,
                "deleted": False,
            }
            as_json = content_json(entry.content)
            pending.extend(_piece_rows(base, entry.content, as_json, text_of(entry.content)))
            prefixes.append({"app": app_name, "user": user_id, **_pieces_of(memory_id)})
        if not pending:
            return
        embed = [(row, text) for row, text in pending if text]
        vectors = await self._embed(embed)
        async with self._store.write() as tx:
            # A replaced memory may have had more pieces than it has now.
            await tx.executemany(
                f"DELETE FROM yx_memories WHERE app_name = :app AND user_id = :user AND {_PIECES}",
                prefixes,
            )
            await tx.executemany(
                f"INSERT INTO yx_memories ({_COLUMNS}) VALUES ({_VALUES})"
                " ON CONFLICT (app_name, user_id, memory_id) DO UPDATE SET"
                " author = excluded.author, timestamp = excluded.timestamp,"
                " content = excluded.content, custom_metadata = excluded.custom_metadata,"
                " body = excluded.body, deleted = excluded.deleted",
                [row for row, _ in pending],
            )
            await self._write_vectors(tx, embed, vectors)

    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        """Deletes one memory; an unknown id is a no-op, as in ADK's services."""
        app_name = check_app_name(app_name)
        user_id = check_user_id(user_id)
        if not memory_id:
            return
        check_text(memory_id, "memory id")
        async with self._store.write() as tx:
            await tx.execute(
                "UPDATE yx_memories SET deleted = :deleted, content = '', body = ''"
                " WHERE app_name = :app AND user_id = :user"
                f" AND (memory_id = :memory_id OR {_PIECES})",
                {
                    "deleted": True,
                    "app": app_name,
                    "user": user_id,
                    "memory_id": memory_id,
                    **_pieces_of(memory_id),
                },
            )

    async def forget_session(self, tx: Tx, *, app_name: str, user_id: str, session_id: str) -> int:
        """Inside the caller's transaction (a session being deleted): every memory made
        from the session becomes a tombstone, and the session gets one of its own, dated
        now, so no later ingest of what it held brings it back; returns how many
        memories were made tombstones."""
        app_name, user_id = check_app_name(app_name), check_user_id(user_id)
        forgotten = await tx.execute(
            "UPDATE yx_memories SET deleted = :deleted, content = '', body = ''"
            " WHERE app_name = :app AND user_id = :user AND session_id = :session"
            " AND memory_id <> :memory_id",
            {
                "deleted": True,
                "app": app_name,
                "user": user_id,
                "session": check_session_id(session_id),
                "memory_id": SESSION_TOMBSTONE + session_id,
            },
        )
        await bury_session(tx, app_name, user_id, session_id)
        return forgotten

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """Full text; with an embedder, fused with cosine similarity by reciprocal rank
        (the question embedded before the read opens)."""
        app_name = check_app_name(app_name)
        user_id = check_user_id(user_id)
        tokens = query_tokens(query or "")
        vector = None
        if self._vectors is not None and (query or "").strip():
            vector = await self._vectors.query_or_none(query)
        if vector is None or self._vectors is None:
            if not tokens:
                return SearchMemoryResponse()
            async with self._store.read() as tx:
                rows = await full_text(tx, app_name, user_id, tokens, self._max_results)
            return SearchMemoryResponse(memories=[entry_of(row) for row in rows])
        wanted = max(self._max_results, _CANDIDATES)
        async with self._store.read() as tx:
            lexical = await full_text(tx, app_name, user_id, tokens, wanted) if tokens else []
            dense = await self._vectors.nearest(tx, app_name, user_id, vector, wanted)
            found = {int(row[0]): row for row in lexical}
            order = self._vectors.fused(list(found), dense, self._max_results)
            missing = [mid for mid in order if mid not in found]
            found.update(await rows_by_mid(tx, app_name, user_id, missing))
        return SearchMemoryResponse(memories=[entry_of(found[m]) for m in order if m in found])

    async def embed_missing(
        self, *, app_name: str | None = None, user_id: str | None = None
    ) -> int:
        """Embeds the live memories (of one app or user, when named) that have no vector
        of the configured model: those stored before the embedder was set, or by another
        model. Until then they answer by full text only. Returns how many were embedded."""
        if self._vectors is None:
            raise ValueError("embed_missing needs the service built with an embedder.")
        app = None if app_name is None else check_app_name(app_name)
        user = None if user_id is None else check_user_id(user_id)
        return await self._vectors.fill(self._store, app, user)
