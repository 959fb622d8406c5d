"""One database shared by the services: engine, schema, and fast transactions.

The services write their SQL once, with ``:name`` parameters, and run it through
``SqlStore.write()`` / ``SqlStore.read()`` on either backend:

* SQLite writes run inline on the event loop (``_sqlite.InlineWriter``): one
  stdlib ``sqlite3`` connection in autocommit mode, behind an asyncio lock that
  matches SQLite's single writer. Why: on a 2-core machine one aiosqlite call
  costs ~250 µs, nearly all of it the hop to aiosqlite's worker thread and back,
  while the same autocommitted INSERT on the calling thread costs ~30 µs (WAL,
  ``synchronous=NORMAL``): ~33,000 vs ~4,000-4,500 commits/s. ``write_one`` (an
  append is one guarded INSERT whose trigger moves the session revision) is a
  single inline statement; ``write`` opens ``BEGIN IMMEDIATE`` inline, which
  takes the write lock up front so a transaction that reads before it writes
  cannot be overtaken by another process, and runs its statements inline.
* When it blocks the loop: only for the statement itself (tens of µs for an
  append; longer for big payloads such as an artifact's bytes). It never waits
  for a lock inline: statements try with ``busy_timeout=0`` and, if another
  process holds the write lock, the wait (``BEGIN IMMEDIATE`` with the
  configured busy timeout) runs in a worker thread while the loop goes on.
* WAL checkpoints fsync, so the inline connection has autocheckpoint off; every
  ``_sqlite.CHECKPOINT_EVERY`` (128) commits a background thread runs
  ``wal_checkpoint(PASSIVE)`` on its own connection, first beside the writers,
  then a short second pass under the write lock so the WAL can restart (details
  in ``_sqlite``), and once more on ``close()``.
* SQLite reads run inline too, on one shared stdlib connection: in WAL mode a
  reader never waits for a writer, and measured on ``get_session`` the inline
  read took 0.3 ms instead of 0.7-1.0 ms for 20 events and ~8 ms instead of
  12-14 ms for 500 (the decoding of the rows ran on the loop anyway). A read
  that still meets ``SQLITE_BUSY`` (WAL recovery by another connection) is
  retried on an aiosqlite reader of the engine's pool, which waits in its thread.
* PostgreSQL: SQLAlchemy Core ``text()`` on pooled asyncpg connections, where
  statements are prepared and cached by SQLAlchemy.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import TextClause, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.util import greenlet_spawn

from ._sqlite import AioSqliteTx, InlineReadTx, InlineTx, InlineWriter, open_inline
from ._tx import IntegrityViolation, Params, Row, Tx
from .engine import DEFAULT_BUSY_TIMEOUT_MS, create_engine, sqlite_pragmas
from .schema import ensure_schema
from .urls import Backend, parse_database_url

__all__ = [
    "IntegrityViolation",
    "Params",
    "Row",
    "SqlStore",
    "Tx",
    "make_store",
]

_SQLITE_READERS = 2


@functools.lru_cache(maxsize=1024)
def _clause(sql: str) -> TextClause:
    return text(sql)


class _SaTx(Tx):
    backend: Backend = "postgresql"

    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params | None = None) -> int:
        try:
            result = await self._conn.execute(_clause(sql), dict(params or {}))
        except IntegrityError as exc:
            raise IntegrityViolation(str(exc.orig)) from exc
        return int(result.rowcount)

    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        if not rows:
            return
        try:
            await self._conn.execute(_clause(sql), [dict(row) for row in rows])
        except IntegrityError as exc:
            raise IntegrityViolation(str(exc.orig)) from exc

    async def fetchall(self, sql: str, params: Params | None = None) -> list[Row]:
        try:
            result = await self._conn.execute(_clause(sql), dict(params or {}))
        except IntegrityError as exc:
            raise IntegrityViolation(str(exc.orig)) from exc
        return list(result.all())


class SqlStore:
    """The engine, schema check and transaction helpers behind the services."""

    def __init__(
        self,
        db: str | URL | AsyncEngine,
        *,
        options: Mapping[str, str] | None = None,
        **engine_kwargs: Any,
    ) -> None:
        if isinstance(db, AsyncEngine):
            self.target = parse_database_url(db.url)
            self.engine = db
            self._owns_engine = False
        else:
            self.target = parse_database_url(db)
            self.engine = create_engine(self.target, **engine_kwargs)
            self._owns_engine = True
        self.options: dict[str, str] = {**self.target.options, **dict(options or {})}
        self.backend: Backend = self.target.backend
        self._ready = False
        self._ready_lock = asyncio.Lock()
        self._writer: InlineWriter | None = None
        self._sqlite_file = self.target.url.database or ""
        self._sqlite_uri = str(self.target.url.query.get("uri", "")).lower() in ("1", "true")
        self._inline_reader: sqlite3.Connection | None = None
        if self.backend == "sqlite":
            self._writer = InlineWriter(
                self._sqlite_file, uri=self._sqlite_uri, busy_timeout_ms=self._busy_timeout_ms()
            )
        self._readers: asyncio.Queue[Any] | None = None
        self._held: list[Any] = []
        self._closed = False

    @property
    def description(self) -> str:
        """The database URL with any password hidden."""
        return self.target.redacted()

    def default_blob_dir(self) -> Path:
        """Where artifact payloads go when the caller names no directory."""
        if "blob_dir" in self.options:
            return Path(self.options["blob_dir"]).expanduser()
        if self.backend == "sqlite" and self.target.url.database:
            db_path = Path(self.target.url.database).expanduser()
            return db_path.with_name(db_path.name + ".blobs")
        return Path(".yuxi") / "blobs"

    async def ready(self) -> None:
        """Creates or checks the schema once per store."""
        if self._ready:
            return
        async with self._ready_lock:
            if self._closed:
                raise RuntimeError("The SQL store has been closed.")
            if not self._ready:
                await ensure_schema(self.engine, self.backend, self.options.get("schema"))
                self._ready = True

    def _busy_timeout_ms(self) -> int:
        return int(self.options.get("busy_timeout_ms", DEFAULT_BUSY_TIMEOUT_MS))

    async def _checkout_sqlite(self) -> Any:
        fairy = await self.engine.raw_connection()
        self._held.append(fairy)
        conn: Any = fairy.driver_connection
        # The engine may be the caller's, without our connect hook.
        for pragma in sqlite_pragmas(self._busy_timeout_ms()):
            await conn.execute(pragma)
        return conn

    def _sqlite_writer(self) -> InlineWriter:
        if self._writer is None or self._closed:
            raise RuntimeError("The SQL store has been closed.")
        return self._writer

    async def write_one(self, sql: str, params: Params | None = None) -> int:
        """Runs one statement as its own transaction; returns the rows changed."""
        await self.ready()
        if self.backend != "sqlite":
            async with self.engine.begin() as sa_conn:
                return await _SaTx(sa_conn).execute(sql, params)
        writer = self._sqlite_writer()
        async with writer.lock:
            return await writer.write_one(sql, params)

    @asynccontextmanager
    async def write(self) -> AsyncIterator[Tx]:
        """A write transaction, committed on success and rolled back on error.

        On SQLite it holds the database write lock from its first statement
        (``BEGIN IMMEDIATE``); PostgreSQL callers rely on row locks and
        constraints.
        """
        await self.ready()
        if self.backend != "sqlite":
            async with self.engine.begin() as sa_conn:
                yield _SaTx(sa_conn)
            return
        writer = self._sqlite_writer()
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
        """A read-only unit of work (autocommit reads on SQLite, run inline)."""
        await self.ready()
        if self.backend != "sqlite":
            async with self.engine.connect() as sa_conn:
                yield _SaTx(sa_conn)
            return
        if self._closed:
            raise RuntimeError("The SQL store has been closed.")
        if self._inline_reader is None:
            conn = await asyncio.to_thread(
                open_inline,
                self._sqlite_file,
                uri=self._sqlite_uri,
                busy_timeout_ms=self._busy_timeout_ms(),
            )
            if self._inline_reader is None:
                self._inline_reader = conn
            else:  # another task opened one meanwhile
                conn.close()
        yield InlineReadTx(self._inline_reader, self._aiosqlite_read)

    @asynccontextmanager
    async def _aiosqlite_read(self) -> AsyncIterator[Tx]:
        """An aiosqlite reader: the fallback for an inline read that met a lock."""
        if self._readers is None:
            self._readers = asyncio.Queue()
            for _ in range(_SQLITE_READERS):
                self._readers.put_nowait(None)
        conn = await self._readers.get()
        try:
            if conn is None:
                conn = await self._checkout_sqlite()
            yield AioSqliteTx(conn)
        finally:
            self._readers.put_nowait(conn)

    async def close(self) -> None:
        """Returns held connections and disposes the engine if the store made it."""
        if self._closed:
            return
        self._closed = True
        held, self._held = self._held, []
        reader, self._inline_reader = self._inline_reader, None
        if reader is not None:
            await asyncio.to_thread(reader.close)
        if self._writer is not None:
            await self._writer.close()
        for fairy in held:
            await greenlet_spawn(fairy.close)
        self._readers = None
        if self._owns_engine:
            await self.engine.dispose()


def make_store(
    db: str | URL | AsyncEngine | SqlStore, **engine_kwargs: Any
) -> tuple[SqlStore, bool]:
    """Returns a store for the argument and whether the caller owns it."""
    if isinstance(db, SqlStore):
        return db, False
    return SqlStore(db, **engine_kwargs), True
