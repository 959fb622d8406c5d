"""Full-text edges that used to differ between SQLite and PostgreSQL: a huge query
word, and a long Chinese text that overflowed PostgreSQL's tsvector."""

from __future__ import annotations

import random

import pytest
from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from adk_yuxi.memory import SqlMemoryService
from adk_yuxi.memory._pieces import PIECE_CHARS
from adk_yuxi.storage import YuxiServices

APP = "chat"


@pytest.fixture
def memory(services: YuxiServices) -> SqlMemoryService:
    return services.memory_service


def event(text: str, event_id: str | None = None) -> Event:
    made = Event(
        author="user",
        invocation_id="inv",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )
    if event_id:
        made.id = event_id
    return made


def long_chinese(chars: int, seed: int) -> str:
    rng = random.Random(seed)
    # Many distinct characters, so the bigrams are many distinct lexemes.
    return "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(chars))


async def test_a_huge_query_word_matches_only_itself(memory: SqlMemoryService) -> None:
    word = "a" * 3000
    await memory.add_events_to_memory(
        app_name=APP,
        user_id="u",
        events=[event("ordinary note about lunch"), event(f"the word {word} appears")],
    )
    found = await memory.search_memory(app_name=APP, user_id="u", query=word)
    assert [m.content.parts[0].text for m in found.memories] == [f"the word {word} appears"]
    other = await memory.search_memory(app_name=APP, user_id="u", query="b" * 3000)
    assert other.memories == []
    chinese = await memory.search_memory(app_name=APP, user_id="u", query="字" * 3000)
    assert chinese.memories == []


async def test_long_chinese_text_is_indexed_in_pieces_without_failing_the_batch(
    memory: SqlMemoryService,
) -> None:
    # ~100,000 distinct bigrams: over 1 MB of distinct lexemes in one tsvector.
    text = long_chinese(5 * PIECE_CHARS + 500, seed=1) + "末尾的独角兽"
    batch = [event("短笔记：明天买牛奶", "e1"), event(text, "e-long"), event("another note", "e3")]
    await memory.add_events_to_memory(app_name=APP, user_id="u", events=batch)

    async def ids(query: str) -> list[str]:
        found = await memory.search_memory(app_name=APP, user_id="u", query=query)
        return [m.id or "" for m in found.memories]

    assert await ids("牛奶") == ["e1"]
    assert await ids("note") == ["e3"]
    assert await ids("独角兽") == ["e-long#piece-5"]
    assert (await ids(text[100:104]))[0] == "e-long"
    found = await memory.search_memory(app_name=APP, user_id="u", query="独角兽")
    assert found.memories[0].custom_metadata["pieces"] == 6
    # Every character is kept, piece by piece, in order.
    pieces = []
    for index in range(6):
        wanted = "e-long" if index == 0 else f"e-long#piece-{index}"
        piece = text[index * PIECE_CHARS : index * PIECE_CHARS + 2]
        hits = await memory.search_memory(app_name=APP, user_id="u", query=piece)
        match = next(m for m in hits.memories if m.id == wanted)
        assert match.content.parts and match.content.parts[0].text
        pieces.append(match.content.parts[0].text)
    assert "".join(pieces) == text

    # Ingesting again adds nothing; deleting the memory removes every piece.
    await memory.add_events_to_memory(app_name=APP, user_id="u", events=batch)
    await memory.delete_memory(app_name=APP, user_id="u", memory_id="e-long")
    assert await ids("独角兽") == []
    assert await ids("牛奶") == ["e1"]


async def test_replacing_a_long_memory_with_a_short_one_drops_its_pieces(
    memory: SqlMemoryService,
) -> None:
    def entry(text: str) -> MemoryEntry:
        return MemoryEntry(
            id="m", content=types.Content(role="user", parts=[types.Part(text=text)])
        )

    await memory.add_memory(
        app_name=APP, user_id="u", memories=[entry(long_chinese(2 * PIECE_CHARS, 2) + "独角兽")]
    )
    assert (await memory.search_memory(app_name=APP, user_id="u", query="独角兽")).memories
    await memory.add_memory(app_name=APP, user_id="u", memories=[entry("short now")])
    assert (await memory.search_memory(app_name=APP, user_id="u", query="独角兽")).memories == []
    found = await memory.search_memory(app_name=APP, user_id="u", query="short")
    assert [m.id for m in found.memories] == ["m"]
