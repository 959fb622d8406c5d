"""Holes found by trying the services as an attacker and as a crash would, on both backends:
user ids compared exactly, any number of state keys, concurrent appends through one
Session object, values no backend can store refused up front."""

from __future__ import annotations

import asyncio

import pytest
from google.adk.errors._stale_session_error import StaleSessionError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from adk_yuxi.storage import InvalidNameError, InvalidValueError, YuxiServices

APP = "chat"


def text_event(text: str, event_id: str | None = None, **delta: object) -> Event:
    event = Event(
        author="user",
        invocation_id="inv-1",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=dict(delta)),
    )
    if event_id is not None:
        event.id = event_id
    return event


@pytest.mark.parametrize("lookalike", ["alice ", " alice", "alice\u3000", "alice\u00a0"])
async def test_user_ids_differing_by_blanks_never_reach_each_other(
    services: YuxiServices, lookalike: str
) -> None:
    sessions, memory, artifacts = (
        services.session_service,
        services.memory_service,
        services.artifact_service,
    )
    own = await sessions.create_session(
        app_name=APP, user_id="alice", session_id="s1", state={"user:secret": "alice's"}
    )
    await sessions.append_event(own, text_event("the vault code is 4711"))
    await memory.add_session_to_memory(own)
    await artifacts.save_artifact(
        app_name=APP, user_id="alice", filename="user:notes.txt", artifact=types.Part(text="mine")
    )

    assert await sessions.get_session(app_name=APP, user_id=lookalike, session_id="s1") is None
    assert (await sessions.list_sessions(app_name=APP, user_id=lookalike)).sessions == []
    assert await sessions.get_user_state(app_name=APP, user_id=lookalike) == {}
    found = await memory.search_memory(app_name=APP, user_id=lookalike, query="vault code")
    assert found.memories == []
    assert (
        await artifacts.load_artifact(app_name=APP, user_id=lookalike, filename="user:notes.txt")
        is None
    )
    assert await artifacts.list_artifact_keys(app_name=APP, user_id=lookalike) == []

    # The look-alike is a user of its own, stored exactly as given.
    theirs = await sessions.create_session(app_name=APP, user_id=lookalike, session_id="s1")
    assert theirs.user_id == lookalike and theirs.state == {}
    listed = await sessions.list_sessions(app_name=APP)
    assert sorted(s.user_id for s in listed.sessions) == sorted(["alice", lookalike])
    again = await sessions.get_session(app_name=APP, user_id="alice", session_id="s1")
    assert again is not None and again.state == {"user:secret": "alice's"}


@pytest.mark.parametrize("user_id", ["", "   ", "\u3000", "a\x00b", "a\ud800b"])
async def test_unacceptable_user_ids_are_refused(services: YuxiServices, user_id: str) -> None:
    with pytest.raises(InvalidNameError, match="user id"):
        await services.session_service.create_session(app_name=APP, user_id=user_id)
    assert (await services.session_service.list_sessions(app_name=APP)).sessions == []


@pytest.mark.parametrize("count", [64, 127, 300, 5000])
async def test_any_number_of_state_keys_in_one_scope(services: YuxiServices, count: int) -> None:
    sessions = services.session_service
    initial = {f"app:a{i}": i for i in range(count)} | {f"user:u{i}": i for i in range(count)}
    session = await sessions.create_session(app_name=APP, user_id="u", state=initial)
    delta = {f"k{i}": {"n": i} for i in range(count)} | {f"user:u{i}": -i for i in range(count)}
    delta['quote"d'] = "q"
    await sessions.append_event(session, text_event("many keys", **delta))
    loaded = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
    assert loaded is not None
    expected = {f"app:a{i}": i for i in range(count)}
    expected |= {f"user:u{i}": -i for i in range(count)}
    expected |= {f"k{i}": {"n": i} for i in range(count)}
    expected['quote"d'] = "q"
    assert loaded.state == expected
    assert loaded.state == session.state


