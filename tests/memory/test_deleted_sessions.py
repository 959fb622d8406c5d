"""Deleted stays deleted in memory: a job that read a session before it was deleted
cannot bring it back by ingesting it afterwards, whether or not it had been ingested
before; a session created again under the same id is ingested as usual. SQLite and
PostgreSQL."""

from __future__ import annotations

import pytest
from google.adk.events.event import Event
from google.genai import types

from adk_yuxi.memory import SessionDeletedError
from adk_yuxi.storage import YuxiServices

APP = "chat"


async def said(services: YuxiServices, session_id: str, text: str) -> None:
    sessions = services.session_service
    session = await sessions.get_session(app_name=APP, user_id="u", session_id=session_id)
    assert session is not None
    event = Event(
        author="user",
        invocation_id="inv",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )
    await sessions.append_event(session, event)


async def delete(services: YuxiServices, session_id: str) -> None:
    """As the host deletes a session: the session and its memories in one transaction."""
    key = {"app_name": APP, "user_id": "u", "session_id": session_id}
    async with services.store.write() as tx:
        await services.session_service.forget_session(tx, **key)
        await services.memory_service.forget_session(tx, **key)


async def hits(services: YuxiServices, query: str) -> list[str]:
    found = await services.memory_service.search_memory(app_name=APP, user_id="u", query=query)
    return [m.content.parts[0].text or "" for m in found.memories if m.content.parts]


@pytest.mark.parametrize("ingested_first", [False, True])
async def test_a_stale_session_is_refused_after_the_delete(
    services: YuxiServices, ingested_first: bool
) -> None:
    sessions, memory = services.session_service, services.memory_service
    await sessions.create_session(app_name=APP, user_id="u", session_id="s1")
    await said(services, "s1", "the vault code is amber")
    if ingested_first:
        first = await sessions.get_session(app_name=APP, user_id="u", session_id="s1")
        assert first is not None
        await memory.add_session_to_memory(first)
    await said(services, "s1", "the last turn mentions cobalt")
    stale = await sessions.get_session(app_name=APP, user_id="u", session_id="s1")
    assert stale is not None
    await delete(services, "s1")
    with pytest.raises(SessionDeletedError, match="s1"):
        await memory.add_session_to_memory(stale)
    with pytest.raises(SessionDeletedError):
        await memory.add_events_to_memory(
            app_name=APP, user_id="u", events=stale.events[-1:], session_id="s1"
        )
    assert await hits(services, "amber") == [] and await hits(services, "cobalt") == []

    # The same id, created again afterwards, is a new session with new memories.
    await sessions.create_session(app_name=APP, user_id="u", session_id="s1")
    await said(services, "s1", "a fresh start with indigo")
    fresh = await sessions.get_session(app_name=APP, user_id="u", session_id="s1")
    assert fresh is not None
    await memory.add_session_to_memory(fresh)
    assert await hits(services, "indigo") == ["a fresh start with indigo"]
    assert await hits(services, "cobalt") == []
