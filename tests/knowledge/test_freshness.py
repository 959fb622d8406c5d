"""The search index never answers from a stale base: writes by another store object or
another process are seen at the next query; a migrated database is searchable."""

from __future__ import annotations

import asyncio
import io
import os
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from adk_yuxi._sql import SchemaPart
from adk_yuxi._sql.schema import PLATFORM
from adk_yuxi._sql.store import SqlStore
from adk_yuxi.knowledge import KnowledgeStore, TerminalProgress
from adk_yuxi.knowledge._index_load import refresh
from adk_yuxi.knowledge._schema import KNOWLEDGE_SCHEMA
from adk_yuxi.knowledge._search import _fetch
from adk_yuxi.knowledge._terms import query_keys

from .conftest import Platform

ROOT = Path(__file__).resolve().parents[2]

_WRITER = """
import asyncio, sys
from adk_yuxi.knowledge import KnowledgeStore, TerminalProgress

async def main(url, action, *args):
    store = KnowledgeStore(url)
    try:
        if action == "ingest":
            await store.ingest("kb", args[1].encode(), name=args[0])
        else:
            await store.delete_file("kb", args[0])
    finally:
        await store.close()

asyncio.run(main(*sys.argv[1:]))
"""


async def _in_another_process(url: str, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _WRITER, url, *args, env=env, stderr=asyncio.subprocess.PIPE
    )
    _, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()


async def _orphans(store: KnowledgeStore) -> tuple[int, int]:
    async with store.store.read() as tx:
        chunks = await tx.fetchone("SELECT count(*) FROM yx_kb_chunks")
        terms = await tx.fetchone("SELECT count(*) FROM yx_kb_terms")
    assert chunks is not None and terms is not None
    return int(chunks[0]), int(terms[0])


async def test_writes_of_another_store_object_are_seen(platform: Platform) -> None:
    reader = platform.store
    await reader.create_kb("KB", creator_id="admin", kb_id="kb")
    writer = KnowledgeStore(platform.store.store.engine)
    try:
        first = await writer.ingest("kb", b"the walrus sleeps on ice", name="a.txt")
        assert [h.file_id for h in await reader.query("kb", "walrus")] == [first.file_id]
        assert reader.index_bytes > 0
        await writer.ingest("kb", b"a narwhal swims under ice", name="b.txt")
        assert [h.file_name for h in await reader.query("kb", "narwhal")] == ["b.txt"]
        # Re-ingest under the same name: the old words are gone, the new ones found.
        await writer.ingest("kb", b"the walrus moved to the beach", name="a.txt")
        assert await reader.query("kb", "sleeps") == []
        assert [h.content for h in await reader.query("kb", "beach")] == [
            "the walrus moved to the beach"
        ]
        await writer.delete_file("kb", first.file_id)
        assert await reader.query("kb", "walrus") == []
        assert await _orphans(writer) == (1, 1)  # term rows go with their chunks
        assert [h.file_name for h in await reader.query("kb", "ice")] == ["b.txt"]
        await writer.delete_kb("kb")
        assert await reader.query("kb", "ice") == []
        assert await _orphans(writer) == (0, 0)
    finally:
        await writer.close()


async def test_writes_of_another_process_are_seen(platform: Platform, db_url: str) -> None:
    store = platform.store
    await store.create_kb("KB", creator_id="admin", kb_id="kb")
    keep = await store.ingest("kb", "极光出现在北方的天空".encode(), name="keep.md")
    gone = await store.ingest("kb", b"penguins march in winter", name="gone.md")
    assert len(await store.query("kb", "penguins")) == 1  # index built
    url = db_url
    await _in_another_process(url, "ingest", "new.md", "冰川缓慢移动 glaciers move slowly")
    assert [h.file_name for h in await store.query("kb", "冰川移动")] == ["new.md"]
    await _in_another_process(url, "delete", gone.file_id)
    assert await store.query("kb", "penguins") == []
    hits = await store.query("kb", "极光", file_id=keep.file_id)
    assert [h.file_id for h in hits] == [keep.file_id]


