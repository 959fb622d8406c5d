"""One asyncio lock per ``Session`` object, so appends through it run in turn.

ADK's live mode appends background-tool results with several concurrent
``append_event`` calls on the same Session object; ADK's own database service
accepts all of them. Serialising them per object keeps that contract while a
genuinely stale object (another writer changed the session) still gets the stale
error. Sessions are unhashable pydantic models, so locks are keyed by ``id()``
and dropped when the object is collected.
"""

from __future__ import annotations

import asyncio
import weakref

from google.adk.sessions.session import Session


class SessionObjectLocks:
    """Locks keyed by Session object identity, released with the object."""

    def __init__(self) -> None:
        self._locks: dict[int, asyncio.Lock] = {}

    def lock_for(self, session: Session) -> asyncio.Lock:
        key = id(session)
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
            weakref.finalize(session, self._locks.pop, key, None)
        return lock

    def __len__(self) -> int:
        return len(self._locks)
