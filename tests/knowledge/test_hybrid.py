"""Hybrid retrieval with an OpenAI-compatible embeddings endpoint (the loopback server,
real HTTP and JSON): vectors at ingest, persisted, fused with BM25, one model per base."""

from __future__ import annotations

import asyncio

import pytest

from adk_yuxi.knowledge import (
    EmbeddingError,
    EmbeddingMismatchError,
    KnowledgeStore,
    OpenAIEmbedder,
    embedder_from_env,
    ping_embedder,
)
from adk_yuxi.testing import EmbeddingServer

from ._three_docs import DOCS, count, embedder, fill
from .conftest import Platform


async def test_ingest_embeds_and_a_query_fuses_both_signals(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    store = KnowledgeStore(db_url, embedder=embedder(server))
    try:
        await fill(store)
        assert await count(store, "SELECT count(*) FROM yx_kb_vectors") == 3
        # "pool connections" are words of the pool chunk: both signals find it.
        hits = await store.query("kb", "pool connections", top_k=3)
        assert hits[0].file_name == "pool.md"
        assert hits[0].signals == ("lexical", "dense")
        # No word in common: only the dense side can rank, and says so.
        dense_only = [h for h in hits if h.signals == ("dense",)]
        assert dense_only and all(h.content for h in dense_only)
    finally:
        await store.close()


async def test_a_restart_rebuilds_from_stored_vectors_without_embedding_again(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    first = KnowledgeStore(db_url, embedder=embedder(server))
    await fill(first)
    await first.close()
    passages = len(server.requests)
    again = KnowledgeStore(db_url, embedder=embedder(server))
    try:
        hits = await again.query("kb", "hardware token", top_k=1)
        assert hits[0].file_name == "vpn.md" and "dense" in hits[0].signals
        assert len(server.requests) == passages + 1  # the question, nothing else
        assert server.requests[-1]["input"] == ["hardware token"]
    finally:
        await again.close()


async def test_embed_fills_in_what_a_lexical_ingest_left_and_is_resumable(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    await fill(platform.store)  # no embedder: lexical only, scores as BM25
    hits = await platform.store.query("kb", "pool", top_k=3)
    assert [h.signals for h in hits] == [("lexical",)]
    store = KnowledgeStore(db_url, embedder=embedder(server))
    try:
        assert await store.embed("kb") == 3
        assert await store.embed("kb") == 0  # nothing left to fill
        assert len(server.requests) == 1  # one batch
    finally:
        await store.close()


async def test_a_base_refuses_a_second_model_and_nothing_changes(
    platform: Platform, db_url: str
) -> None:
    with EmbeddingServer(models=("model-a", "model-b")) as server:
        store_a = KnowledgeStore(db_url, embedder=embedder(server, "model-a"))
        await fill(store_a)
        await store_a.close()
        store_b = KnowledgeStore(db_url, embedder=embedder(server, "model-b"))
        try:
            with pytest.raises(EmbeddingMismatchError, match="holds vectors from 'model-a'"):
                await store_b.ingest("kb", b"Parking is free.", name="parking.md")
            with pytest.raises(EmbeddingMismatchError):
                await store_b.embed("kb")
            assert [f.name for f in await store_b.list_files("kb")] == sorted(DOCS)
            # Replacing re-embeds everything with the new model.
            assert await store_b.embed("kb", replace=True) == 3
            await store_b.ingest("kb", b"Parking is free.", name="parking.md")
        finally:
            await store_b.close()


async def test_a_deleted_file_never_comes_back_through_the_dense_side(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    store = KnowledgeStore(db_url, embedder=embedder(server))
    try:
        await fill(store)
        assert any(h.file_name == "vpn.md" for h in await store.query("kb", "token", top_k=3))
        vpn = next(f for f in await store.list_files("kb") if f.name == "vpn.md")
        await platform.store.delete_file("kb", vpn.file_id)  # another store: another replica
        hits = await store.query("kb", "hardware token gateway", top_k=5)
        assert hits and all(h.file_name != "vpn.md" for h in hits)
        assert await count(store, "SELECT count(*) FROM yx_kb_vectors") == 2
    finally:
        await store.close()


async def test_the_dense_index_follows_one_file_changes_without_a_rebuild(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    store = KnowledgeStore(db_url, embedder=embedder(server))
    try:
        await fill(store)
        await store.query("kb", "hardware token", top_k=3)
        built = store._dense._entries["kb"]
        # Another store writes (another replica): a new file, then a deleted one.
        await platform.store.ingest("kb", b"Parking badges are issued at reception.", name="p.md")
        writer = KnowledgeStore(db_url, embedder=embedder(server))
        try:
            await writer.embed("kb")
        finally:
            await writer.close()
        hits = await store.query("kb", "where do I get a parking badge", top_k=1)
        assert hits[0].file_name == "p.md" and "dense" in hits[0].signals
        vpn = next(f for f in await store.list_files("kb") if f.name == "vpn.md")
        await platform.store.delete_file("kb", vpn.file_id)
        hits = await store.query("kb", "hardware token gateway", top_k=5)
        assert hits and all(h.file_name != "vpn.md" for h in hits)
        entry = store._dense._entries["kb"]
        assert entry.index is built.index and entry.label != built.label  # updated in place
        assert entry.size == 3 and entry.removed == 1 and len(entry.cids) == 3
    finally:
        await store.close()


async def test_bases_ranked_together_put_the_one_that_answers_first(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    store = KnowledgeStore(db_url, embedder=embedder(server))
    try:
        await fill(store, "handbook")
        await store.create_kb("ops", creator_id="admin", kb_id="ops")
        await store.ingest("ops", b"The zebrafinch gateway listens on port 9443.", name="o.md")
        hits = await store.query_many(
            ["handbook", "ops"], "which port does the zebrafinch gateway listen on?", top_k=3
        )
        assert hits[0].kb_id == "ops"
        assert hits[0].score > hits[1].score
    finally:
        await store.close()


def test_configuration_errors_are_one_line(server: EmbeddingServer) -> None:
    with pytest.raises(EmbeddingError, match="needs YUXI_EMBEDDING_BASE_URL") as caught:
        embedder_from_env({"YUXI_EMBEDDING_MODEL": "text-embedding-3-small"})
    assert "\n" not in str(caught.value)
    assert embedder_from_env({"YUXI_EMBEDDING_MODEL": "none"}) is None
    wrong_key = OpenAIEmbedder("test-embed", base_url=server.base_url, api_key="nope")
    with pytest.raises(EmbeddingError, match="answered 401: Incorrect API key"):
        wrong_key.query("x")
    server.fail_with = (503, "overloaded")
    with pytest.raises(EmbeddingError, match="answered 503: overloaded"):
        embedder(server).passages(["x"])
    dead = OpenAIEmbedder("m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(EmbeddingError, match="unreachable"):
        dead.query("x")


def test_ping_reports_the_model_that_answered(server: EmbeddingServer) -> None:
    env = {
        "YUXI_EMBEDDING_MODEL": "test-embed",
        "YUXI_EMBEDDING_BASE_URL": server.base_url,
        "YUXI_EMBEDDING_API_KEY": server.api_key,
    }
    ok = ping_embedder(env)
    assert ok.ok and ok.detail.startswith("test-embed: 64 dimensions")
    refused = ping_embedder({**env, "YUXI_EMBEDDING_API_KEY": "bad"})
    assert not refused.ok and "401" in refused.detail


class _FirstBatch:
    """Progress that tells when the first batch of vectors is committed."""

    def __init__(self) -> None:
        self.embedded = asyncio.Event()
        self._stage = ""

    def stage(self, name: str, total: int) -> None:
        self._stage = name

    def advance(self, amount: int) -> None:
        if self._stage == "embedding":
            self.embedded.set()

    def done(self) -> None:
        pass


async def test_ctrl_c_while_embedding_keeps_whole_batches_and_embed_resumes(
    platform: Platform, db_url: str
) -> None:
    text = "\n\n".join(f"Paragraph {n} about topic {n % 7}. " + "word " * 80 for n in range(300))
    with EmbeddingServer(delay_seconds=0.2) as server:
        store = KnowledgeStore(db_url, embedder=embedder(server))
        try:
            await store.create_kb("kb", creator_id="admin", kb_id="kb")
            progress = _FirstBatch()
            task = asyncio.ensure_future(
                store.ingest("kb", text.encode(), name="big.md", progress=progress)
            )
            await asyncio.wait_for(progress.embedded.wait(), 60)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            chunks = await count(store, "SELECT count(*) FROM yx_kb_chunks")
            vectors = await count(store, "SELECT count(*) FROM yx_kb_vectors")
            assert chunks > 64 and 0 < vectors < chunks and vectors % 32 == 0
            # The file itself was committed whole before embedding began.
            assert [f.name for f in await store.list_files("kb")] == ["big.md"]
            assert await store.embed("kb") == chunks - vectors
        finally:
            await store.close()
