"""Memory search with the offline embedding model, on SQLite and PostgreSQL: a paraphrase
or a Chinese question that shares no word with a memory finds it only with the
embedder; deleted memories and sessions never come back through their vectors; the
model runs in a worker thread with no transaction open."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from adk_yuxi.host import ApiConfig
from adk_yuxi.host._host import Host
from adk_yuxi.knowledge import OfflineEmbedder
from adk_yuxi.memory import SqlMemoryService
from adk_yuxi.storage import open_services
from tests.sql_backends import migrate_if_pg

APP, USER = "chat", "u"
FACTS = [
    "I am allergic to peanuts.",
    "The spare garage key hangs behind the kitchen calendar.",
    "Our dentist appointment moved to Thursday afternoon.",
    "Grandma's lasagna recipe needs nutmeg and ricotta.",
    "The car insurance renewal is due in September.",
    "My sister Lina lives in Rotterdam and works as a nurse.",
]
# No word in common with any fact: full text finds nothing for any of them.
ASKED = {
    "Vehicle coverage expiry date?": 4,
    "What triggers allergies for me?": 0,
    "Dental visit day?": 2,
    "车险什么时候到期？": 4,
    "我对什么过敏？": 0,
}


class Watched:
    """The offline model, noting the threads it ran on and gated by ``gate``."""

    def __init__(self) -> None:
        self.model = OfflineEmbedder()
        self.threads: set[int] = set()
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()

    @property
    def name(self) -> str:
        return self.model.name

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        self.threads.add(threading.get_ident())
        self.entered.set()
        self.gate.wait(30)
        return self.model.passages(texts)

    def query(self, text: str) -> np.ndarray:
        self.threads.add(threading.get_ident())
        return self.model.query(text)


def entries(texts: Sequence[str]) -> list[MemoryEntry]:
    return [
        MemoryEntry(id=f"m{i}", content=types.Content(role="user", parts=[types.Part(text=t)]))
        for i, t in enumerate(texts)
    ]


def texts(found: list[MemoryEntry]) -> list[str]:
    return [m.content.parts[0].text or "" for m in found if m.content.parts]


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[str]:
    await migrate_if_pg(db_url)
    yield db_url


async def search(service: SqlMemoryService, query: str) -> list[str]:
    found = await service.search_memory(app_name=APP, user_id=USER, query=query)
    return texts(found.memories)


async def test_a_paraphrase_or_the_other_language_is_found_only_with_the_embedder(db: str) -> None:
    watched = Watched()
    plain = SqlMemoryService(db, max_results=3)
    embedded = SqlMemoryService(db, max_results=3, embedder=watched)
    try:
        await embedded.add_memory(app_name=APP, user_id=USER, memories=entries(FACTS))
        for question, fact in ASKED.items():
            assert await search(plain, question) == [], question
            assert (await search(embedded, question))[0] == FACTS[fact], question
        # Exact wording still comes first, and the other user sees nothing of this one's.
        assert (await search(embedded, "spare garage key"))[0] == FACTS[1]
        other = await embedded.search_memory(app_name=APP, user_id="v", query="garage key")
        assert other.memories == []
    finally:
        await plain.close()
        await embedded.close()
    assert watched.threads and threading.get_ident() not in watched.threads


async def test_memories_stored_before_the_embedder_answer_by_text_until_embedded(db: str) -> None:
    plain = SqlMemoryService(db, max_results=3)
    embedded = SqlMemoryService(db, max_results=3, embedder=OfflineEmbedder())
    try:
        await plain.add_memory(app_name=APP, user_id=USER, memories=entries(FACTS))
        assert await search(embedded, "Dental visit day?") == []
        assert (await search(embedded, "dentist appointment"))[0] == FACTS[2]
        assert await embedded.embed_missing(app_name=APP) == len(FACTS)
        assert (await search(embedded, "Dental visit day?"))[0] == FACTS[2]
        assert await embedded.embed_missing() == 0
    finally:
        await plain.close()
        await embedded.close()


async def test_deleted_memories_and_sessions_never_come_back_through_vectors(
    db: str, tmp_path: Path
) -> None:
    services = open_services(
        db, blob_dir=tmp_path, max_memory_results=5, memory_embedder=OfflineEmbedder()
    )
    memory, sessions = services.memory_service, services.session_service
    try:
        session = await sessions.create_session(app_name=APP, user_id=USER, session_id="s1")
        event = Event(
            author="user", invocation_id="i",
            content=types.Content(role="user", parts=[types.Part(text=FACTS[0])]),
        )  # fmt: skip
        await sessions.append_event(session, event)
        await memory.add_memory(app_name=APP, user_id=USER, memories=entries(FACTS[1:]))
        stored = await sessions.get_session(app_name=APP, user_id=USER, session_id="s1")
        assert stored is not None
        await memory.add_session_to_memory(stored)
        assert FACTS[0] in await search(memory, "我对什么过敏？")
        assert FACTS[3] in await search(memory, "Dental visit day?")
        async with services.store.write() as tx:
            key = {"app_name": APP, "user_id": USER, "session_id": "s1"}
            await sessions.forget_session(tx, **key)
            await memory.forget_session(tx, **key)
        await memory.delete_memory(app_name=APP, user_id=USER, memory_id="m1")  # dentist
        assert FACTS[0] not in await search(memory, "我对什么过敏？")
        assert FACTS[2] not in await search(memory, "Dental visit day?")
        async with services.store.read() as tx:
            row = await tx.fetchone(
                "SELECT count(*) FROM yx_memory_vectors v JOIN yx_memories m ON m.mid = v.mid"
                " WHERE m.deleted = :deleted",
                {"deleted": True},
            )
        assert row is not None and row[0] == 0  # a tombstone keeps no vector
    finally:
        await services.close()


async def test_no_transaction_is_held_while_the_model_runs(db: str, tmp_path: Path) -> None:
    watched = Watched()
    services = open_services(db, blob_dir=tmp_path, memory_embedder=watched)
    memory, sessions = services.memory_service, services.session_service
    watched.gate.clear()
    try:
        adding = asyncio.ensure_future(
            memory.add_memory(app_name=APP, user_id=USER, memories=entries(FACTS[:2]))
        )
        assert await asyncio.to_thread(watched.entered.wait, 30)
        # The model is running: another writer on the same database is not kept waiting.
        await asyncio.wait_for(
            sessions.create_session(app_name=APP, user_id=USER, session_id="meanwhile"), 20
        )
        assert not adding.done()
        watched.gate.set()
        await adding
        assert (await search(memory, "garage key"))[0] == FACTS[1]
    finally:
        watched.gate.set()
        await services.close()


async def test_a_host_configured_with_an_embedder_searches_memory_by_meaning(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'host.db'}"
    config = ApiConfig(database_url=url, agents=(), memory_embedder=OfflineEmbedder())
    host = Host(config)
    try:
        memory = host.services.memory_service
        await memory.add_memory(app_name=APP, user_id=USER, memories=entries(FACTS))
        assert (await search(memory, "Dental visit day?"))[0] == FACTS[2]
    finally:
        await host.close()


async def test_the_cli_service_uri_gives_memory_embeddings_when_the_switch_is_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`adk run` and `adk web` build memory from a `yuxi+` URI through ADK's registry:
    the switch `yuxi serve api` reads (`YUXI_MEMORY_EMBEDDINGS`) holds there too."""
    from google.adk.cli.service_registry import get_service_registry

    from adk_yuxi.memory import MemoryConfigError
    from adk_yuxi.storage import register_service_schemes

    register_service_schemes()
    registry = get_service_registry()
    monkeypatch.setenv("YUXI_EMBEDDING_MODEL", "offline")
    monkeypatch.setenv("YUXI_MEMORY_EMBEDDINGS", "1")
    service = registry.create_memory_service(f"yuxi+sqlite:///{tmp_path / 'on.db'}")
    assert isinstance(service, SqlMemoryService) and service.embedder is not None
    await service.add_memory(app_name=APP, user_id=USER, memories=entries(FACTS))
    assert (await search(service, "车险什么时候到期？"))[0] == FACTS[4]
    monkeypatch.setenv("YUXI_MEMORY_EMBEDDINGS", "0")
    plain = registry.create_memory_service(f"yuxi+sqlite:///{tmp_path / 'off.db'}")
    assert isinstance(plain, SqlMemoryService) and plain.embedder is None
    for switch, model in (("maybe", "offline"), ("1", "none")):
        monkeypatch.setenv("YUXI_MEMORY_EMBEDDINGS", switch)
        monkeypatch.setenv("YUXI_EMBEDDING_MODEL", model)
        with pytest.raises(MemoryConfigError, match="YUXI_"):
            registry.create_memory_service(f"yuxi+sqlite:///{tmp_path / 'bad.db'}")
    assert not (tmp_path / "bad.db").exists()
