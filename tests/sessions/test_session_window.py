"""Windowed reads (`SessionWindow`): the tail of a full read, from the latest compaction's
floor, on both backends; the stored floor follows ADK's compaction rules."""

from __future__ import annotations

import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

from adk_yuxi.sessions import SessionWindow, SqlSessionService
from adk_yuxi.storage import YuxiServices

APP = "chat"
WINDOW = SessionWindow()


def said(text: str, ts: float, author: str = "user") -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        invocation_id=f"inv-{ts}",
        timestamp=ts,
        content=types.Content(role=role, parts=[types.Part(text=text)]),
    )


def called(call_id: str, ts: float) -> Event:
    call = types.FunctionCall(id=call_id, name="lookup", args={"q": call_id})
    return Event(
        author="agent",
        invocation_id=f"inv-{ts}",
        timestamp=ts,
        content=types.Content(role="model", parts=[types.Part(function_call=call)]),
    )


def answered(call_id: str, ts: float, author: str = "agent") -> Event:
    response = types.FunctionResponse(id=call_id, name="lookup", response={"r": call_id})
    return Event(
        author=author,
        invocation_id=f"inv-{ts}",
        timestamp=ts,
        content=types.Content(role="user", parts=[types.Part(function_response=response)]),
    )


def summary(start: float, end: float, ts: float, text: str = "summary") -> Event:
    content = types.Content(role="model", parts=[types.Part(text=text)])
    compaction = EventCompaction(
        start_timestamp=start, end_timestamp=end, compacted_content=content
    )
    return Event(
        author="user",
        invocation_id=f"sum-{ts}",
        timestamp=ts,
        actions=EventActions(compaction=compaction),
    )


@pytest.fixture
def sessions(services: YuxiServices) -> SqlSessionService:
    return services.session_service


async def fill(sessions: SqlSessionService, events: list[Event], sid: str = "s1") -> None:
    session = await sessions.create_session(
        app_name=APP, user_id="u", session_id=sid, state={"k": 1}
    )
    for event in events:
        session = (
            await sessions.get_session(app_name=APP, user_id="u", session_id=sid, config=WINDOW)
            or session
        )
        await sessions.append_event(session, event)


async def both(sessions: SqlSessionService, sid: str = "s1") -> tuple[list[Event], list[Event]]:
    full = await sessions.get_session(app_name=APP, user_id="u", session_id=sid)
    windowed = await sessions.get_session(app_name=APP, user_id="u", session_id=sid, config=WINDOW)
    assert full is not None and windowed is not None
    assert windowed.state == full.state
    assert windowed.last_update_time == full.last_update_time
    tail = full.events[len(full.events) - len(windowed.events) :]
    assert windowed.events == tail
    return full.events, windowed.events


async def test_without_a_compaction_the_window_is_everything(sessions: SqlSessionService) -> None:
    await fill(sessions, [said(f"m{i}", 100.0 + i) for i in range(5)])
    full, windowed = await both(sessions)
    assert len(windowed) == len(full) == 5


async def test_the_window_starts_at_the_first_event_a_summary_does_not_cover(
    sessions: SqlSessionService,
) -> None:
    history = [said(f"m{i}", 100.0 + i) for i in range(8)]
    # A token-threshold summary of m0..m5; m6 and m7 are retained, stored before it.
    events = [*history, summary(100.0, 105.0, 108.0), said("after", 109.0)]
    await fill(sessions, events)
    full, windowed = await both(sessions)
    assert [e.content.parts[0].text for e in windowed if e.content] == ["m6", "m7", "after"]
    assert windowed[2].actions.compaction is not None
    assert len(full) == 10


async def test_a_rolling_summary_supersedes_the_last(sessions: SqlSessionService) -> None:
    events = [said(f"m{i}", 100.0 + i) for i in range(6)]
    events += [summary(100.0, 103.0, 106.0), said("m6", 107.0), said("m7", 108.0)]
    events += [summary(100.0, 107.0, 109.0, "rolled"), said("m8", 110.0)]
    await fill(sessions, events)
    _, windowed = await both(sessions)
    assert [e.content.parts[0].text for e in windowed if e.content] == ["m7", "m8"]


async def test_an_unanswered_call_keeps_the_window_open(sessions: SqlSessionService) -> None:
    events = [said("m0", 100.0), called("c1", 101.0), said("m2", 102.0)]
    events += [summary(100.0, 102.0, 103.0), said("m4", 104.0)]
    await fill(sessions, events)
    _, windowed = await both(sessions)
    assert windowed[0].get_function_calls()[0].id == "c1"


