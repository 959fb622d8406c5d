"""A cancelled ingest (Ctrl-C in `yuxi kb ingest`) keeps the previous version: the
cancellation lands inside the write transaction, which rolls back, on SQLite and
PostgreSQL alike, and the base is free for the next ingest at once."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from adk_yuxi.knowledge import KnowledgeStore

from .conftest import Platform

OLD = "\n".join(f"old line {i}" for i in range(50))
NEW = "\n".join(f"new line {i} with some words to index" for i in range(20_000))


class CancelWhileIndexing:
    """Cancels the ingest task once chunks are being written (inside the transaction)."""

    def __init__(self) -> None:
        self.task: asyncio.Task[object] | None = None
        self.cancelled_at = ""

    def stage(self, name: str, total: int) -> None:
        if name == "indexing chunks" and self.task is not None:
            self.cancelled_at = name
            self.task.cancel()

    def advance(self, amount: int) -> None:
        return None

    def done(self) -> None:
        return None


async def test_a_cancelled_ingest_keeps_the_previous_version(platform: Platform) -> None:
    store: KnowledgeStore = platform.store
    await store.create_kb("Docs", creator_id="admin", kb_id="docs")
    before = await store.ingest("docs", OLD.encode(), name="notes.txt")
    progress = CancelWhileIndexing()
    task = asyncio.create_task(
        store.ingest("docs", NEW.encode(), name="notes.txt", progress=progress)
    )
    progress.task = task
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 60)
    assert progress.cancelled_at == "indexing chunks"
    [kept] = await store.list_files("docs")
    assert (kept.file_id, kept.version, kept.sha256) == (before.file_id, 1, before.sha256)
    _, text = await store.read_text("docs", kept.file_id)
    assert text.startswith("old line 0")
    # The base is not left locked: the next ingest goes through at once.
    again = await asyncio.wait_for(store.ingest("docs", NEW.encode(), name="notes.txt"), 60)
    assert again.version == 2


@pytest.mark.slow
def test_yuxi_kb_ingest_reports_each_file_and_goes_on_or_stops(tmp_path: Path) -> None:
    from tests.e2e._cli import yuxi_here

    def yuxi(*args: str) -> subprocess.CompletedProcess[str]:
        return yuxi_here(list(args), cwd=tmp_path)

    (tmp_path / "a.txt").write_text("first file")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 broken")
    (tmp_path / "c.txt").write_text("third file")
    db = str(tmp_path / "kb.db")
    assert yuxi("access", "user", "add", "root", "--db", db).returncode == 0
    assert yuxi("kb", "create", "Docs", "--id", "d", "--public", "--owner", "root",
                "--db", db).returncode == 0  # fmt: skip
    both = yuxi("kb", "ingest", "d", "a.txt", "broken.pdf", "c.txt", "--db", db)
    assert both.returncode == 1
    assert [line.split("\t")[1] for line in both.stdout.splitlines()] == ["a.txt", "c.txt"]
    assert "failed\tbroken.pdf" in both.stderr
    (tmp_path / "a.txt").write_text("first file, second version")
    (tmp_path / "c.txt").write_text("third file, second version")
    stopped = yuxi("kb", "ingest", "d", "a.txt", "broken.pdf", "c.txt", "--stop-on-error",
                   "--db", db)  # fmt: skip
    assert stopped.returncode == 1
    assert [line.split("\t")[1:3] for line in stopped.stdout.splitlines()] == [["a.txt", "v2"]]
    listed = yuxi("kb", "list", "d", "--db", db).stdout
    assert "c.txt" in listed  # still its first version: never tried


@pytest.mark.parametrize("delay", [0.05, 0.2, 0.5])
async def test_a_cancellation_at_any_moment_keeps_the_previous_version(
    platform: Platform, delay: float
) -> None:
    """Cancelled after `delay` seconds, wherever the ingest is then (converting, in a
    batch of chunks, between batches): the old version stays and the base is free."""
    store: KnowledgeStore = platform.store
    await store.create_kb("Docs", creator_id="admin", kb_id="docs")
    before = await store.ingest("docs", OLD.encode(), name="notes.txt")
    task = asyncio.create_task(store.ingest("docs", NEW.encode(), name="notes.txt"))
    await asyncio.sleep(delay)
    task.cancel()
    try:
        await asyncio.wait_for(task, 30)  # never hangs on a cancelled statement
    except asyncio.CancelledError:
        [kept] = await store.list_files("docs")
        assert (kept.version, kept.sha256) == (1, before.sha256)
    else:  # finished before the cancellation: then it is wholly there
        [kept] = await store.list_files("docs")
        assert kept.version == 2
    again = await asyncio.wait_for(store.ingest("docs", NEW.encode(), name="notes.txt",
                                                replace_unchanged=True), 60)  # fmt: skip
    assert again.version == kept.version + 1
