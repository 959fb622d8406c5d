"""What the database holds at the end: runs, waiting points, sessions and their events.

Read through the store and ADK's session service (the same reads a host makes), into
plain records the checker can compare without a database, so its rules are unit
tested on hand-made snapshots.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from google.adk.events import Event

from adk_yuxi.storage import YuxiServices

__all__ = [
    "EventRow",
    "PointRow",
    "RunRow",
    "Snapshot",
    "read_snapshot",
    "snapshot_json",
    "snapshot_of_json",
]


@dataclass(frozen=True)
class RunRow:
    run_id: str
    session_id: str
    invocation_id: str
    status: str
    error: str | None
    started_at: float
    ended_at: float | None


@dataclass(frozen=True)
class PointRow:
    id: str
    session_id: str
    invocation_id: str
    status: str
    answers: dict[str, Any] | None
    created_at: float


@dataclass(frozen=True)
class EventRow:
    """One stored ADK event, reduced to what the rules look at."""

    invocation_id: str
    author: str
    timestamp: float
    text: str = ""
    calls: tuple[str, ...] = ()  # function call ids
    responses: tuple[str, ...] = ()  # function response ids
    partial: bool = False
    error_code: str | None = None

    @property
    def final(self) -> bool:
        """A final answer of the agent: text, no call, not a fragment, no error."""
        return (
            self.author != "user"
            and bool(self.text)
            and not self.calls
            and not self.partial
            and self.error_code is None
        )


@dataclass
class Snapshot:
    runs: list[RunRow] = field(default_factory=list)
    points: list[PointRow] = field(default_factory=list)
    sessions: dict[str, list[EventRow]] = field(default_factory=dict)  # the existing ones

    def run_of(self, invocation_id: str) -> RunRow | None:
        return next((r for r in self.runs if r.invocation_id == invocation_id), None)


def snapshot_json(snapshot: Snapshot) -> str:
    return json.dumps(dataclasses.asdict(snapshot))


def snapshot_of_json(text: str) -> Snapshot:
    """A snapshot saved by `snapshot_json` (to check a recorded outcome again)."""
    data = json.loads(text)
    return Snapshot(
        runs=[RunRow(**r) for r in data["runs"]],
        points=[PointRow(**p) for p in data["points"]],
        sessions={
            sid: [
                EventRow(**{**e, "calls": tuple(e["calls"]), "responses": tuple(e["responses"])})
                for e in events
            ]
            for sid, events in data["sessions"].items()
        },
    )


def event_row(event: Event) -> EventRow:
    parts = event.content.parts if event.content is not None and event.content.parts else []
    text = "".join(p.text or "" for p in parts if not p.thought)
    calls = tuple(p.function_call.id or "" for p in parts if p.function_call is not None)
    responses = tuple(
        p.function_response.id or "" for p in parts if p.function_response is not None
    )
    return EventRow(
        invocation_id=event.invocation_id,
        author=event.author,
        timestamp=event.timestamp,
        text=text,
        calls=calls,
        responses=responses,
        partial=bool(event.partial),
        error_code=event.error_code,
    )


async def read_snapshot(services: YuxiServices, *, app_name: str, user_id: str) -> Snapshot:
    snapshot = Snapshot()
    async with services.store.read() as tx:
        for row in await tx.fetchall(
            "SELECT run_id, session_id, invocation_id, status, error, started_at, ended_at"
            " FROM yx_runs WHERE app_name = :a AND user_id = :u",
            {"a": app_name, "u": user_id},
        ):
            snapshot.runs.append(
                RunRow(
                    run_id=row[0],
                    session_id=row[1],
                    invocation_id=row[2],
                    status=row[3],
                    error=row[4],
                    started_at=float(row[5]),
                    ended_at=None if row[6] is None else float(row[6]),
                )
            )
        for row in await tx.fetchall(
            "SELECT id, session_id, invocation_id, status, answers, created_at"
            " FROM yx_waitpoints WHERE app_name = :a AND user_id = :u",
            {"a": app_name, "u": user_id},
        ):
            snapshot.points.append(
                PointRow(
                    id=row[0],
                    session_id=row[1],
                    invocation_id=row[2],
                    status=row[3],
                    answers=None if row[4] is None else json.loads(row[4]),
                    created_at=float(row[5]),
                )
            )
    sessions = services.session_service
    token: str | None = None
    while True:
        page = await sessions.list_sessions_page(
            app_name=app_name, user_id=user_id, page_size=100, page_token=token
        )
        for listed in page.sessions:
            session = await sessions.get_session(
                app_name=app_name, user_id=user_id, session_id=listed.id
            )
            if session is not None:
                snapshot.sessions[session.id] = [event_row(e) for e in session.events]
        token = page.next_page_token
        if token is None:
            break
    return snapshot
