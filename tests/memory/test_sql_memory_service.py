"""Behaviour of SqlMemoryService, on both backends, in English and Chinese."""

from __future__ import annotations

import pytest
from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types

from adk_yuxi.memory import SqlMemoryService
from adk_yuxi.storage import InvalidNameError, YuxiServices

APP = "chat"
TEXTS = [
    "我们的数据库迁移到了PostgreSQL",
    "今天天气很好，适合散步",
    "数据分析报告已经完成",
    "The quarterly database migration finished on Friday",
    "Remember to water the plants",
    "My favourite database is SQLite, but PostgreSQL scales better",
]


def event(text: str, author: str = "user") -> Event:
    return Event(
        author=author,
        invocation_id="i",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )


@pytest.fixture
def memory(services: YuxiServices) -> SqlMemoryService:
    return services.memory_service


async def texts_for(memory: SqlMemoryService, query: str, user: str = "u1") -> list[str]:
    response = await memory.search_memory(app_name=APP, user_id=user, query=query)
    return [m.content.parts[0].text or "" for m in response.memories if m.content.parts]


@pytest.fixture
async def filled(memory: SqlMemoryService) -> Session:
    session = Session(id="s1", app_name=APP, user_id="u1", events=[event(t) for t in TEXTS])
    await memory.add_session_to_memory(session)
    return session


async def test_chinese_search_ranks_the_closest_text_first(
    memory: SqlMemoryService, filled: Session
) -> None:
    found = await texts_for(memory, "数据库")
    assert found[0] == TEXTS[0]
    assert TEXTS[1] not in found
    assert await texts_for(memory, "天气") == [TEXTS[1]]
    assert (await texts_for(memory, "散步"))[0] == TEXTS[1]


async def test_english_search_ranks_and_ignores_case(
    memory: SqlMemoryService, filled: Session
) -> None:
    found = await texts_for(memory, "PostgreSQL database")
    assert set(found[:2]) == {TEXTS[3], TEXTS[5]} or found[0] == TEXTS[5]
    assert TEXTS[4] not in found
    assert await texts_for(memory, "PLANTS") == [TEXTS[4]]
    assert await texts_for(memory, "zebra") == []
    assert await texts_for(memory, "   ") == []
    # Latin words inside Chinese text are their own tokens.
    assert TEXTS[0] in await texts_for(memory, "postgresql")


async def test_search_is_scoped_to_app_and_user(memory: SqlMemoryService, filled: Session) -> None:
    assert await texts_for(memory, "数据库", user="u2") == []
    other_app = await memory.search_memory(app_name="otherapp", user_id="u1", query="database")
    assert other_app.memories == []


async def test_ingesting_twice_adds_nothing(memory: SqlMemoryService, filled: Session) -> None:
    before = await texts_for(memory, "database PostgreSQL 数据")
    await memory.add_session_to_memory(filled)
    await memory.add_events_to_memory(
        app_name=APP, user_id="u1", events=filled.events, session_id="s1"
    )
    assert await texts_for(memory, "database PostgreSQL 数据") == before
    assert len(before) == len(set(before))


async def test_memory_entries_carry_ids_and_metadata(
    memory: SqlMemoryService, filled: Session
) -> None:
    response = await memory.search_memory(app_name=APP, user_id="u1", query="plants")
    (entry,) = response.memories
    assert entry.id == filled.events[4].id
    assert entry.author == "user"
    assert entry.custom_metadata["session_id"] == "s1"
    assert entry.timestamp


async def test_add_and_delete_memory(memory: SqlMemoryService, filled: Session) -> None:
    await memory.add_memory(
        app_name=APP,
        user_id="u1",
        memories=[
            MemoryEntry(
                id="pref-1",
                author="system",
                content=types.Content(parts=[types.Part(text="用户喜欢绿茶")]),
                custom_metadata={"source": "profile"},
            )
        ],
    )
    (entry,) = (await memory.search_memory(app_name=APP, user_id="u1", query="绿茶")).memories
    assert entry.id == "pref-1" and entry.custom_metadata == {"source": "profile"}
    await memory.delete_memory(app_name=APP, user_id="u1", memory_id="pref-1")
    assert await texts_for(memory, "绿茶") == []
    # A deleted event memory stays deleted when the session is ingested again.
    plants_id = filled.events[4].id
    await memory.delete_memory(app_name=APP, user_id="u1", memory_id=plants_id)
    await memory.add_session_to_memory(filled)
    assert await texts_for(memory, "plants") == []
    # An explicit add brings a memory back.
    await memory.add_memory(
        app_name=APP,
        user_id="u1",
        memories=[
            MemoryEntry(id="pref-1", content=types.Content(parts=[types.Part(text="用户喜欢红茶")]))
        ],
    )
    assert await texts_for(memory, "红茶") == ["用户喜欢红茶"]
    await memory.delete_memory(app_name=APP, user_id="u1", memory_id="no-such-id")


async def test_events_without_text_are_skipped(memory: SqlMemoryService) -> None:
    silent = Event(
        author="model",
        invocation_id="i",
        content=types.Content(
            parts=[types.Part(function_call=types.FunctionCall(name="f", args={}))]
        ),
    )
    await memory.add_events_to_memory(
        app_name=APP, user_id="u1", events=[silent, event("hi there")], custom_metadata={"turn": 3}
    )
    (entry,) = (await memory.search_memory(app_name=APP, user_id="u1", query="hi")).memories
    assert entry.custom_metadata["turn"] == 3
    assert entry.custom_metadata["event_id"] == entry.id


async def test_bad_names_are_rejected(memory: SqlMemoryService) -> None:
    with pytest.raises(InvalidNameError):
        await memory.search_memory(app_name="bad app", user_id="u", query="x")
    with pytest.raises(InvalidNameError):
        await memory.add_events_to_memory(app_name=APP, user_id="", events=[event("x")])