async def test_concurrent_appends_on_one_session_object_all_land(
    services: YuxiServices,
) -> None:
    sessions = services.session_service
    session = await sessions.create_session(app_name=APP, user_id="u")
    events = [text_event(f"background result {i}", **{f"r{i}": i}) for i in range(6)]
    events += [text_event(f"plain {i}") for i in range(6)]
    await asyncio.gather(*(sessions.append_event(session, event) for event in events))
    loaded = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
    assert loaded is not None
    assert {e.id for e in loaded.events} == {e.id for e in events}
    assert [e.id for e in loaded.events] == [e.id for e in session.events]
    assert loaded.state == {f"r{i}": i for i in range(6)}

    # A copy that another writer has overtaken is still stale.
    other = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
    assert other is not None
    await sessions.append_event(other, text_event("from the other copy"))
    with pytest.raises(StaleSessionError):
        await sessions.append_event(session, text_event("late"))


@pytest.mark.parametrize(
    ("delta", "field"),
    [
        ({"key\x00nul": 1}, "state key"),
        ({"user:k\x00": 1}, "state key"),
        ({"k": "value\x00nul"}, "state value"),
        ({"app:k": ["nested", {"deep": "\x00"}]}, "state value"),
        ({"k": "lone \ud800 surrogate"}, "state value"),
        ({"k\udfff": 1}, "state key"),
    ],
)
async def test_state_no_backend_can_store_is_refused_by_name(
    services: YuxiServices, delta: dict[str, object], field: str
) -> None:
    sessions = services.session_service
    session = await sessions.create_session(app_name=APP, user_id="u")
    with pytest.raises(InvalidValueError, match=field):
        await sessions.append_event(session, text_event("x", **delta))
    with pytest.raises(InvalidValueError, match=field):
        await sessions.create_session(app_name=APP, user_id="u", state=delta)
    loaded = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
    assert loaded is not None and loaded.events == [] and loaded.state == {}
    assert len((await sessions.list_sessions(app_name=APP, user_id="u")).sessions) == 1
    # The same session takes a good append afterwards (nothing half-done).
    await sessions.append_event(session, text_event("fine", k="a literal \\u0000 is text"))


@pytest.mark.parametrize(("event_id", "field"), [("e\x00v", "event id"), ("e\ud800", "event id")])
async def test_event_ids_no_backend_can_store_are_refused(
    services: YuxiServices, event_id: str, field: str
) -> None:
    sessions = services.session_service
    session = await sessions.create_session(app_name=APP, user_id="u")
    with pytest.raises(InvalidValueError, match=field):
        await sessions.append_event(session, text_event("x", event_id=event_id))
    event = text_event("lone \ud800 in the text")
    with pytest.raises(InvalidValueError, match="event"):
        await sessions.append_event(session, event)
    loaded = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
    assert loaded is not None and loaded.events == []


async def test_memory_and_artifact_values_no_backend_can_store_are_refused(
    services: YuxiServices,
) -> None:
    memory, artifacts = services.memory_service, services.artifact_service
    content = types.Content(role="user", parts=[types.Part(text="remember me")])
    with pytest.raises(InvalidValueError, match="memory id"):
        await memory.add_memory(
            app_name=APP, user_id="u", memories=[MemoryEntry(id="m\x00", content=content)]
        )
    with pytest.raises(InvalidValueError, match="custom_metadata"):
        await memory.add_memory(
            app_name=APP,
            user_id="u",
            memories=[MemoryEntry(id="m1", content=content)],
            custom_metadata={"k": "\x00"},
        )
    with pytest.raises(InvalidValueError, match="memory id"):  # an event's memory id is its id
        await memory.add_events_to_memory(
            app_name=APP, user_id="u", events=[text_event("remember me", event_id="e\x00")]
        )
    assert (await memory.search_memory(app_name=APP, user_id="u", query="remember")).memories == []

    bad_display = types.Part(
        inline_data=types.Blob(mime_type="text/plain", data=b"x", display_name="a\x00b")
    )
    with pytest.raises(InvalidValueError, match="display name"):
        await artifacts.save_artifact(
            app_name=APP, user_id="u", filename="f.txt", artifact=bad_display
        )
    with pytest.raises(InvalidNameError, match="artifact name"):
        await artifacts.save_artifact(
            app_name=APP, user_id="u", filename="f\ud800", artifact=types.Part(text="t")
        )
    assert await artifacts.list_artifact_keys(app_name=APP, user_id="u") == []
