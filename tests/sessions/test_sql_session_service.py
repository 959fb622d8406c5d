"""Behaviour of SqlSessionService against ADK's session contract, on both backends."""

from __future__ import annotations

import asyncio
import time

import pytest
from google.adk.errors._stale_session_error import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.session import Session
from google.genai import types

from adk_yuxi.sessions import SessionPage, SqlSessionService
from adk_yuxi.storage import InvalidPageTokenError, YuxiServices

APP = "chat"


def text_event(
    text: str, *, author: str = "user", ts: float | None = None, **delta: object
) -> Event:
    event = Event(
        author=author,
        invocation_id="inv-1",
        content=types.Content(
            role="user" if author == "user" else "model", parts=[types.Part(text=text)]
        ),
        actions=EventActions(state_delta=dict(delta)),
    )
    if ts is not None:
        event.timestamp = ts
    return event


@pytest.fixture
def sessions(services: YuxiServices) -> SqlSessionService:
    return services.session_service


async def test_create_splits_state_and_drops_temp(sessions: SqlSessionService) -> None:
    created = await sessions.create_session(
        app_name=APP,
        user_id="u1",
        session_id="s1",
        state={"topic": "sql", "app:model": "m1", "user:lang": "zh", "temp:scratch": 1},
    )
    assert created.state == {"topic": "sql", "app:model": "m1", "user:lang": "zh"}
    loaded = await sessions.get_session(app_name=APP, user_id="u1", session_id="s1")
    assert loaded is not None
    assert loaded.state == created.state
    assert loaded.events == []
    assert loaded.last_update_time == pytest.approx(created.last_update_time)
    other = await sessions.create_session(app_name=APP, user_id="u2")
    assert other.state == {"app:model": "m1"}
    assert await sessions.get_user_state(app_name=APP, user_id="u1") == {"lang": "zh"}
    assert await sessions.get_user_state(app_name=APP, user_id="nobody") == {}


async def test_events_round_trip_exactly(sessions: SqlSessionService) -> None:
    session = await sessions.create_session(app_name=APP, user_id="u1")
    call = Event(
        author="assistant",
        invocation_id="inv-2",
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        id="c1", name="lookup", args={"q": "数据库", "n": 3}
                    )
                )
            ],
        ),
        actions=EventActions(artifact_delta={"report.txt": 0}),
    )
    appended = [
        text_event("你好, hello", ts=1000.25),
        call,
        text_event("done", author="assistant", counter=1, ratio=0.1 + 0.2, big=2**70),
    ]
    for event in appended:
        await sessions.append_event(session, event)
    loaded = await sessions.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert loaded is not None
    assert loaded.events == appended
    assert loaded.events == session.events
    assert loaded.state == {"counter": 1, "ratio": 0.1 + 0.2, "big": 2**70}
    assert loaded.last_update_time == pytest.approx(appended[-1].timestamp)


async def test_partial_events_are_not_stored(sessions: SqlSessionService) -> None:
    session = await sessions.create_session(app_name=APP, user_id="u1")
    partial = text_event("stream chunk", author="assistant")
    partial.partial = True
    assert await sessions.append_event(session, partial) is partial
    loaded = await sessions.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert loaded is not None and loaded.events == []
    assert session.events == []


async def test_temp_state_lives_only_in_memory(sessions: SqlSessionService) -> None:
    session = await sessions.create_session(app_name=APP, user_id="u1")
    await sessions.append_event(session, text_event("x", **{"temp:step": 2, "kept": True}))
    assert session.state["temp:step"] == 2
    loaded = await sessions.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert loaded is not None
    assert loaded.state == {"kept": True}
    assert loaded.events[0].actions.state_delta == {"kept": True}


