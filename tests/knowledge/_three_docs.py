"""The small base the hybrid, snapshot, failure and tampering tests start from: three
documents embedded through the loopback endpoint (`server`, in conftest)."""

from __future__ import annotations

from adk_yuxi.knowledge import KnowledgeStore, OpenAIEmbedder
from adk_yuxi.knowledge._dense import DenseSearch
from adk_yuxi.testing import EmbeddingServer

DOCS = {
    "pool.md": b"# Database\n\nThe pool holds at most 20 connections per service.\n",
    "lunch.md": b"# Canteen\n\nLunch is served from noon on the fourth floor.\n",
    "vpn.md": b"# Remote access\n\nThe VPN gateway needs a hardware token.\n",
}


def embedder(server: EmbeddingServer, model: str = "test-embed") -> OpenAIEmbedder:
    return OpenAIEmbedder(model, base_url=server.base_url, api_key=server.api_key)


async def fill(store: KnowledgeStore, kb_id: str = "kb") -> None:
    await store.create_kb(kb_id, creator_id="admin", kb_id=kb_id)
    for name, data in DOCS.items():
        await store.ingest(kb_id, data, name=name)


async def filled(db_url: str, server: EmbeddingServer) -> KnowledgeStore:
    """A store on `db_url` embedding with `server`, base `kb` filled with `DOCS`."""
    store = KnowledgeStore(db_url, embedder=embedder(server))
    await fill(store)
    return store


async def count(store: KnowledgeStore, sql: str) -> int:
    async with store.store.read() as tx:
        row = await tx.fetchone(sql)
    assert row is not None
    return int(row[0])


async def save_snapshot_of(store: KnowledgeStore, kb_id: str = "kb") -> None:
    """The base's dense index built and its snapshot saved, as a writer process does."""
    writer = DenseSearch(snapshot_min=1)
    await writer.refresh(store.store, kb_id, "test-embed")
    await writer.close()  # waits for the save
