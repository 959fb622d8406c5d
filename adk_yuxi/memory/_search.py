"""Reading memories for a search: the full-text ranking and the rows by row id.

Both read only the (app, user) scope's live memories, so a deleted memory or session
(a tombstone) is never returned, whichever signal found it. The full-text match
carries the scope inside the query itself and is ranked by the backend (see
``_tokens``); rows come back as `entry_of` reads them, their row id (``mid``) first.
"""

from __future__ import annotations

import functools
import json
from datetime import datetime
from typing import Any

from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from .._sql.store import Row, Tx
from ._tokens import scope_token

__all__ = ["entry_of", "full_text", "rows_by_mid"]

_SELECT = (
    "m.mid, m.memory_id, m.session_id, m.event_id, m.author, m.timestamp, m.content,"
    " m.custom_metadata"
)


async def full_text(tx: Tx, app: str, user: str, tokens: list[str], limit: int) -> list[Row]:
    """The scope's live memories matching any of ``tokens``, best first."""
    params: dict[str, Any] = {"app": app, "user": user, "deleted": False, "limit": limit}
    if tx.backend == "postgresql":
        # Match on scope AND any term, so the GIN index intersects the
        # user's rows with the terms' rows; rank on the terms alone.
        terms = " | ".join(f"'{token}'" for token in tokens)
        params["match"] = f"'{scope_token(app, user)}' & ({terms})"
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
    params["q"] = f'scope : "{scope_token(app, user)}" AND body : ({terms})'
    return await tx.fetchall(
        f"SELECT {_SELECT} FROM yx_memories_fts JOIN yx_memories m"
        " ON m.mid = yx_memories_fts.rowid"
        " WHERE yx_memories_fts MATCH :q AND m.app_name = :app AND m.user_id = :user"
        " AND m.deleted = :deleted"
        " ORDER BY bm25(yx_memories_fts, 0.0, 1.0), m.timestamp DESC LIMIT :limit",
        params,
    )


@functools.lru_cache(maxsize=64)
def _by_mid_sql(count: int) -> str:
    return (
        f"SELECT {_SELECT} FROM yx_memories m WHERE m.mid IN"
        f" ({', '.join(f':m{i}' for i in range(count))})"
        " AND m.app_name = :app AND m.user_id = :user AND m.deleted = :deleted"
    )


async def rows_by_mid(tx: Tx, app: str, user: str, mids: list[int]) -> dict[int, Row]:
    """The rows of these memories that are the scope's and live, by row id."""
    if not mids:
        return {}
    params = {f"m{i}": mid for i, mid in enumerate(mids)}
    rows = await tx.fetchall(
        _by_mid_sql(len(mids)), {**params, "app": app, "user": user, "deleted": False}
    )
    return {int(row[0]): row for row in rows}


def entry_of(row: Row) -> MemoryEntry:
    """The memory as ADK returns it; its session and event ids in its metadata."""
    _, memory_id, session_id, event_id, author, timestamp, content, meta = row
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