async def test_app_and_user_state_are_shared(sessions: SqlSessionService) -> None:
    first = await sessions.create_session(app_name=APP, user_id="u1")
    second = await sessions.create_session(app_name=APP, user_id="u1")
    stranger = await sessions.create_session(app_name=APP, user_id="u2")
    await sessions.append_event(first, text_event("a", **{"app:flag": "on", "user:name": "Li"}))
    await sessions.append_event(second, text_event("b", **{"user:age": 30, 'odd"key': 1}))
    loaded = await sessions.get_session(app_name=APP, user_id="u1", session_id=second.id)
    assert loaded is not None
    assert loaded.state == {"app:flag": "on", "user:name": "Li", "user:age": 30, 'odd"key': 1}
    loaded_stranger = await sessions.get_session(app_name=APP, user_id="u2", session_id=stranger.id)
    assert loaded_stranger is not None and loaded_stranger.state == {"app:flag": "on"}


async def test_get_session_config_filters(sessions: SqlSessionService) -> None:
    session = await sessions.create_session(app_name=APP, user_id="u1")
    events = [text_event(f"m{i}", ts=100.0 + i) for i in range(10)]
    for event in events:
        await sessions.append_event(session, event)

    async def fetch(**config: object) -> list[Event]:
        loaded = await sessions.get_session(
            app_name=APP, user_id="u1", session_id=session.id, config=GetSessionConfig(**config)
        )
        assert loaded is not None
        return loaded.events

    assert await fetch(num_recent_events=3) == events[-3:]
    assert await fetch(num_recent_events=0) == []
    assert await fetch(num_recent_events=50) == events
    assert await fetch(after_timestamp=107.0) == events[7:]
    assert await fetch(after_timestamp=104.0, num_recent_events=2) == events[-2:]
    assert await fetch(after_timestamp=200.0) == []


async def test_duplicate_session_id_is_a_clear_error(sessions: SqlSessionService) -> None:
    await sessions.create_session(app_name=APP, user_id="u1", session_id="dup", state={"a": 1})
    with pytest.raises(AlreadyExistsError, match="'dup' already exists"):
        await sessions.create_session(
            app_name=APP, user_id="u1", session_id="dup", state={"a": 2, "app:x": 1}
        )
    loaded = await sessions.get_session(app_name=APP, user_id="u1", session_id="dup")
    assert loaded is not None and loaded.state == {"a": 1}


async def test_concurrent_creators_of_one_id(db_url: str) -> None:
    services = [SqlSessionService(db_url) for _ in range(2)]
    try:
        await services[0].list_sessions(app_name=APP)  # create the schema first
        results = await asyncio.gather(
            *(s.create_session(app_name=APP, user_id="u", session_id="same") for s in services),
            return_exceptions=True,
        )
        assert sum(isinstance(r, Session) for r in results) == 1
        assert sum(isinstance(r, AlreadyExistsError) for r in results) == 1
    finally:
        for service in services:
            await service.close()


async def test_stale_writer_gets_stale_session_error(sessions: SqlSessionService) -> None:
    session = await sessions.create_session(app_name=APP, user_id="u1", state={"n": 0})
    copy_a = await sessions.get_session(app_name=APP, user_id="u1", session_id=session.id)
    copy_b = await sessions.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert copy_a is not None and copy_b is not None
    await sessions.append_event(copy_a, text_event("first", n=1))
    with pytest.raises(StaleSessionError, match="revision 0, storage is at 1"):
        await sessions.append_event(copy_b, text_event("second", n=2, **{"user:x": 1}))
    loaded = await sessions.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert loaded is not None
    assert [e.content.parts[0].text for e in loaded.events if e.content and e.content.parts] == [
        "first"
    ]
    assert loaded.state == {"n": 1}
    # Reloading and retrying succeeds; the first copy keeps working too.
    await sessions.append_event(loaded, text_event("second", n=2))
    with pytest.raises(StaleSessionError):
        await sessions.append_event(copy_a, text_event("third"))


async def test_sessions_not_from_this_service(sessions: SqlSessionService) -> None:
    stored = await sessions.create_session(app_name=APP, user_id="u1", session_id="s")
    await sessions.append_event(stored, text_event("one"))
    matching = Session(id="s", app_name=APP, user_id="u1", events=list(stored.events))
    await sessions.append_event(matching, text_event("two"))
    behind = Session(id="s", app_name=APP, user_id="u1", events=list(stored.events))
    with pytest.raises(StaleSessionError):
        await sessions.append_event(behind, text_event("three"))


