"""A deleted session's tombstone in memory: deleted stays deleted.

A memory job may read a session, then the host deletes it, then the job ingests what it
read. The memories already made from the session become tombstones when it is deleted,
but events not yet ingested have none. So deleting a session also stores one row for
the session itself (memory id ``#deleted-session:<id>``, deleted, dated at the delete),
and an ingest naming the session with any event from before that date is refused
(`SessionDeletedError`). A session created again later under the same id has only newer
events, and is ingested as usual.
"""

from __future__ import annotations

import time

from .._sql.store import Tx
from ._errors import SessionDeletedError

__all__ = ["SESSION_TOMBSTONE", "bury_session", "refuse_deleted"]

SESSION_TOMBSTONE = "#deleted-session:"


async def bury_session(tx: Tx, app: str, user: str, session_id: str) -> None:
    """Stores (or re-dates) the session's tombstone, inside the deleting transaction."""
    await tx.execute(
        "INSERT INTO yx_memories (app_name, user_id, memory_id, session_id, timestamp,"
        " content, custom_metadata, scope, body, deleted)"
        " VALUES (:app, :user, :memory_id, :session, :ts, '', '{}', '', '', :deleted)"
        " ON CONFLICT (app_name, user_id, memory_id) DO UPDATE SET"
        " timestamp = excluded.timestamp",
        {
            "app": app,
            "user": user,
            "memory_id": SESSION_TOMBSTONE + session_id,
            "session": session_id,
            "ts": time.time(),
            "deleted": True,
        },
    )


async def refuse_deleted(tx: Tx, app: str, user: str, session_id: str, earliest: float) -> None:
    """`SessionDeletedError` if the session was deleted at or after ``earliest`` (the
    timestamp of the oldest event being ingested)."""
    found = await tx.fetchone(
        "SELECT timestamp FROM yx_memories WHERE app_name = :app AND user_id = :user"
        " AND memory_id = :memory_id",
        {"app": app, "user": user, "memory_id": SESSION_TOMBSTONE + session_id},
    )
    if found is not None and earliest <= float(found[0]):
        raise SessionDeletedError(session_id)