async def test_file_filter_and_failed_reingest_on_the_index(platform: Platform) -> None:
    store = platform.store
    await store.create_kb("KB", creator_id="admin", kb_id="kb")
    a = await store.ingest("kb", b"alpha shared term one\n\nmore alpha text", name="a.txt")
    b = await store.ingest("kb", b"beta shared term two", name="b.txt")
    assert {h.file_id for h in await store.query("kb", "shared")} == {a.file_id, b.file_id}
    assert {h.file_id for h in await store.query("kb", "shared", file_id=b.file_id)} == {b.file_id}
    assert await store.query("kb", "alpha", file_id=b.file_id) == []
    assert await store.query("kb", "shared", file_id="f_missing") == []

    class Broken(Exception):
        pass

    class FailWhileIndexing(TerminalProgress):
        def advance(self, amount: int) -> None:
            if self._stage == "indexing chunks":
                raise Broken

    # A failure inside the replacing transaction (after the old chunks were deleted
    # there) rolls everything back: the old version stays, in the database and index.
    with pytest.raises(Broken):
        progress = FailWhileIndexing("b.txt", io.StringIO())
        await store.ingest("kb", b"gamma replaces beta", name="b.txt", progress=progress)
    other = KnowledgeStore(store.store.engine)
    try:
        for reader in (store, other):
            assert await reader.query("kb", "gamma") == []
            assert [h.file_id for h in await reader.query("kb", "beta")] == [b.file_id]
    finally:
        await other.close()


async def test_the_index_loads_whole_files_page_by_page(platform: Platform) -> None:
    store = platform.store
    await store.create_kb("KB", creator_id="admin", kb_id="kb")
    await store.create_kb("Other", creator_id="admin", kb_id="other")
    for name in ("b.md", "a.md", "c.md"):
        text = "\n\n".join(f"part {i} of {name} " * 40 for i in range(3))
        await store.ingest("kb", text.encode(), name=name)
    await store.ingest("other", b"not this base part", name="a.md")
    async with store.store.read() as tx:
        whole = await tx.fetchall(
            "SELECT t.cid, t.file_id FROM yx_kb_terms t WHERE kb_id = 'kb'"
            " ORDER BY t.file_id, t.cid"
        )
    assert len(whole) == 9
    one, versions = await refresh(store.store, "kb", None, {})
    assert len(one.segments) == 1 and set(versions) == {f for _, f in whole}
    for page_size, segment_docs in ((1, 1), (2, 4), (4, 3), (100, 100)):
        index, _ = await refresh(
            store.store, "kb", None, {}, page_size=page_size, segment_docs=segment_docs
        )
        held = [(int(c), f) for s in index.segments for f, (lo, hi) in s.files.items()
                for c in s.cids[lo:hi].tolist()]  # fmt: skip
        assert held == [(int(c), f) for c, f in whole]
        # As many whole 3-chunk files as fit in segment_docs (a file larger: alone).
        assert len(index.segments) == -(-3 // max(1, segment_docs // 3))
        for query in ("part", "part 1 of a.md", "c"):
            keys = query_keys(query)
            assert index.search(keys, 9) == one.search(keys, 9)


async def test_a_database_of_the_previous_schema_is_migrated(db_url: str) -> None:
    old = SqlStore(db_url)
    await old.migrate((PLATFORM, SchemaPart("knowledge", KNOWLEDGE_SCHEMA.steps[:2])))
    # Rows as the previous code wrote them, through the engine (the store's write()
    # would first apply every registered step).
    async with old.engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO yx_kb_bases (kb_id, name, description, created_at)"
                " VALUES ('kb', 'Old', '', 0)"
            )
        )
        await conn.execute(
            text(
                "INSERT INTO yx_kb_files (file_id, kb_id, name, mime_type, size, sha256,"
                " total_lines, chunk_count, version, updated_at)"
                " VALUES ('f1', 'kb', 'old.md', 'text/markdown', 10, 'x', 3, 2, 1, 0)"
            )
        )
        for seq, content in enumerate(["旧的数据库文档", "legacy lighthouse notes"]):
            await conn.execute(
                text(
                    "INSERT INTO yx_kb_chunks (file_id, kb_id, seq, start_line, end_line,"
                    " content, scope, body) VALUES ('f1', 'kb', :seq, 1, 1, :c, 's', 'b')"
                ),
                {"seq": seq, "c": content},
            )
    await old.close()

    store = KnowledgeStore(db_url)
    try:
        await store.prepare()
        async with store.store.read() as tx:
            version = await tx.fetchone(
                "SELECT version FROM yx_schema_version WHERE name = 'knowledge'"
            )
            columns = await tx.fetchone("SELECT * FROM yx_kb_chunks")
            terms = await tx.fetchone("SELECT count(*) FROM yx_kb_terms")
        assert version == (KNOWLEDGE_SCHEMA.version,)
        assert columns is not None and len(columns) == 7  # scope and body gone
        assert terms == (2,)
        assert [h.content for h in await store.query("kb", "数据库")] == ["旧的数据库文档"]
        assert [h.seq for h in await store.query("kb", "lighthouse")] == [1]
        await store.ingest("kb", b"new lighthouse keeper", name="new.md")
        assert len(await store.query("kb", "lighthouse")) == 2
    finally:
        await store.close()