async def test_an_answered_call_is_covered(sessions: SqlSessionService) -> None:
    events = [said("m0", 100.0), called("c1", 101.0), answered("c1", 102.0)]
    events += [summary(100.0, 102.0, 103.0), said("m4", 104.0)]
    await fill(sessions, events)
    _, windowed = await both(sessions)
    assert len(windowed) == 2


async def test_a_covered_call_whose_answer_survives_stays(sessions: SqlSessionService) -> None:
    """ADK re-injects a compacted call when its response is outside the summary."""
    events = [said("m0", 100.0), called("c1", 101.0), said("m2", 102.0)]
    events += [answered("c1", 103.5), summary(100.0, 102.0, 104.0)]
    await fill(sessions, events)
    _, windowed = await both(sessions)
    assert windowed[0].get_function_calls()[0].id == "c1"


async def test_a_branch_summary_moves_nothing(sessions: SqlSessionService) -> None:
    branch_summary = summary(100.0, 102.0, 104.0)
    branch_summary.branch = "root.helper"
    await fill(sessions, [said(f"m{i}", 100.0 + i) for i in range(3)] + [branch_summary])
    full, windowed = await both(sessions)
    assert len(windowed) == len(full)


async def test_a_rewind_after_a_summary_reads_everything(sessions: SqlSessionService) -> None:
    rewind = Event(
        author="user",
        invocation_id="rw",
        timestamp=106.0,
        actions=EventActions(rewind_before_invocation_id="inv-101.0"),
    )
    events = [said(f"m{i}", 100.0 + i) for i in range(4)]
    events += [summary(100.0, 103.0, 104.0), said("m5", 105.0), rewind]
    await fill(sessions, events)
    full, windowed = await both(sessions)
    assert len(windowed) == len(full)


async def test_other_filters_narrow_the_window(sessions: SqlSessionService) -> None:
    events = [said(f"m{i}", 100.0 + i) for i in range(6)]
    events += [summary(100.0, 103.0, 106.0), said("m7", 107.0), said("m8", 108.0)]
    await fill(sessions, events)
    _, windowed = await both(sessions)
    narrowed = await sessions.get_session(
        app_name=APP,
        user_id="u",
        session_id="s1",
        config=SessionWindow(num_recent_events=2),
    )
    assert narrowed is not None and narrowed.events == windowed[-2:]
    later = await sessions.get_session(
        app_name=APP, user_id="u", session_id="s1", config=SessionWindow(after_timestamp=105.0)
    )
    assert later is not None
    expected = [e.timestamp for e in windowed if e.timestamp >= 105]
    assert [e.timestamp for e in later.events] == expected
    plain = await sessions.get_session(
        app_name=APP, user_id="u", session_id="s1", config=GetSessionConfig(num_recent_events=3)
    )
    assert plain is not None and plain.events == windowed[-3:]


async def test_a_summary_appended_to_a_partial_read_sets_no_floor(
    sessions: SqlSessionService,
) -> None:
    """A copy read with `num_recent_events` cannot prove what came before it."""
    await fill(sessions, [said(f"m{i}", 100.0 + i) for i in range(6)])
    partial = await sessions.get_session(
        app_name=APP, user_id="u", session_id="s1", config=GetSessionConfig(num_recent_events=1)
    )
    assert partial is not None
    await sessions.append_event(partial, summary(100.0, 104.0, 106.0))
    full, windowed = await both(sessions)
    assert len(windowed) == len(full) == 7
    # A summary appended to the windowed read (here: everything) does set one.
    session = await sessions.get_session(app_name=APP, user_id="u", session_id="s1", config=WINDOW)
    assert session is not None
    await sessions.append_event(session, summary(100.0, 104.0, 107.0, "again"))
    _, windowed = await both(sessions)
    # m5 (retained), the older summary (now contained, read past) and the newest one.
    assert len(windowed) == 3


async def test_a_paused_invocation_stays_whole(sessions: SqlSessionService) -> None:
    """A run waiting on a call is resumed by its invocation id: all its events stay."""
    opening = said("please approve", 101.0)
    opening.invocation_id = "paused"
    waiting = called("c1", 102.0)
    waiting.invocation_id = "paused"
    events = [said("m0", 100.0), opening, waiting, summary(100.0, 102.0, 103.0)]
    await fill(sessions, events)
    _, windowed = await both(sessions)
    assert [e.invocation_id for e in windowed[:2]] == ["paused", "paused"]
