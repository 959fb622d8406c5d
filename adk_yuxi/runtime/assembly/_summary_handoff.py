"""A summary written in the background is stored by the session's next run.

Appended by the background task itself, it could land between the next run's session
read and that run's first append: the run's copy is then behind storage and its first
append fails as stale (a user's turn lost to a summary). So the task only writes the
summary event (ADK's compaction, through a session service that keeps the event
instead of storing it), and the session's next run in this process appends it through
its own Session object, before its message: nothing else writes between. A summary
that a newer one already covers is dropped; so is one whose append is refused as stale
(another process wrote first). `settle()` stores what no run has taken yet.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from google.adk.events.event import Event
from google.adk.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
)
from google.adk.sessions.session import Session
from typing_extensions import override

from ..._adk import StaleSessionError

__all__ = ["KeptSummaries", "SummaryCapture"]

logger = logging.getLogger(__name__)

Key = tuple[str, str, str]  # app, user, session
MAX_KEPT = 1024  # sessions whose summary waits for a run; the oldest is dropped (redone later)


class SummaryCapture(BaseSessionService):
    """`inner` for reads; an append is kept in `events`, not stored."""

    def __init__(self, inner: BaseSessionService) -> None:
        self.inner = inner
        self.events: list[Event] = []

    @override
    async def append_event(self, session: Session, event: Event) -> Event:
        self.events.append(event)
        return event

    @override
    async def create_session(self, **kwargs: Any) -> Session:
        return await self.inner.create_session(**kwargs)

    @override
    async def get_session(
        self, *, app_name: str, user_id: str, session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:  # fmt: skip
        return await self.inner.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id, config=config
        )

    @override
    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        return await self.inner.list_sessions(app_name=app_name, user_id=user_id)

    @override
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        await self.inner.delete_session(app_name=app_name, user_id=user_id, session_id=session_id)


def _covered_until(events: list[Event]) -> float:
    """The end of the newest range a summary among `events` covers."""
    ends = [
        e.actions.compaction.end_timestamp or 0.0
        for e in events
        if e.actions and e.actions.compaction is not None
    ]
    return max(ends, default=0.0)


class KeptSummaries:
    """Summaries waiting for their session's next run, one per session."""

    def __init__(self) -> None:
        self._kept: OrderedDict[Key, tuple[BaseSessionService, Event]] = OrderedDict()

    def keep(self, key: Key, service: BaseSessionService, event: Event) -> None:
        self._kept[key] = (service, event)
        self._kept.move_to_end(key)
        while len(self._kept) > MAX_KEPT:
            self._kept.popitem(last=False)

    async def store_into(self, key: Key, session: Session, service: BaseSessionService) -> None:
        """Appends the summary kept for `key` through `session` (a run's own copy)."""
        kept = self._kept.pop(key, None)
        if kept is not None:
            await _append(service, session, kept[1])

    async def store_all(self) -> None:
        """Stores every kept summary into its session read afresh (no run is going on)."""
        while self._kept:
            (app, user, sid), (service, event) = self._kept.popitem(last=False)
            session = await service.get_session(app_name=app, user_id=user, session_id=sid)
            if session is not None:
                await _append(service, session, event)


async def _append(service: BaseSessionService, session: Session, event: Event) -> None:
    compaction = event.actions.compaction if event.actions else None
    end = compaction.end_timestamp if compaction is not None else None
    if end is None or _covered_until(session.events) >= end:
        return  # a newer summary covers it already
    try:
        await service.append_event(session=session, event=event)
    except StaleSessionError:
        logger.info("Summary dropped: the session moved on in another process")
