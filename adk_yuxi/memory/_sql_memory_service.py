"""ADK memory service on the platform database, with ranked full-text search.

Each memory is one ``yx_memories`` row keyed by (app, user, memory id); a memory
made from an event uses the event id, so ingesting a session twice adds nothing
(``ON CONFLICT DO NOTHING``). Deleting leaves a tombstone with its content
cleared, so re-ingesting the session later does not resurrect the memory; an
explicit ``add_memory`` with the same id does. Deleting a session (`forget_session`)
also leaves a tombstone of the session itself (``_tombstones``): a later ingest of
what it held is refused. Search is scoped to (app, user)
inside the full-text query itself and ranked by the backend (see ``_tokens``).
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from google.adk.events.event import Event
from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types
from pydantic_core import PydanticSerializationError
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from .._sql.errors import InvalidValueError
from .._sql.jsoncodec import check_text, dumps, dumps_checked, json_safe
from .._sql.names import check_app_name, check_session_id, check_user_id
from .._sql.store import SqlStore, Tx, make_store
from ._pieces import PIECE_SUFFIX, piece_id, split_pieces
from ._tokens import index_tokens, query_tokens, scope_token
from ._tombstones import SESSION_TOMBSTONE, bury_session, refuse_deleted

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
_SELECT = (
    "m.memory_id, m.session_id, m.event_id, m.author, m.timestamp, m.content, m.custom_metadata"
)


def _text_of(content: types.Content | None) -> str:
    if content is None or not content.parts:
        return ""
    return " ".join(p.text for p in content.parts if p.text and not p.thought).strip()


def _content_json(content: types.Content) -> str:
    """The content as JSON (NUL escaped); refused if it holds text no backend can store."""
    try:
        return content.model_dump_json(exclude_none=True)
    except PydanticSerializationError as exc:
        raise InvalidValueError(f"Invalid memory content: {exc}") from None


def _pieces_of(memory_id: str) -> dict[str, Any]:
    prefix = memory_id + PIECE_SUFFIX
    return {"prefix": prefix, "prefix_len": len(prefix)}


def _piece_rows(
    base: dict[str, Any], content: types.Content, content_json: str, text: str
) -> list[dict[str, Any]]:
    """The rows of one memory: itself, or its pieces when the text is long."""
    pieces = split_pieces(text)
    if len(pieces) == 1:
        return [{**base, "content": content_json, "body": index_tokens(text)}]
    meta = json.loads(base["meta"])
    rows = []
    for index, piece in enumerate(pieces):
        piece_content = types.Content(role=content.role, parts=[types.Part(text=piece)])
        rows.append(
            {
                **base,
                "memory_id": piece_id(base["memory_id"], index),
                "content": _content_json(piece_content),
                "meta": dumps({**meta, "piece": index, "pieces": len(pieces)}),
                "body": index_tokens(piece),
            }
        )
    return rows


def _event_memory_id(event: Event, content_json: str) -> str:
    if event.id:
        return event.id
    payload = f"{event.author}:{event.timestamp}:{content_json}".encode()
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
      **engine_kwargs: Passed to ``create_async_engine`` when ``db`` is a URL.
    """

    def __init__(
        self,
        db: str | URL | AsyncEngine | SqlStore,
        *,
        max_results: int = 10,
        **engine_kwargs: Any,
    ) -> None:
        if max_results < 1:
            raise ValueError("max_results must be at least 1.")
        self._store, self._owns_store = make_store(db, **engine_kwargs)
        self._max_results = max_results

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
        rows: list[dict[str, Any]] = []
        for event in events:
            text = _text_of(event.content)
            if not text or event.content is None:
                continue
            content_json = _content_json(event.content)
            base = {
                "app": app_name,
                "user": user_id,
                "memory_id": check_text(_event_memory_id(event, content_json), "memory id"),
                "session_id": session_id,
                "event_id": check_text(event.id, "event id") or None,
                "author": check_text(event.author or "", "memory author") or None,
                "ts": float(event.timestamp),
                "meta": meta,
                "scope": scope,
                "deleted": False,
            }
            rows.extend(_piece_rows(base, event.content, content_json, text))
        if not rows:
            return
        async with self._store.write() as tx:
            if session_id is not None:
                earliest = min(row["ts"] for row in rows)
                await refuse_deleted(tx, app_name, user_id, session_id, earliest)
            await tx.executemany(
                f"INSERT INTO yx_memories ({_COLUMNS}) VALUES ({_VALUES})"
                " ON CONFLICT (app_name, user_id, memory_id) DO NOTHING",
                rows,
            )

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
        rows: list[dict[str, Any]] = []
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
            content_json = _content_json(entry.content)
            rows.extend(_piece_rows(base, entry.content, content_json, _text_of(entry.content)))
            prefixes.append({"app": app_name, "user": user_id, **_pieces_of(memory_id)})
        if not rows:
            return
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
                rows,
            )

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
        app_name = check_app_name(app_name)
        user_id = check_user_id(user_id)
        tokens = query_tokens(query or "")
        if not tokens:
            return SearchMemoryResponse()
        params: dict[str, Any] = {
            "app": app_name,
            "user": user_id,
            "deleted": False,
            "limit": self._max_results,
        }
        async with self._store.read() as tx:
            rows = await self._search(tx, tokens, params)
        return SearchMemoryResponse(memories=[self._entry(row) for row in rows])

    async def _search(self, tx: Tx, tokens: list[str], params: dict[str, Any]) -> list[Any]:
        if tx.backend == "postgresql":
            # Match on scope AND any term, so the GIN index intersects the
            # user's rows with the terms' rows; rank on the terms alone.
            terms = " | ".join(f"'{token}'" for token in tokens)
            params["match"] = f"'{scope_token(params['app'], params['user'])}' & ({terms})"
            params["q"] = terms
            return await tx.fetchall(
                f"SELECT {_SELECT} FROM yx_memories m"
                " WHERE m.tsv @@ to_tsquery('simple', :match)"
                " AND m.app_name = :app AND m.user_id = :user AND m.deleted = :deleted"
                " ORDER BY ts_rank(m.tsv, to_tsquery('simple', :q)) DESC,"
                " m.timestamp DESC LIMIT :limit",
                params,
            )
        terms = " OR ".join(f'"{token}"' for token in tokens)
        params["q"] = f'scope : "{scope_token(params["app"], params["user"])}" AND body : ({terms})'
        return await tx.fetchall(
            f"SELECT {_SELECT} FROM yx_memories_fts JOIN yx_memories m"
            " ON m.mid = yx_memories_fts.rowid"
            " WHERE yx_memories_fts MATCH :q AND m.app_name = :app AND m.user_id = :user"
            " AND m.deleted = :deleted"
            " ORDER BY bm25(yx_memories_fts, 0.0, 1.0), m.timestamp DESC LIMIT :limit",
            params,
        )

    @staticmethod
    def _entry(row: Any) -> MemoryEntry:
        memory_id, session_id, event_id, author, timestamp, content, meta = row
        custom = json.loads(meta) if meta else {}
        if session_id:
            custom.setdefault("session_id", session_id)
        if event_id:
            custom.setdefault("event_id", event_id)
        return MemoryEntry(
            id=memory_id,
            content=types.Content.model_validate_json(content),
            author=author,
            timestamp=datetime.fromtimestamp(float(timestamp)).isoformat(),
            custom_metadata=custom,
        )
