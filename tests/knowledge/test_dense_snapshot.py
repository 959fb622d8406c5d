"""The dense index kept serialised beside the vectors: whoever builds it saves it, and
another process restores it and adds only what changed since (a build of 100,000
vectors takes minutes; a restore about a second). Writers build it, not the query."""

from __future__ import annotations

import pytest

from adk_yuxi.knowledge import KnowledgeStore
from adk_yuxi.knowledge._dense import DenseSearch, _index_class, vector_label
from adk_yuxi.knowledge._dense_snapshot import load_snapshot
from adk_yuxi.testing import EmbeddingServer

from ._three_docs import count, embedder, filled, save_snapshot_of
from .conftest import Platform

SNAPSHOTS = "SELECT count(*) FROM yx_kb_dense_snapshots WHERE kb_id = 'kb'"


async def test_a_saved_index_is_restored_elsewhere_and_only_the_change_is_added(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    store = await filled(db_url, server)
    try:
        await save_snapshot_of(store)
        assert await count(store, SNAPSHOTS) == 1
        # Changes after the snapshot: a new file, a deleted one.
        await store.ingest("kb", b"Parking badges are issued at reception.", name="p.md")
        vpn = next(f for f in await store.list_files("kb") if f.name == "vpn.md")
        await store.delete_file("kb", vpn.file_id)
        reader = DenseSearch(snapshot_min=100)  # another process: nothing in memory
        found = await vector_label(store.store, "kb")
        assert found is not None
        question = embedder(server).query("where do I get a parking badge")
        hits = await reader.search(store.store, "kb", found[0], found[1], question, 5, None)
        entry = reader._entries["kb"]
        # Restored, then one vector added and one removed: a build would count 3 unsaved.
        assert (entry.size, entry.unsaved) == (3, 2)
        async with store.store.read() as tx:
            rows = await tx.fetchall(
                "SELECT c.cid, f.name FROM yx_kb_chunks c JOIN yx_kb_files f"
                " ON f.file_id = c.file_id"
            )
        names = {int(r[0]): str(r[1]) for r in rows}
        assert sorted(names[h.cid] for h in hits) == ["lunch.md", "p.md", "pool.md"]
        assert names[hits[0].cid] == "p.md"
    finally:
        await store.close()


async def test_a_snapshot_of_another_model_is_not_restored(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    store = await filled(db_url, server)
    try:
        await save_snapshot_of(store)
        index_class = _index_class()
        restored = await load_snapshot(store.store, "kb", "test-embed", index_class)
        assert restored is not None and len(restored) == 3
        assert await load_snapshot(store.store, "kb", "model-b", index_class) is None
    finally:
        await store.close()


async def test_ingest_leaves_the_index_built_and_the_first_query_uses_it(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    store = await filled(db_url, server)
    try:
        built = store._dense._entries["kb"]  # built where the vectors were written
        assert built.size == 3
        hits = await store.query("kb", "hardware token", top_k=1)
        assert hits[0].file_name == "vpn.md" and "dense" in hits[0].signals
        assert store._dense._entries["kb"] is built
    finally:
        await store.close()


async def test_replacing_the_vectors_or_deleting_the_base_drops_its_snapshot(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    store = await filled(db_url, server)
    try:
        for drop in ("replace", "delete"):
            await save_snapshot_of(store)
            assert await count(store, SNAPSHOTS) == 1
            if drop == "replace":
                assert await store.embed("kb", replace=True) == 3
            else:
                await store.delete_kb("kb")
            assert await count(store, SNAPSHOTS) == 0
    finally:
        await store.close()


async def test_a_snapshot_that_cannot_be_written_leaves_the_index_serving(
    platform: Platform, server: EmbeddingServer, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = await filled(db_url, server)
    try:
        async with store.store.write() as tx:  # reading and writing it fail: no table
            await tx.execute("DROP TABLE yx_kb_dense_snapshots")
        dense = DenseSearch(snapshot_min=1)
        await dense.refresh(store.store, "kb", "test-embed")
        await dense.close()  # the failed restore and save are logged, not raised
        assert "not restored" in caplog.text and "not saved" in caplog.text
        found = await vector_label(store.store, "kb")
        assert found is not None
        question = embedder(server).query("hardware token")
        hits = await dense.search(store.store, "kb", found[0], found[1], question, 1, None)
        assert len(hits) == 1 and dense._entries["kb"].unsaved == 3
    finally:
        await store.close()


async def test_a_first_query_answers_lexically_while_a_large_index_builds(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    store = await filled(db_url, server)  # too small to be saved: no snapshot
    restarted = KnowledgeStore(db_url, embedder=embedder(server))
    restarted._dense.inline_build = 2  # three vectors count as a base too large to wait for
    try:
        hits = await restarted.query("kb", "hardware token", top_k=3)
        assert [h.file_name for h in hits] == ["vpn.md"]
        assert hits[0].signals == ("lexical",)  # not held for the build
        await restarted._dense.close()  # waits for the build the query started
        assert restarted._dense._entries["kb"].size == 3
        hits = await restarted.query("kb", "hardware token", top_k=1)
        assert hits[0].file_name == "vpn.md" and hits[0].signals == ("lexical", "dense")
    finally:
        await restarted.close()
        await store.close()
