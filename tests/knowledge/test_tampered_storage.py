"""Damaged storage under the dense side: a snapshot overwritten mid-graph, or stored
vectors of another dimension for the same model. A query still answers (lexically if
it must) and nothing reaches usearch that could crash or hang the server."""

from __future__ import annotations

from adk_yuxi.knowledge import KnowledgeStore
from adk_yuxi.knowledge._dense import _index_class
from adk_yuxi.knowledge._dense_snapshot import load_snapshot
from adk_yuxi.testing import EmbeddingServer

from ._three_docs import embedder, filled, save_snapshot_of
from .conftest import Platform


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
    store = await filled(db_url, server)
    try:
        await save_snapshot_of(store)
        async with store.store.read() as tx:
            row = await tx.fetchone("SELECT length(data) FROM yx_kb_dense_snapshots")
        assert row is not None
        await _tamper_snapshot(store, int(row[0]) - 40, bytes(range(7, 47)))
        assert await load_snapshot(store.store, "kb", "test-embed", _index_class()) is None
        # Another process: no index in memory, the damaged snapshot ignored, one built.
        fresh = KnowledgeStore(db_url, embedder=embedder(server))
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
    store = await filled(db_url, server)
    try:
        async with store.store.write() as tx:  # same model, 32 dimensions instead of 64
            await tx.execute(
                "UPDATE yx_kb_vectors SET vector = :v"
                " WHERE cid = (SELECT min(cid) FROM yx_kb_vectors)",
                {"v": bytes(64)},
            )
    finally:
        await store.close()
    fresh = KnowledgeStore(db_url, embedder=embedder(server))  # nothing in memory
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
