"""SQLite behind ``SqlStore``: inline writer and reader, aiosqlite as the fallback.

Why inline (numbers and the design: ``docs/design/sqlite-writer.md``):
a hop to aiosqlite's worker thread costs several times the statement itself, so
writes run on the loop's thread on one stdlib connection behind an asyncio lock
(SQLite has one writer anyway), and reads on a second shared connection. Neither
ever waits for a lock on the loop: see ``_sqlite`` for how waits move to a
thread.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.util import greenlet_spawn

from ._backend import StoreBackend
from ._sqlite import InlineWriter, open_inline
from ._sqlite_tx import AioSqliteTx, InlineReadTx, InlineTx
from ._tx import Params, Tx
from .engine import sqlite_pragmas
from .urls import Backend, DatabaseTarget

_AIOSQLITE_READERS = 2


class SqliteBackend(StoreBackend):
    """One SQLite database file."""

    name: Backend = "sqlite"

    def __init__(self, target: DatabaseTarget, engine: AsyncEngine) -> None:
        super().__init__(target, engine)
        self.file = target.url.database or ""
        self._uri = str(target.url.query.get("uri", "")).lower() in ("1", "true")
        self._busy_timeout_ms = int(target.options["busy_timeout_ms"])
        self.writer = InlineWriter(self.file, uri=self._uri, busy_timeout_ms=self._busy_timeout_ms)
        self._inline_reader: sqlite3.Connection | None = None
        self._readers: asyncio.Queue[Any] | None = None
        self._held: list[Any] = []

    async def write_one(self, sql: str, params: Params | None) -> int:
        async with self.writer.lock:
            return await self.writer.write_one(sql, params)

    @asynccontextmanager
    async def write(self) -> AsyncIterator[Tx]:
        """Holds the write lock from the start (``BEGIN IMMEDIATE``), so a
        transaction that reads before it writes is never overtaken."""
        writer = self.writer
        async with writer.lock:
            conn = await writer.begin()
            try:
                yield InlineTx(conn)
                await writer.commit()
            except BaseException:
                writer.rollback()
                raise

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Tx]:
        if self._inline_reader is None:
            conn = await asyncio.to_thread(
                open_inline, self.file, uri=self._uri, busy_timeout_ms=self._busy_timeout_ms
            )
            if self._inline_reader is None:
                self._inline_reader = conn
            else:  # another task opened one meanwhile
                conn.close()
        yield InlineReadTx(self._inline_reader, self.aiosqlite_read)

    @asynccontextmanager
    async def aiosqlite_read(self) -> AsyncIterator[Tx]:
        """An aiosqlite reader: the fallback for an inline read that met a lock."""
        if self._readers is None:
            self._readers = asyncio.Queue()
            for _ in range(_AIOSQLITE_READERS):
                self._readers.put_nowait(None)
        conn = await self._readers.get()
        try:
            if conn is None:
                conn = await self._checkout()
            yield AioSqliteTx(conn)
        finally:
            self._readers.put_nowait(conn)

    async def _checkout(self) -> Any:
        fairy = await self.engine.raw_connection()
        self._held.append(fairy)
        conn: Any = fairy.driver_connection
        # The engine may be the caller's, without our connect hook.
        for pragma in sqlite_pragmas(self._busy_timeout_ms):
            await conn.execute(pragma)
        return conn

    async def lock_schema(self, conn: AsyncConnection) -> None:
        # DDL is transactional in SQLite; IMMEDIATE takes the write lock up front
        # so a second process waits here instead of racing the creation.
        await conn.exec_driver_sql("BEGIN IMMEDIATE")

    def default_blob_dir(self) -> Path:
        db_path = Path(self.file).expanduser()
        return db_path.with_name(db_path.name + ".blobs")

    async def close(self) -> None:
        if self.writer.loop not in (None, asyncio.get_running_loop()):
            # Its checkpoint task, lock and rollback futures belong to another
            # loop (maybe closed): nothing of them can be awaited here.
            self.abandon()
            return
        held, self._held = self._held, []
        reader, self._inline_reader = self._inline_reader, None
        self._readers = None
        try:
            if reader is not None:
                await asyncio.to_thread(reader.close)
            await self.writer.close()
        finally:
            for fairy in held:
                await greenlet_spawn(fairy.close)

    async def flush(self) -> None:
        await self.writer.flush()

    def abandon(self) -> None:
        reader, self._inline_reader = self._inline_reader, None
        if reader is not None:
            reader.close()
        self._held = []  # their connections belong to the engine's pool, disposed next
        self._readers = None
        self.writer.abandon()
