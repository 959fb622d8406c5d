"""Damaged storage under the dense side: a snapshot overwritten mid-graph, or stored
vectors of another dimension for the same model. A query still answers (lexically if
it must) and nothing reaches usearch that could crash or hang the server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adk_yuxi.knowledge import KnowledgeStore, OpenAIEmbedder
from adk_yuxi.knowledge._dense import DenseSearch, _index_class
from adk_yuxi.knowledge._dense_snapshot import load_snapshot
from adk_yuxi.testing import EmbeddingServer

from .conftest import Platform

DOCS = {
    "pool.md": b"# Database\n\nThe pool holds at most 20 connections per service.\n",
    "lunch.md": b"# Canteen\n\nLunch is served from noon on the fourth floor.\n",
    "vpn.md": b"# Remote access\n\nThe VPN gateway needs a hardware token.\n",
}


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    with EmbeddingServer() as running:
        yield running


def _embedder(server: EmbeddingServer) -> OpenAIEmbedder:
    return OpenAIEmbedder("test-embed", base_url=server.base_url, api_key=server.api_key)


async def _filled(db_url: str, server: EmbeddingServer) -> KnowledgeStore:
    store = KnowledgeStore(db_url, embedder=_embedder(server))
    await store.create_kb("kb", creator_id="admin", kb_id="kb")
    for name, data in DOCS.items():
        await store.ingest("kb", data, name=name)
    return store


async def _tamper_snapshot(store: KnowledgeStore, at: int, junk: bytes) -> None:
    async with store.store.write() as tx:
        row = await tx.fetchone("SELECT data FROM yx_kb_dense_snapshots WHERE kb_id = 'kb'")
        assert row is not None
        data = bytearray(bytes(row[0]))
        data[at : at + len(junk)] = junk
        await tx.execute(
            "UPDATE yx_kb_dense_snapshots SET data = :d WHERE kb_id = 'kb'", {"d": bytes(data)}
        )


async def test_a_snapshot_overwritten_mid_graph_is_not_handed_to_usearch(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    # usearch restores such bytes without complaint, then segfaults or spins searching.
    store = await _filled(db_url, server)
    try:
        writer = DenseSearch(snapshot_min=1)
        await writer.refresh(store.store, "kb", "test-embed")
        await writer.close()
        async with store.store.read() as tx:
            row = await tx.fetchone("SELECT length(data) FROM yx_kb_dense_snapshots")
        assert row is not None
        await _tamper_snapshot(store, int(row[0]) - 40, bytes(range(7, 47)))
        assert await load_snapshot(store.store, "kb", "test-embed", _index_class()) is None
        # Another process: no index in memory, the damaged snapshot ignored, one built.
        fresh = KnowledgeStore(db_url, embedder=_embedder(server))
        try:
            hits = await fresh.query("kb", "pool connections", top_k=3)
            assert hits[0].file_name == "pool.md" and "dense" in hits[0].signals
        finally:
            await fresh.close()
    finally:
        await store.close()


async def test_a_vector_of_another_dimension_leaves_the_base_answering(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    store = await _filled(db_url, server)
    try:
        async with store.store.write() as tx:  # same model, 32 dimensions instead of 64
            await tx.execute(
                "UPDATE yx_kb_vectors SET vector = :v"
                " WHERE cid = (SELECT min(cid) FROM yx_kb_vectors)",
                {"v": bytes(64)},
            )
    finally:
        await store.close()
    fresh = KnowledgeStore(db_url, embedder=_embedder(server))  # nothing in memory
    try:
        files = {f.name: f.file_id for f in await fresh.list_files("kb")}
        for file_id in (None, *files.values()):
            hits = await fresh.query("kb", "pool connections", top_k=3, file_id=file_id)
            assert file_id is not None or hits[0].file_name == "pool.md"
        # Writing to the base still works; its index stays unbuilt, the query lexical.
        await fresh.ingest("kb", b"Parking badges are issued at reception.", name="p.md")
        hits = await fresh.query("kb", "parking badges reception", top_k=3)
        assert hits[0].file_name == "p.md" and hits[0].signals == ("lexical",)
    finally:
        await fresh.close()
