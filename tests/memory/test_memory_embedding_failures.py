"""Memory embeddings over real HTTP (the loopback OpenAI-compatible server), on SQLite and
PostgreSQL: a failing model stores by text and searches by it (only an explicit fill
raises); a memory already embedded is not embedded again; vectors of another model are
never ranked, only replaced."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence

import numpy as np
import pytest
from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types

from adk_yuxi._sql import SqlStore
from adk_yuxi.errors import YuxiError
from adk_yuxi.knowledge import OpenAIEmbedder
from adk_yuxi.memory import MemoryEmbeddingError, SqlMemoryService
from adk_yuxi.testing import EmbeddingServer

APP, USER = "chat", "u"


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    with EmbeddingServer(models=("test-embed", "other-embed")) as running:
        yield running


def embedder(server: EmbeddingServer, model: str = "test-embed") -> OpenAIEmbedder:
    return OpenAIEmbedder(model, base_url=server.base_url, api_key=server.api_key)


def said(text: str, event_id: str) -> Event:
    content = types.Content(role="user", parts=[types.Part(text=text)])
    return Event(id=event_id, author="user", invocation_id="i", content=content, timestamp=1.0)


def memory(text: str, memory_id: str) -> MemoryEntry:
    content = types.Content(role="user", parts=[types.Part(text=text)])
    return MemoryEntry(id=memory_id, content=content)


async def counts(store: SqlStore) -> tuple[int, int]:
    """(memory rows, vector rows) in the database."""
    async with store.read() as tx:
        rows = await tx.fetchone(
            "SELECT (SELECT count(*) FROM yx_memories), (SELECT count(*) FROM yx_memory_vectors)"
        )
    assert rows is not None
    return int(rows[0]), int(rows[1])


async def found(service: SqlMemoryService, query: str) -> list[str]:
    reply = await service.search_memory(app_name=APP, user_id=USER, query=query)
    return [m.id or "" for m in reply.memories]


async def test_a_failing_model_stores_by_text_and_a_later_fill_embeds(
    migrated_store: SqlStore, server: EmbeddingServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A turn that adds its session to memory never fails because the model is down
    (the assistant's after-agent plugin would fail the turn): the memories are stored
    and found by text, and the model is not asked again on every call meanwhile."""
    service = SqlMemoryService(migrated_store, embedder=embedder(server))
    session = Session(
        id="s1", app_name=APP, user_id=USER,
        events=[said("the vault code is amber", "e1"), said("bring the blue folder", "e2")],
    )  # fmt: skip
    server.fail_with = (503, "overloaded")
    try:
        with caplog.at_level(logging.WARNING, logger="adk_yuxi.memory"):
            await service.add_session_to_memory(session)
        assert await counts(migrated_store) == (2, 0)
        (said_once,) = [r.getMessage() for r in caplog.records]
        assert "overloaded" in said_once and "full text only for 5 s" in said_once
        asked = len(server.requests)
        await service.add_memory(
            app_name=APP, user_id=USER, memories=[memory("a", "m1"), memory("b c", "m2")]
        )
        assert await found(service, "vault") == ["e1"]  # by full text
        assert await counts(migrated_store) == (4, 0) and len(server.requests) == asked
        # An explicit fill raises while the model fails, and embeds all once it works.
        with pytest.raises(MemoryEmbeddingError, match="overloaded"):
            await service.embed_missing()
        server.fail_with = None
        assert await service.embed_missing() == 4
        assert await counts(migrated_store) == (4, 4)
        # The model works again: a paraphrase finds the memory by meaning.
        assert (await found(service, "vault code"))[0] == "e1"
    finally:
        await service.close()


async def test_an_ingest_embeds_only_what_has_no_vector_yet(
    migrated_store: SqlStore, server: EmbeddingServer
) -> None:
    plain = SqlMemoryService(migrated_store)
    service = SqlMemoryService(migrated_store, embedder=embedder(server))
    first = [said("the vault code is amber", "e1")]
    try:
        await plain.add_events_to_memory(app_name=APP, user_id=USER, events=first)
        both = [*first, said("bring the blue folder", "e2")]
        await service.add_events_to_memory(app_name=APP, user_id=USER, events=both)
        assert [r["input"] for r in server.requests] == [
            ["the vault code is amber", "bring the blue folder"]
        ]  # e1 was stored before the embedder: it gets its vector now
        await service.add_events_to_memory(app_name=APP, user_id=USER, events=both)
        await service.delete_memory(app_name=APP, user_id=USER, memory_id="e2")
        await service.add_events_to_memory(app_name=APP, user_id=USER, events=both)
        assert len(server.requests) == 1  # nothing new, and a tombstone is not embedded
        assert await counts(migrated_store) == (2, 1)
    finally:
        await plain.close()
        await service.close()