async def test_deleted_and_unknown_sessions(sessions: SqlSessionService) -> None:
    session = await sessions.create_session(app_name=APP, user_id="u1")
    await sessions.append_event(session, text_event("x"))
    await sessions.delete_session(app_name=APP, user_id="u1", session_id=session.id)
    assert await sessions.get_session(app_name=APP, user_id="u1", session_id=session.id) is None
    with pytest.raises(SessionNotFoundError, match=f"{session.id!r} not found for app 'chat'"):
        await sessions.append_event(session, text_event("y"))
    # Recreating the id does not let the old object write into the new session.
    await sessions.create_session(app_name=APP, user_id="u1", session_id=session.id)
    with pytest.raises(SessionNotFoundError):
        await sessions.append_event(session, text_event("z"))
    await sessions.delete_session(app_name=APP, user_id="u1", session_id="never-existed")
    ghost = Session(id="ghost", app_name=APP, user_id="u1")
    with pytest.raises(SessionNotFoundError, match="'ghost' not found"):
        await sessions.append_event(ghost, text_event("boo"))


async def test_bad_names_change_nothing(sessions: SqlSessionService) -> None:
    for bad_app in ("", "1abc", "has space", "user", "a/b"):
        with pytest.raises(InputValidationError, match="Invalid app name"):
            await sessions.create_session(app_name=bad_app, user_id="u1")
    with pytest.raises(InputValidationError, match="user id"):
        await sessions.create_session(app_name=APP, user_id="  ")
    with pytest.raises(InputValidationError, match="control characters"):
        await sessions.create_session(app_name=APP, user_id="u", session_id="a\x00b")
    assert (await sessions.list_sessions(app_name=APP)).sessions == []


async def test_list_sessions_order_state_and_paging(sessions: SqlSessionService) -> None:
    created = []
    for i in range(7):
        session = await sessions.create_session(
            app_name=APP, user_id=f"u{i % 2}", session_id=f"s{i}", state={"i": i}
        )
        created.append(session)
        await sessions.append_event(session, text_event("x", ts=500.0 - i, **{"user:seen": i}))
    listed = (await sessions.list_sessions(app_name=APP)).sessions
    assert [s.id for s in listed] == [f"s{i}" for i in reversed(range(7))]
    assert all(s.events == [] for s in listed)
    by_id = {s.id: s for s in listed}
    assert by_id["s6"].state == {"i": 6, "user:seen": 6}
    assert by_id["s5"].state == {"i": 5, "user:seen": 5}
    only_u1 = (await sessions.list_sessions(app_name=APP, user_id="u1")).sessions
    assert [s.id for s in only_u1] == ["s5", "s3", "s1"]

    pages: list[SessionPage] = []
    token = None
    while True:
        page = await sessions.list_sessions_page(app_name=APP, page_size=3, page_token=token)
        pages.append(page)
        token = page.next_page_token
        if token is None:
            break
    assert [len(p.sessions) for p in pages] == [3, 3, 1]
    assert [s.id for p in pages for s in p.sessions] == [s.id for s in listed]
    with pytest.raises(InvalidPageTokenError):
        await sessions.list_sessions_page(app_name=APP, page_token="not-a-token")
    assert (await sessions.list_sessions(app_name="otherapp")).sessions == []


async def test_last_update_time_tracks_appends(sessions: SqlSessionService) -> None:
    before = time.time()
    session = await sessions.create_session(app_name=APP, user_id="u1")
    assert session.last_update_time >= before - 1
    event = text_event("x", ts=session.last_update_time + 5)
    await sessions.append_event(session, event)
    assert session.last_update_time == event.timestamp
    listed = (await sessions.list_sessions(app_name=APP, user_id="u1")).sessions
    assert listed[0].last_update_time == pytest.approx(event.timestamp)
