"""Long session histories for the benchmarks, inserted in bulk.

A prior turn is four events as the Runner stores them (the user's message, the
model's tool call, the tool's result, the model's answer). `seed_sql` writes them
straight into `yx_events` in one transaction, with the window floor the service
would have stored for a summary event, so 10,000 events take about a second instead
of 10,000 appends.
"""

from __future__ import annotations

import time

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.genai import types

from adk_yuxi.sessions import SessionWindow
from adk_yuxi.sessions._window import window_floor
from adk_yuxi.storage import YuxiServices

__all__ = ["resummarize", "seed_sql", "turn_events", "with_summary"]

_START = time.time() - 1_000_000.0


def turn_events(i: int) -> list[Event]:
    """The four events of prior turn `i`, a second apart from the previous turn's."""
    at = _START + 4 * i
    invocation = f"past-{i}"
    call = types.FunctionCall(id=f"call-{i}", name="lookup", args={"topic": f"topic {i}"})
    result = types.FunctionResponse(
        id=f"call-{i}", name="lookup", response={"topic": f"topic {i}", "facts": ["a", "b"]}
    )
    parts = [
        ("user", "user", types.Part(text=f"question {i}: what do we know about topic {i}?")),
        ("bench", "model", types.Part(function_call=call)),
        ("bench", "user", types.Part(function_response=result)),
        ("bench", "model", types.Part(text=f"answer {i}: topic {i} is well documented.")),
    ]
    return [
        Event(
            author=author,
            invocation_id=invocation,
            timestamp=at + j * 0.25,
            content=types.Content(role=role, parts=[part]),
        )
        for j, (author, role, part) in enumerate(parts)
    ]


def with_summary(history: list[Event], retained: int = 4) -> list[Event]:
    """`history` and, after it, one summary of all but its last `retained` events (as
    token-threshold compaction leaves a long conversation)."""
    if len(history) <= retained:
        return list(history)
    covered = history[:-retained]
    text = f"Summary of {len(covered)} earlier events: topics 0 to {len(covered) // 4 - 1}."
    compaction = EventCompaction(
        start_timestamp=covered[0].timestamp,
        end_timestamp=covered[-1].timestamp,
        compacted_content=types.Content(role="model", parts=[types.Part(text=text)]),
    )
    summary = Event(
        author="user",
        invocation_id="summary",
        timestamp=history[-1].timestamp + 0.1,
        actions=EventActions(compaction=compaction),
    )
    return [*history, summary]


async def seed_sql(
    services: YuxiServices, app: str, user: str, session_id: str, events: list[Event]
) -> None:
    """Appends `events` to an existing, empty session in one transaction."""
    if not events:
        return
    store = services.store
    key = {"app": app, "user": user, "sid": session_id}
    rows = []
    for seq, event in enumerate(events, start=1):
        floor = None
        if event.actions and event.actions.compaction:
            floor = window_floor(events[: seq - 1], 1, event)
        rows.append(
            {
                "seq": seq,
                "event_id": event.id,
                "invocation_id": event.invocation_id,
                "ts": event.timestamp,
                "data": event.model_dump_json(exclude_none=True),
                "floor": floor,
            }
        )
    async with store.write() as tx:
        found = await tx.fetchone(
            "SELECT sid FROM yx_sessions WHERE app_name = :app AND user_id = :user"
            " AND session_id = :sid",
            key,
        )
        assert found is not None, "create the session first"
        await tx.executemany(
            "INSERT INTO yx_events (sid, seq, event_id, invocation_id, timestamp, data,"
            f" window_floor) VALUES ({int(found[0])}, :seq, :event_id, :invocation_id, :ts,"
            " :data, :floor)",
            rows,
        )


async def resummarize(
    services: YuxiServices, app: str, user: str, session_id: str, retained: int = 4
) -> None:
    """Appends a rolling summary of the window but its last `retained` raw events,
    through the service (which stores its floor), as token-threshold compaction does
    after a turn: the window is back to the summary and the retained events."""
    sessions = services.session_service
    session = await sessions.get_session(
        app_name=app, user_id=user, session_id=session_id, config=SessionWindow()
    )
    assert session is not None
    raw = [e for e in session.events if not (e.actions and e.actions.compaction)]
    older = [e.actions.compaction for e in session.events if e.actions and e.actions.compaction]
    if len(raw) <= retained:
        return
    start = older[-1].start_timestamp if older else None
    start = raw[0].timestamp if start is None else start
    covered = raw[:-retained]
    text = f"Summary up to {covered[-1].invocation_id}."
    compaction = EventCompaction(
        start_timestamp=start,
        end_timestamp=covered[-1].timestamp,
        compacted_content=types.Content(role="model", parts=[types.Part(text=text)]),
    )
    await sessions.append_event(
        session,
        Event(author="user", invocation_id="summary", actions=EventActions(compaction=compaction)),
    )
