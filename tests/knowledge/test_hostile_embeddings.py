"""An embeddings endpoint answering something unusable (NaN or infinite values, each
text's vector not once under its own index, a width other than before): ingest,
`yuxi kb embed` and memory store nothing and say why in one line; a query answers
lexically. Real HTTP on loopback, the faults from `HostileEmbeddingServer`."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from adk_yuxi._sql import SqlStore
from adk_yuxi.knowledge import EmbeddingError, KnowledgeStore
from adk_yuxi.memory import MemoryEmbeddingError, SqlMemoryService
from tests.e2e._cli import yuxi_here

from ._three_docs import embedder
from .conftest import Platform
from .hostile_embeddings import HostileEmbeddingServer

UNUSABLE = ["nan", "inf", "same_index", "far_index", "short", "not_json"]
POOL = b"# Database\n\nThe pool holds at most 20 connections per service.\n"
VPN = b"# Remote access\n\nThe VPN gateway needs a hardware token.\n"
LONG = POOL + b"".join(  # several chunks: one batch of several texts
    b"\n# Part %d\n\n" % i + b"Section %d says more about its subject. " % i * 20 for i in range(4)
)


@pytest.fixture
def server() -> Iterator[HostileEmbeddingServer]:
    with HostileEmbeddingServer() as running:
        yield running


async def _vector_rows(store: KnowledgeStore) -> int:
    async with store.store.read() as tx:
        row = await tx.fetchone(
            "SELECT (SELECT count(*) FROM yx_kb_vectors) + (SELECT count(*) FROM yx_kb_embeddings)"
        )
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("fault", UNUSABLE)
async def test_an_unusable_answer_at_ingest_stores_no_vector(
    platform: Platform, server: HostileEmbeddingServer, db_url: str, fault: str
) -> None:
    store = KnowledgeStore(db_url, embedder=embedder(server))
    try:
        await store.create_kb("kb", creator_id="admin", kb_id="kb")
        server.fault = fault
        with pytest.raises(EmbeddingError) as failed:
            await store.ingest("kb", LONG, name="a.md")
        assert "\n" not in str(failed.value)
        assert await _vector_rows(store) == 0
        server.fault = None  # the endpoint mended: the next run fills in what is missing
        assert await store.embed("kb") >= 1
        hits = await store.query("kb", "pool connections", top_k=1)
        assert hits[0].signals == ("lexical", "dense")
    finally:
        await store.close()


@pytest.mark.parametrize("fault", ["nan", "far_index"])
async def test_an_unusable_answer_to_a_question_leaves_it_lexical(
    platform: Platform, server: HostileEmbeddingServer, db_url: str, fault: str
) -> None:
    store = KnowledgeStore(db_url, embedder=embedder(server))
    try:
        await store.create_kb("kb", creator_id="admin", kb_id="kb")
        await store.ingest("kb", POOL, name="pool.md")
        await store.ingest("kb", VPN, name="vpn.md")
        server.fault = fault
        hits = await store.query("kb", "hardware token", top_k=2)
        assert hits[0].file_name == "vpn.md"
        assert {h.signals for h in hits} == {("lexical",)}
    finally:
        await store.close()


async def test_a_model_changing_width_is_refused_and_a_question_stays_lexical(
    platform: Platform, server: HostileEmbeddingServer, db_url: str
) -> None:
    store = KnowledgeStore(db_url, embedder=embedder(server))
    try:
        await store.create_kb("kb", creator_id="admin", kb_id="kb")
        await store.ingest("kb", POOL, name="pool.md")
        await store.ingest("kb", VPN, name="vpn.md")
        server.dims = 32  # another model behind the same name
        assert store.embedder is not None
        with pytest.raises(EmbeddingError, match="32 dimensions, not 64"):
            store.embedder.query("hardware token")
        hits = await store.query("kb", "hardware token", top_k=2)
        assert hits[0].file_name == "vpn.md" and hits[0].signals == ("lexical",)
    finally:
        await store.close()
    # Another process, whose first question is the first answer it sees: no crash.
    fresh = KnowledgeStore(db_url, embedder=embedder(server))
    try:
        for file_id in (None, (await fresh.list_files("kb"))[0].file_id):
            hits = await fresh.query("kb", "hardware token", top_k=2, file_id=file_id)
            assert {h.signals for h in hits} <= {("lexical",)}
    finally:
        await fresh.close()


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["nan", "far_index"])
def test_kb_embed_says_why_in_one_line_and_stores_nothing(
    tmp_path: Path, server: HostileEmbeddingServer, fault: str
) -> None:
    (tmp_path / "pool.md").write_bytes(LONG)
    db = f"sqlite+aiosqlite:///{tmp_path / 'kb.db'}"

    def yuxi(*args: str, model: str = "none") -> tuple[int, str, str]:
        done = yuxi_here(
            list(args), cwd=tmp_path, YUXI_EMBEDDING_MODEL=model,
            YUXI_EMBEDDING_BASE_URL=server.base_url, YUXI_EMBEDDING_API_KEY=server.api_key,
        )  # fmt: skip
        return done.returncode, done.stdout, done.stderr

    assert yuxi("access", "user", "add", "root", "--db", db)[0] == 0
    assert yuxi("kb", "create", "Ops", "--id", "ops", "--owner", "root", "--db", db)[0] == 0
    assert yuxi("kb", "ingest", "ops", "pool.md", "--db", db)[0] == 0
    server.fault = fault
    code, _, err = yuxi("kb", "embed", "ops", "--db", db, model="test-embed")
    said = [line for line in err.splitlines() if line.startswith("Error:")]
    assert code == 1 and len(said) == 1 and "Traceback" not in err, err
    with sqlite3.connect(tmp_path / "kb.db") as raw:
        assert raw.execute("SELECT count(*) FROM yx_kb_vectors").fetchone() == (0,)


@pytest.mark.parametrize("fault", UNUSABLE)
async def test_memory_stores_no_vector_of_an_unusable_answer(
    migrated_store: SqlStore, server: HostileEmbeddingServer, fault: str
) -> None:
    """The memories are kept by text (a turn never fails for the model) and no vector
    of the answer is stored; search goes by full text; an explicit fill says why."""
    service = SqlMemoryService(migrated_store, embedder=embedder(server))
    entries = [
        MemoryEntry(id=f"m{i}", content=types.Content(role="user", parts=[types.Part(text=t)]))
        for i, t in enumerate(["the vault code is amber", "bring the blue folder", "noon"])
    ]
    server.fault = fault
    await service.add_memory(app_name="chat", user_id="u", memories=entries)
    async with migrated_store.read() as tx:
        row = await tx.fetchone(
            "SELECT (SELECT count(*) FROM yx_memories), (SELECT count(*) FROM yx_memory_vectors)"
        )
    assert row is not None and (int(row[0]), int(row[1])) == (3, 0)
    found = await service.search_memory(app_name="chat", user_id="u", query="vault code")
    assert [m.id for m in found.memories] == ["m0"]
    with pytest.raises(MemoryEmbeddingError) as failed:
        await service.embed_missing()
    assert "\n" not in str(failed.value)