async def test_vectors_of_another_model_are_ignored_until_replaced(
    migrated_store: SqlStore, server: EmbeddingServer
) -> None:
    ours = SqlMemoryService(migrated_store, embedder=embedder(server))
    other = SqlMemoryService(migrated_store, embedder=embedder(server, "other-embed"))
    try:
        await ours.add_memory(app_name=APP, user_id=USER, memories=[memory("amber vault", "m1")])
        # Full text finds it for both; only its own model's vectors rank it for a
        # question sharing none of its words.
        assert await found(ours, "amber") == await found(other, "amber") == ["m1"]
        assert await found(ours, "zebra") == ["m1"]
        assert await found(other, "zebra") == []
        assert await other.embed_missing(user_id=USER) == 1
        assert await found(other, "zebra") == ["m1"]
        assert await found(ours, "zebra") == []  # replaced, not mixed
        assert await counts(migrated_store) == (1, 1)
    finally:
        await ours.close()
        await other.close()


async def test_a_replaced_memory_gets_the_vector_of_its_new_text(
    migrated_store: SqlStore, server: EmbeddingServer
) -> None:
    plain = SqlMemoryService(migrated_store)
    service = SqlMemoryService(migrated_store, embedder=embedder(server))
    try:
        await service.add_memory(app_name=APP, user_id=USER, memories=[memory("amber", "m1")])
        # Replaced by a process without the embedder: the stale vector goes with the text.
        await plain.add_memory(app_name=APP, user_id=USER, memories=[memory("cobalt", "m1")])
        assert await counts(migrated_store) == (1, 0)
        await service.add_memory(app_name=APP, user_id=USER, memories=[memory("teal", "m1")])
        assert server.requests[-1]["input"] == ["teal"]
        assert await counts(migrated_store) == (1, 1)
    finally:
        await plain.close()
        await service.close()


class Broken:
    """A model that answers, but nothing usable: NaN, or one row too few."""

    name = "broken"

    def __init__(self, short: bool) -> None:
        self.short = short

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if self.short:
            return np.ones((len(texts) - 1, 8), np.float32)
        return np.full((len(texts), 8), np.nan, np.float32)

    def query(self, text: str) -> np.ndarray:
        return np.full(8, np.nan, np.float32)


@pytest.mark.parametrize("short", [False, True])
async def test_an_unusable_answer_stores_no_vector_and_search_goes_by_text(
    migrated_store: SqlStore, short: bool
) -> None:
    service = SqlMemoryService(migrated_store, embedder=Broken(short))
    two = [memory("amber vault", "m1"), memory("cobalt gate", "m2")]
    try:
        await service.add_memory(app_name=APP, user_id=USER, memories=two)
        assert await counts(migrated_store) == (2, 0)
        assert await found(service, "amber") == ["m1"]
        with pytest.raises(MemoryEmbeddingError, match="broken") as failed:
            await service.embed_missing()
        assert isinstance(failed.value, YuxiError)
        assert await counts(migrated_store) == (2, 0)
    finally:
        await service.close()


async def test_a_slow_model_holds_a_memory_search_only_so_long(server: EmbeddingServer) -> None:
    """As a knowledge query does: the question's vector is waited for so long, then the
    search goes by full text (the assistant searches memory at every turn)."""
    from adk_yuxi.memory._vectors import MemoryVectors

    vectors = MemoryVectors(embedder(server), seconds=0.5)
    server.delay_seconds = 3.0  # the client's own timeout is a minute
    started = time.monotonic()
    assert await vectors.query_or_none("where is the vault code") is None
    assert time.monotonic() - started < 2
    assert vectors.guard.skipping()  # the next searches do not wait either