async def test_answers_are_the_rows_of_the_database(platform: Platform) -> None:
    store = platform.store
    await store.create_kb("KB", creator_id="admin", kb_id="kb")
    text = "# 标题\n\n极光 aurora 🌌 出现在北方\n\nsecond part about glaciers"
    file = await store.ingest("kb", text.encode(), name="sky.md")
    async with store.store.read() as tx:
        rows = await tx.fetchall(
            "SELECT seq, start_line, end_line, content FROM yx_kb_chunks ORDER BY seq"
        )
    hits = await store.query("kb", "极光 glaciers", top_k=5)
    assert sorted((h.seq, h.start_line, h.end_line, h.content) for h in hits) == [
        tuple(r) for r in rows
    ]
    assert {(h.file_id, h.file_name) for h in hits} == {(file.file_id, "sky.md")}


async def test_the_fallback_answers_only_with_rows_that_still_exist(platform: Platform) -> None:
    # What a query answers with when the base changed at every try: the rows by id.
    store = platform.store
    await store.create_kb("KB", creator_id="admin", kb_id="kb")
    keep = await store.ingest("kb", b"shared word in the kept file", name="keep.md")
    gone = await store.ingest("kb", b"shared word in the deleted file", name="gone.md")
    async with store.store.read() as tx:
        rows = await tx.fetchall("SELECT cid, file_id FROM yx_kb_chunks ORDER BY cid")
    ranked = [(int(cid), 1.0 - i / 10) for i, (cid, _) in enumerate(rows)]
    assert len(await _fetch(store.store, "kb", ranked)) == 2
    await store.delete_file("kb", gone.file_id)
    hits = await _fetch(store.store, "kb", ranked)
    assert [(h.file_id, h.content) for h in hits] == [
        (keep.file_id, "shared word in the kept file")
    ]
    assert await _fetch(store.store, "other-kb", ranked) == []


async def test_bases_beyond_the_memory_budget_take_turns(platform: Platform, db_url: str) -> None:
    # A budget smaller than one index: each load evicts the other base's entry, even
    # while a query on that base is waiting for its revision.
    store = KnowledgeStore(db_url, index_cache_bytes=1)
    try:
        for kb in ("a", "b"):
            await store.create_kb(kb.upper(), creator_id="admin", kb_id=kb)
            await store.ingest(kb, f"walrus {kb} ".encode() * 50, name=f"{kb}.md")

        async def names(kb: str) -> list[str]:
            return [h.file_name for h in await store.query(kb, "walrus")]

        for _ in range(3):
            got = await asyncio.gather(*(names(kb) for kb in ("a", "b") * 4))
            assert got == [["a.md"], ["b.md"]] * 4
        one = store.index_bytes
        assert one > 0
        await names("a")
        assert store.index_bytes == one  # one entry kept: the one just used
    finally:
        await store.close()
