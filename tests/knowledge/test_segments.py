"""The index follows one-file changes without a rebuild, on SQLite and PostgreSQL: the
segments it held stay (the same objects), answers are those of an index built whole,
a deleted file is never answered, a replaced one only in its new version, under
concurrent writes and when a refresh is cancelled midway."""

from __future__ import annotations

import asyncio
import math

import pytest

from adk_yuxi.knowledge import KnowledgeStore
from adk_yuxi.knowledge._search import ChunkHit

from .conftest import Platform

WORDS = [
    *("alpha", "beta", "gamma", "delta", "epsilon", "zeta"),
    *("eta", "theta", "iota", "kappa", "lambda", "mu"),
]


def _text(number: int, lines: int = 6) -> bytes:
    """A file of a few chunks whose words overlap with the others' (shared statistics)."""
    parts = []
    for line in range(lines):
        words = [WORDS[(number * 7 + line * 3 + i) % len(WORDS)] for i in range(40)]
        parts.append(" ".join(words) + f" 文件{number}第{line}段 marker{number}")
    return "\n\n".join(parts).encode()


def _segments(store: KnowledgeStore, kb_id: str = "kb") -> tuple[object, ...]:
    return store._search._entries[kb_id].index.segments


async def _answers(store: KnowledgeStore, query: str) -> list[tuple[str, int, float]]:
    return [(h.file_name, h.seq, h.score) for h in await store.query("kb", query, top_k=20)]


async def _same_as_a_fresh_load(store: KnowledgeStore, queries: list[str]) -> None:
    fresh = KnowledgeStore(store.store.engine)
    try:
        for query in queries:
            got, want = await _answers(store, query), await _answers(fresh, query)
            assert [g[:2] for g in got] == [w[:2] for w in want], query
            close = all(
                math.isclose(g[2], w[2], rel_tol=1e-6) for g, w in zip(got, want, strict=True)
            )
            assert close, query
    finally:
        await fresh.close()


QUERIES = ["alpha beta", "kappa mu theta", "文件3", "第2段 marker1", "lambda 文件7第1段", "marker9"]


async def test_one_file_changes_keep_the_other_segments(platform: Platform) -> None:
    reader = platform.store
    await reader.create_kb("KB", creator_id="admin", kb_id="kb")
    writer = KnowledgeStore(reader.store.engine)
    try:
        files = [await writer.ingest("kb", _text(n), name=f"f{n}.md") for n in range(4)]
        assert await reader.query("kb", "marker2")
        (first,) = _segments(reader)
        await writer.ingest("kb", _text(9), name="new.md")
        assert {h.file_name for h in await reader.query("kb", "marker9")} == {"new.md"}
        assert _segments(reader)[0] is first and len(_segments(reader)) == 2
        await _same_as_a_fresh_load(reader, QUERIES)

        # Replaced: only the new version; the file's old segment is masked, not rebuilt.
        await writer.ingest("kb", b"only the new words now", name="f1.md")
        assert await reader.query("kb", "marker1") == []
        assert [h.content for h in await reader.query("kb", "words")] == ["only the new words now"]
        await _same_as_a_fresh_load(reader, QUERIES)

        await writer.delete_file("kb", files[2].file_id)
        assert await reader.query("kb", "marker2") == []
        assert all(h.file_id != files[2].file_id for h in await reader.query("kb", "alpha"))
        await _same_as_a_fresh_load(reader, QUERIES)
    finally:
        await writer.close()


async def test_small_segments_are_merged_in_the_background(platform: Platform) -> None:
    store = platform.store
    await store.create_kb("KB", creator_id="admin", kb_id="kb")
    await store.ingest("kb", _text(0), name="f0.md")
    await store.query("kb", "alpha")
    for n in range(1, 4):  # each one a small segment of its own
        await store.ingest("kb", _text(n), name=f"f{n}.md")
        await store.query("kb", "alpha")
    merge = store._search._merges["kb"]
    await merge
    assert len(_segments(store)) == 1
    await _same_as_a_fresh_load(store, QUERIES)
    await store.ingest("kb", _text(5), name="f5.md")  # a write meanwhile wins over a merge
    assert {h.file_name for h in await store.query("kb", "marker5")} == {"f5.md"}


async def test_concurrent_writes_never_show_a_deleted_or_older_version(
    platform: Platform,
) -> None:
    reader = writer = platform.store  # one server: ingests and queries interleave
    await reader.create_kb("KB", creator_id="admin", kb_id="kb")
    gone = await writer.ingest("kb", b"doomed lighthouse notes", name="gone.md")
    for n in range(3):
        await writer.ingest("kb", _text(n), name=f"f{n}.md")
    committed = {"version": -1, "deleted": False}
    read_once = asyncio.Event()

    async def write() -> None:
        for version in range(12):
            await writer.ingest("kb", f"lighthouse revision{version} notes".encode(), name="v.md")
            committed["version"] = version
            if version == 3:
                await writer.delete_file("kb", gone.file_id)
                committed["deleted"] = True
            if version < 11:  # a query sees each version (not left to timing)
                read_once.clear()
                await read_once.wait()

    async def read() -> int:
        checked = 0
        while committed["version"] < 11:
            floor, deleted = committed["version"], committed["deleted"]
            hits: list[ChunkHit] = await reader.query("kb", "lighthouse notes", top_k=5)
            for hit in hits:
                assert not (deleted and hit.file_id == gone.file_id)
                if hit.file_name == "v.md":
                    assert int(hit.content.split("revision")[1].split()[0]) >= floor
            checked += 1
            read_once.set()
            await asyncio.sleep(0.001)
        return checked

    _, checked = await asyncio.gather(write(), read())
    assert checked > 3
    await _same_as_a_fresh_load(reader, [*QUERIES, "lighthouse revision11"])


@pytest.mark.parametrize("steps", [0, 1, 2, 4, 8, 16])
async def test_a_cancelled_refresh_leaves_the_index_it_had(platform: Platform, steps: int) -> None:
    store = platform.store
    await store.create_kb("KB", creator_id="admin", kb_id="kb")
    for n in range(3):
        await store.ingest("kb", _text(n), name=f"f{n}.md")
    await store.query("kb", "alpha")
    before = store._search._entries["kb"]
    writer = KnowledgeStore(store.store.engine)
    try:
        await writer.ingest("kb", _text(7, lines=40), name="big.md")
        await writer.ingest("kb", b"replacement words", name="f0.md")
    finally:
        await writer.close()
    task = asyncio.create_task(store.query("kb", "marker7"))
    for _ in range(steps):
        await asyncio.sleep(0)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        after = store._search._entries["kb"]
        assert after is before or after.revision != before.revision  # whole, or untouched
    assert {h.file_name for h in await store.query("kb", "marker7")} == {"big.md"}
    assert await store.query("kb", "marker0") == []
    await _same_as_a_fresh_load(store, QUERIES)
