"""The inline SQLite writer: it waits for a busy lock off the loop, survives
cancellation and keeps the WAL bounded with its own checkpoints.

Another connection holding ``BEGIN IMMEDIATE`` stands in for another process:
SQLite arbitrates connections of one process with the same locks.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from google.adk.events.event import Event
from google.genai import types
from sqlalchemy.ext.asyncio import create_async_engine

from adk_yuxi._sql import _sqlite
from adk_yuxi._sql._sqlite_tx import InlineReadTx
from adk_yuxi._sql.store import IntegrityViolation, SqlStore
from adk_yuxi.sessions import SqlSessionService

APP = "chat"


def text_event(text: str) -> Event:
    return Event(
        author="user",
        invocation_id="inv-1",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )


def hold_write_lock(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    conn.execute("BEGIN IMMEDIATE")
    return conn


def lock_is_free(db: Path) -> bool:
    """Whether a fresh connection gets the write lock within two seconds."""
    conn = sqlite3.connect(db, isolation_level=None, timeout=2)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


def file_size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def writer_in_transaction(store: SqlStore) -> bool:
    writer = store._backend.writer
    assert writer is not None and writer._conn is not None
    return writer._conn.in_transaction


async def texts(sessions: SqlSessionService) -> list[str]:
    loaded = await sessions.get_session(app_name=APP, user_id="u", session_id="s")
    assert loaded is not None
    return [e.content.parts[0].text or "" for e in loaded.events if e.content and e.content.parts]


async def test_contended_append_waits_off_the_loop(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    async with SqlSessionService(f"sqlite+aiosqlite:///{db}") as sessions:
        session = await sessions.create_session(app_name=APP, user_id="u", session_id="s")
        other = hold_write_lock(db)
        append = asyncio.create_task(sessions.append_event(session, text_event("late")))
        ticks_while_waiting = 0
        for _ in range(30):  # ~300 ms; each tick needs the loop to be free
            await asyncio.sleep(0.01)
            if not append.done():
                ticks_while_waiting += 1
        assert not append.done(), "the append must wait for the other writer"
        assert ticks_while_waiting == 30
        other.execute("COMMIT")
        other.close()
        await asyncio.wait_for(append, 10)
        assert await texts(sessions) == ["late"]
        assert not writer_in_transaction(sessions._store)


async def test_cancelled_contended_append_commits_nothing(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    async with SqlSessionService(f"sqlite+aiosqlite:///{db}") as sessions:
        session = await sessions.create_session(app_name=APP, user_id="u", session_id="s")
        other = hold_write_lock(db)
        append = asyncio.create_task(sessions.append_event(session, text_event("cancelled")))
        await asyncio.sleep(0.1)
        assert not append.done()
        append.cancel()
        with pytest.raises(asyncio.CancelledError):
            await append
        other.execute("COMMIT")  # the abandoned wait now wins the lock...
        other.close()
        # ...and gives it back on its own, before anyone uses the store again.
        assert await asyncio.to_thread(lock_is_free, db)
        # The same session object still matches the stored revision: nothing was
        # appended by the cancelled call, and the store writes normally.
        await sessions.append_event(session, text_event("next"))
        assert await texts(sessions) == ["next"]
        assert not writer_in_transaction(sessions._store)
        assert await asyncio.to_thread(lock_is_free, db)


async def test_cancelled_contended_transaction_leaves_store_usable(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    store = SqlStore(f"sqlite+aiosqlite:///{db}")
    try:
        await store.write_one("CREATE TABLE t (x INTEGER PRIMARY KEY)")
        other = hold_write_lock(db)
        entered: list[int] = []

        async def transaction() -> None:
            async with store.write() as tx:
                entered.append(1)
                await tx.execute("INSERT INTO t VALUES (1)")

        task = asyncio.create_task(transaction())
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # A writer queued behind the cancelled one waits for its rollback.
        follower = asyncio.create_task(store.write_one("INSERT INTO t VALUES (2)"))
        await asyncio.sleep(0.1)
        assert not follower.done()
        other.execute("COMMIT")
        other.close()
        assert await asyncio.wait_for(follower, 10) == 1
        assert entered == []
        async with store.read() as tx:
            assert await tx.fetchall("SELECT x FROM t") == [(2,)]
        assert not writer_in_transaction(store)
        assert await asyncio.to_thread(lock_is_free, db)
    finally:
        await store.close()


async def test_errors_roll_back_and_keep_their_types(tmp_path: Path) -> None:
    store = SqlStore(f"sqlite+aiosqlite:///{tmp_path / 'app.db'}")
    try:
        await store.write_one("CREATE TABLE t (x INTEGER PRIMARY KEY)")
        assert await store.write_one("INSERT INTO t VALUES (1)") == 1
        with pytest.raises(IntegrityViolation):
            await store.write_one("INSERT INTO t VALUES (1)")
        with pytest.raises(RuntimeError, match="boom"):
            async with store.write() as tx:
                await tx.executemany("INSERT INTO t VALUES (:x)", [{"x": 2}, {"x": 3}])
                assert await tx.fetchone("SELECT count(*) FROM t") == (3,)
                raise RuntimeError("boom")
        assert not writer_in_transaction(store)
        with pytest.raises(sqlite3.OperationalError):
            async with store.write() as tx:
                await tx.execute("INSERT INTO missing VALUES (1)")
        async with store.write() as tx:
            assert await tx.execute("UPDATE t SET x = x + 10") == 1
        async with store.read() as tx:
            assert await tx.fetchall("SELECT x FROM t") == [(11,)]
    finally:
        await store.close()


@pytest.mark.parametrize("yields", [True, False], ids=["yielding", "tight-loop"])
async def test_wal_stays_bounded_over_many_appends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, yields: bool
) -> None:
    monkeypatch.setattr(_sqlite, "CHECKPOINT_EVERY", 32)
    db = tmp_path / "app.db"
    wal = Path(f"{db}-wal")
    largest = 0
    async with SqlSessionService(f"sqlite+aiosqlite:///{db}") as sessions:
        session = await sessions.create_session(app_name=APP, user_id="u", session_id="s")
        for i in range(2000):
            await sessions.append_event(session, text_event(f"event {i} " + "x" * 300))
            if yields:
                await asyncio.sleep(0)  # what a real caller does between appends
            if i % 50 == 0:
                largest = max(largest, file_size(wal))
    # Each append writes about five 4 KiB pages: without checkpoints these 2000
    # appends leave a ~44 MB WAL. Checkpointed every 32 commits (or, when the loop
    # never yields, by the writer itself after 4 x 32), it restarts and stays small.
    assert 0 < largest < 8_000_000, largest


async def test_caller_engine_gets_our_pragmas_on_the_writer(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    engine = create_async_engine(f"sqlite+aiosqlite:///{db}")
    store = SqlStore(engine)
    try:
        await store.write_one("CREATE TABLE t (x INTEGER)")
        await store.write_one("INSERT INTO t VALUES (1)")
        writer = store._backend.writer
        assert writer is not None and writer._conn is not None
        conn = writer._conn
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
        async with store.read() as tx:
            assert await tx.fetchall("SELECT x FROM t") == [(1,)]
    finally:
        await store.close()
        await engine.dispose()


class _BusyConnection(sqlite3.Connection):
    """Answers every statement the way SQLite does during another's WAL recovery."""

    def execute(self, *args: Any, **kwargs: Any) -> sqlite3.Cursor:
        raise sqlite3.OperationalError("database is locked")


async def test_busy_inline_read_falls_back_to_aiosqlite(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    store = SqlStore(f"sqlite+aiosqlite:///{db}")
    busy = sqlite3.connect(db, factory=_BusyConnection)
    try:
        await store.write_one("CREATE TABLE t (x INTEGER)")
        await store.write_one("INSERT INTO t VALUES (1)")
        tx = InlineReadTx(busy, store._backend.aiosqlite_read)
        assert await tx.fetchall("SELECT x FROM t") == [(1,)]
        assert await tx.fetchone("SELECT count(*) FROM t") == (1,)
        with pytest.raises(sqlite3.OperationalError, match="no such table"):
            await tx.fetchall("SELECT * FROM missing")  # the fallback's own error
    finally:
        busy.close()
        await store.close()
