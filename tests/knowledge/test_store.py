"""The knowledge store on real SQLite and PostgreSQL: ingestion, search, replacement."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from adk_yuxi.access import ResourceKind, Scope, ShareConfig
from adk_yuxi.documents import CorruptDocumentError, DocumentTooLargeError
from adk_yuxi.knowledge import (
    InvalidKnowledgeRequestError,
    KnowledgeConfigError,
    KnowledgeStore,
    TerminalProgress,
    UnknownFileError,
    UnknownKnowledgeBaseError,
    chunk_lines,
)
from tests.documents.files import docx_bytes, pdf_bytes

from .conftest import Platform

GUIDE = """# 部署指南

本文介绍如何配置数据库连接池。连接池的大小应当与 CPU 核数相匹配。

## Backups

Nightly backups run at 02:00 UTC and are kept for thirty days.
Restore a backup with the `restore` command.

## 监控

监控面板显示请求延迟和错误率。告警阈值可以在设置中调整。
"""


async def test_create_ingest_and_query_both_languages(platform: Platform) -> None:
    store = platform.store
    kb = await store.create_kb("Ops handbook", creator_id="admin", kb_id="ops")
    record = await platform.access.get_resource(ResourceKind.KNOWLEDGE_BASE, "ops")
    assert record.creator_id == "admin" and record.share == ShareConfig.private()
    file = await store.ingest(kb.kb_id, GUIDE.encode(), name="guide.md")
    assert file.total_lines == len(GUIDE.strip().splitlines()) and file.version == 1

    hits = await store.query("ops", "数据库连接池", top_k=3)
    assert hits and "连接池" in hits[0].content
    assert hits[0].file_id == file.file_id and hits[0].start_line <= 3 <= hits[0].end_line

    english = await store.query("ops", "how long are backups kept", top_k=3)
    assert english and "thirty days" in english[0].content
    _, text = await store.read_text("ops", file.file_id)
    lines = text.split("\n")
    hit = english[0]
    assert "thirty days" in "\n".join(lines[hit.start_line - 1 : hit.end_line])
    assert await store.query("ops", "kubernetes", top_k=3) == []


async def test_reingest_replaces_chunks_atomically(platform: Platform) -> None:
    store = platform.store
    await store.create_kb("Docs", creator_id="admin", kb_id="docs")
    first = await store.ingest("docs", b"The old answer is apples.", name="faq.txt")
    same = await store.ingest("docs", b"The old answer is apples.", name="faq.txt")
    assert same == first  # unchanged bytes: nothing rewritten
    second = await store.ingest("docs", b"The new answer is pears.", name="faq.txt")
    assert second.file_id == first.file_id and second.version == 2
    assert await store.query("docs", "apples") == []
    assert [h.content for h in await store.query("docs", "pears")] == ["The new answer is pears."]

    # A failed conversion leaves the previous version in place.
    with pytest.raises(CorruptDocumentError):
        await store.ingest("docs", b"%PDF-1.4 broken", name="faq.txt")
    assert (await store.get_file("docs", first.file_id)).version == 2
    assert len(await store.query("docs", "pears")) == 1


async def test_cancelled_ingest_leaves_nothing_half_written(sqlite_platform: Platform) -> None:
    store = sqlite_platform.store
    await store.create_kb("Docs", creator_id="admin", kb_id="docs")
    await store.ingest("docs", b"version one about tea", name="a.txt")

    class CancelWhileIndexing(TerminalProgress):
        def advance(self, amount: int) -> None:
            super().advance(amount)
            if self._stage == "indexing chunks":
                raise asyncio.CancelledError

    big = "\n\n".join(f"paragraph {i} about coffee and more words" * 12 for i in range(2000))
    with pytest.raises(asyncio.CancelledError):
        await store.ingest(
            "docs",
            big.encode(),
            name="a.txt",
            progress=CancelWhileIndexing("a.txt", io.StringIO()),
        )
    assert await store.query("docs", "coffee") == []
    assert len(await store.query("docs", "tea")) == 1
    assert (await store.list_files("docs"))[0].version == 1


async def test_each_format_is_ingested(platform: Platform, tmp_path: Path) -> None:
    store = platform.store
    await store.create_kb("Formats", creator_id="admin", kb_id="fmt")
    html = "<html><body><h1>Lighthouse</h1><p>The keeper lights the lamp.</p></body></html>"
    inputs = {
        "a.html": html.encode(),
        "b.pdf": pdf_bytes(["The harbour closes at dusk."]),
        "c.docx": docx_bytes(["Ferries leave every hour."], "Timetable"),
        "d.md": "# 港口\n\n渡轮每小时出发一班。".encode(),
    }
    for name, data in inputs.items():
        (tmp_path / name).write_bytes(data)
        await store.ingest("fmt", tmp_path / name)
    for query, name in [
        ("keeper lamp", "a.html"),
        ("harbour dusk", "b.pdf"),
        ("ferries hour", "c.docx"),
        ("渡轮出发", "d.md"),
    ]:
        hits = await store.query("fmt", query, top_k=1)
        assert hits and hits[0].file_name == name, query


async def test_query_is_scoped_to_the_base_and_file(platform: Platform) -> None:
    store = platform.store
    await store.create_kb("One", creator_id="admin", kb_id="one")
    await store.create_kb("Two", creator_id="admin", kb_id="two")
    a = await store.ingest("one", b"shared word zebra in one", name="a.txt")
    await store.ingest("one", b"zebra again, second file", name="b.txt")
    await store.ingest("two", b"zebra lives in two", name="c.txt")
    assert {h.kb_id for h in await store.query("one", "zebra")} == {"one"}
    assert [h.file_id for h in await store.query("one", "zebra", file_id=a.file_id)] == [a.file_id]
    files, total = await store.search_files(["one", "two"], "A.TXT", offset=0, limit=10)
    assert total == 1 and files[0].name == "a.txt"
    files, total = await store.search_files(["one", "two"], None, offset=1, limit=1)
    assert total == 3 and [f.name for f in files] == ["b.txt"]
    files, total = await store.search_files(["one"], "%", offset=0, limit=10)
    assert total == 0


async def test_bad_input_changes_nothing(platform: Platform) -> None:
    store = platform.store
    with pytest.raises(InvalidKnowledgeRequestError):
        await store.create_kb("x", creator_id="admin", kb_id="has space")
    with pytest.raises(InvalidKnowledgeRequestError):
        await store.create_kb("x", creator_id="admin", kb_id="kb\x00")
    with pytest.raises(Exception, match="not a known user"):
        await store.create_kb("x", creator_id="ghost", kb_id="ghost_kb")
    assert await store.list_kbs() == []
    assert await platform.access.list_resources(ResourceKind.KNOWLEDGE_BASE) == []
    await store.create_kb("Docs", creator_id="admin", kb_id="docs")
    with pytest.raises(InvalidKnowledgeRequestError):
        await store.create_kb("Docs", creator_id="admin", kb_id="docs2")
    with pytest.raises(UnknownKnowledgeBaseError):
        await store.ingest("nope", b"text", name="a.txt")
    with pytest.raises(InvalidKnowledgeRequestError):
        await store.ingest("docs", b"text", name="../etc/passwd")
    with pytest.raises(UnknownFileError):
        await store.delete_file("docs", "f_missing")
    assert await store.list_files("docs") == []


async def test_share_and_delete(platform: Platform) -> None:
    store = platform.store
    share = ShareConfig(read_scope=Scope.departments("eng"), manage_scope=Scope.users())
    await store.create_kb("Eng", creator_id="admin", kb_id="eng", share=share)
    _, readable = await platform.access.readable_among(
        "alice", ResourceKind.KNOWLEDGE_BASE, ["eng"]
    )
    assert readable == {"eng"}
    _, readable = await platform.access.readable_among("bob", ResourceKind.KNOWLEDGE_BASE, ["eng"])
    assert readable == frozenset()
    await store.ingest("eng", b"some text", name="a.txt")
    await store.delete_kb("eng")
    assert await store.list_kbs() == [] and await store.query("eng", "text") == []
    with pytest.raises(Exception, match="knowledge_base"):
        await platform.access.get_resource(ResourceKind.KNOWLEDGE_BASE, "eng")


async def test_oversize_file_is_refused(tmp_path: Path, platform: Platform) -> None:
    small = KnowledgeStore(platform.store.store, max_file_bytes=100)
    await small.create_kb("Docs", creator_id="admin", kb_id="docs")
    with pytest.raises(DocumentTooLargeError):
        await small.ingest("docs", b"x" * 200, name="big.txt")


def test_progress_prints_plain_lines_off_a_terminal() -> None:
    out = io.StringIO()
    progress = TerminalProgress("big.md", out)
    progress.stage("indexing chunks", 20)
    for _ in range(20):
        progress.advance(1)
    progress.done()
    lines = out.getvalue().splitlines()
    assert lines[0] == "big.md: indexing chunks (0/20)"
    assert lines[-1] == "big.md: indexing chunks done (20/20)" and len(lines) > 5


def test_chunks_keep_line_numbers() -> None:
    lines = ["# Title", "", *(f"line {i} " + "word " * 30 for i in range(40)), "x" * 4000]
    chunks = chunk_lines(lines, target=500)
    assert chunks[0].start_line == 1
    for chunk in chunks[:-8]:
        expected = "\n".join(lines[chunk.start_line - 1 : chunk.end_line]).strip()
        assert chunk.content == expected
    assert all(c.start_line == c.end_line == len(lines) for c in chunks[-8:])


@pytest.mark.parametrize(
    "option", [{"index_cache_bytes": -1}, {"index_cache_bytes": "2GB"}, {"max_file_bytes": 0},
               {"max_file_bytes": 1.5}, {"index_cache_bytes": True}],
)  # fmt: skip
def test_unusable_byte_options_are_refused_by_name(
    option: dict[str, object], tmp_path: Path
) -> None:
    with pytest.raises(KnowledgeConfigError, match=next(iter(option))):
        KnowledgeStore(f"sqlite+aiosqlite:///{tmp_path / 'kb.db'}", **option)
    assert not (tmp_path / "kb.db").exists()


def test_a_chinese_section_is_a_chunk_of_its_own() -> None:
    """A CJK character counts as about a word: four sections of 170 characters were one
    500-character chunk (every topic in one vector), now each is its own."""
    lines = [line for n in range(4) for line in (f"## 第{n}节", "", "运" * 170, "")]
    chunks = chunk_lines(lines, target=500)
    assert [c.content.split("\n")[0] for c in chunks] == [f"## 第{n}节" for n in range(4)]
    long_line = chunk_lines(["字" * 1000], target=500)
    assert len(long_line) >= 6 and all(len(c.content) <= 170 for c in long_line)
    assert len(chunk_lines(["word " * 60] * 4, target=500)) == 1  # English unchanged
