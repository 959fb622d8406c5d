"""The events a follower has not seen yet, without reading the whole session.

A host streaming a session to a client polls for what the run appended since the last
poll. A whole read per poll parses every stored event: at 10,000 events that is most
of a core for each follower. Events are keyed by ``(sid, seq)`` and ``seq`` only grows,
so a follower that remembers the last seq it saw reads just the rows after it.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.adk.events.event import Event

from .._sql.names import check_app_name, check_session_id, check_user_id
from .._sql.store import SqlStore
from ._event_cache import EventCache, read_events
from ._fast_marks import FastMarks

__all__ = ["StoredEvents", "events_after"]


@dataclass(frozen=True)
class StoredEvents:
    """Events stored after a seq, in order; `last_seq` is the seq to poll after next
    and `row_id` the stored session they belong to (a session deleted and made again
    under the same id has another)."""

    events: list[Event]
    last_seq: int
    row_id: int


async def events_after(
    store: SqlStore,
    cache: EventCache,
    marks: FastMarks,
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    after_seq: int,
) -> StoredEvents | None:
    """The session's events with a seq above `after_seq` (0: all), parsed afresh; None
    when the session is not stored."""
    params = {
        "app": check_app_name(app_name),
        "user": check_user_id(user_id),
        "sid": check_session_id(session_id),
    }
    async with store.read() as tx:
        found = await tx.fetchone(
            "SELECT sid FROM yx_sessions"
            " WHERE app_name = :app AND user_id = :user AND session_id = :sid",
            params,
        )
        if found is None:
            return None
        row_id = int(found[0])
        rows = await tx.fetchall(
            "SELECT seq, data, fast_codec, event_id FROM yx_events"
            " WHERE sid = :row AND seq > :after ORDER BY seq",
            {"row": row_id, "after": int(after_seq)},
        )
    events = read_events(cache, marks, row_id, rows, shared=False)
    return StoredEvents(events, int(rows[-1][0]) if rows else int(after_seq), row_id)
