"""Which revision an append is made against, and why one was refused."""

from __future__ import annotations

from typing import Any

from google.adk.sessions.session import Session

from .._sql.errors import StaleSessionWriteError, UnknownSessionError
from .._sql.store import SqlStore
from ._rows import KEY, LAST_EVENT_ID, REVISION

__all__ = ["adopt_revision", "rejection", "unknown"]


async def adopt_revision(
    store: SqlStore, session: Session, params: dict[str, Any]
) -> tuple[int, int]:
    """The revision for a Session this service did not hand out.

    It is accepted as current only if its last event is the stored last event
    (or both have none), the same check ADK applies to marker-less sessions.
    """
    async with store.read() as tx:
        row = await tx.fetchone(
            f"SELECT s.sid, {REVISION}, {LAST_EVENT_ID} FROM yx_sessions s"
            " WHERE s.app_name = :app AND s.user_id = :user AND s.session_id = :sid",
            params,
        )
    if row is None:
        raise unknown(params)
    row_id, revision, last_event_id = row
    mine = session.events[-1].id if session.events else None
    if mine != last_event_id:
        raise StaleSessionWriteError(
            f"Session {params['sid']!r} has changed in storage since this copy was made;"
            " reload it with get_session before appending."
        )
    return int(row_id), int(revision)


async def rejection(store: SqlStore, params: dict[str, Any], revision: int) -> Exception:
    """The error for an append whose guarded INSERT wrote nothing."""
    async with store.read() as tx:
        row = await tx.fetchone(f"SELECT s.sid, {REVISION} FROM yx_sessions s WHERE {KEY}", params)
    if row is None or int(row[0]) != params["row"]:
        return unknown(params)
    return StaleSessionWriteError(
        f"Session {params['sid']!r} (app {params['app']!r}, user {params['user']!r}) was"
        f" modified by another writer: this copy is at revision {revision}, storage is at"
        f" {int(row[1])}. Reload it with get_session and append again."
    )


def unknown(params: dict[str, Any]) -> UnknownSessionError:
    return UnknownSessionError(
        f"Session {params['sid']!r} not found for app {params['app']!r} and user"
        f" {params['user']!r}; it was never created or has been deleted."
    )
