"""One database shared by the services: engine, schema, and fast transactions.

The services write their SQL once, with ``:name`` parameters, and run it through
``SqlStore.write()`` / ``SqlStore.read()`` on either backend:

* SQLite: statements go straight to the aiosqlite connection under the
  SQLAlchemy adapter, held for the store's lifetime (one writer connection behind
  an asyncio lock, which matches SQLite's single writer, plus a few readers).
  Every call to aiosqlite is a hop to its worker thread, and SQLAlchemy's adapter
  spends three or four hops per statement; going direct keeps an append at two
  hops. The writer runs in autocommit mode: ``write_one`` is a single statement
  that is its own transaction (one hop; an append is one guarded INSERT whose
  trigger updates the session), and ``write`` opens ``BEGIN IMMEDIATE``, which
  takes the write lock up front so ``busy_timeout`` applies and a transaction
  that reads before it writes cannot be overtaken by another process.
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

from .engine import DEFAULT_BUSY_TIMEOUT_MS, create_engine, sqlite_pragmas
from .schema import ensure_schema
from .urls import Backend, parse_database_url

Params = Mapping[str, Any]
Row = Sequence[Any]

_SQLITE_READERS = 2


class IntegrityViolation(Exception):
    """A unique or foreign-key constraint rejected a statement (either backend)."""


@functools.lru_cache(maxsize=1024)
def _clause(sql: str) -> TextClause:
    return text(sql)


class Tx:
    """One open transaction; the same SQL text runs on both backends."""

    backend: Backend

    async def execute(self, sql: str, params: Params | None = None) -> int:
        """Runs a statement and returns the number of rows it changed."""
        raise NotImplementedError

    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        """Runs a statement once per parameter set."""
        raise NotImplementedError

    async def fetchall(self, sql: str, params: Params | None = None) -> list[Row]:
        """Runs a query and returns all its rows."""
        raise NotImplementedError

    async def fetchone(self, sql: str, params: Params | None = None) -> Row | None:
        """Runs a query and returns its first row, if any."""
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None


class _SqliteTx(Tx):
    backend: Backend = "sqlite"

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params | None = None) -> int:
        try:
            cursor = await self._conn.execute(sql, params or {})
        except sqlite3.IntegrityError as exc:
            raise IntegrityViolation(str(exc)) from exc
        return int(cursor.rowcount)

    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        try:
            await self._conn.executemany(sql, rows)
        except sqlite3.IntegrityError as exc:
            raise IntegrityViolation(str(exc)) from exc

    async def fetchall(self, sql: str, params: Params | None = None) -> list[Row]:
        try:
            return list(await self._conn.execute_fetchall(sql, params or {}))
        except sqlite3.IntegrityError as exc:
            raise IntegrityViolation(str(exc)) from exc


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
        self._write_lock = asyncio.Lock()
        self._writer: Any = None
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

    async def _checkout_sqlite(self) -> Any:
        fairy = await self.engine.raw_connection()
        self._held.append(fairy)
        conn: Any = fairy.driver_connection
        timeout = int(self.options.get("busy_timeout_ms", DEFAULT_BUSY_TIMEOUT_MS))
        # The engine may be the caller's, without our connect hook.
        for pragma in sqlite_pragmas(timeout):
            await conn.execute(pragma)
        return conn

    async def _sqlite_writer(self) -> Any:
        if self._writer is None:
            conn = await self._checkout_sqlite()
            conn.isolation_level = None  # autocommit; transactions are explicit
            self._writer = conn
        return self._writer

    async def write_one(self, sql: str, params: Params | None = None) -> int:
        """Runs one statement as its own transaction; returns the rows changed."""
        await self.ready()
        if self.backend != "sqlite":
            async with self.engine.begin() as sa_conn:
                return await _SaTx(sa_conn).execute(sql, params)
        async with self._write_lock:
            return await _SqliteTx(await self._sqlite_writer()).execute(sql, params)

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
        async with self._write_lock:
            conn = await self._sqlite_writer()
            await conn.execute("BEGIN IMMEDIATE")
            try:
                yield _SqliteTx(conn)
            except BaseException:
                if conn.in_transaction:
                    await conn.rollback()
                raise
            if conn.in_transaction:
                await conn.commit()

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Tx]:
        """A read-only unit of work (autocommit reads on SQLite)."""
        await self.ready()
        if self.backend != "sqlite":
            async with self.engine.connect() as sa_conn:
                yield _SaTx(sa_conn)
            return
        if self._readers is None:
            self._readers = asyncio.Queue()
            for _ in range(_SQLITE_READERS):
                self._readers.put_nowait(None)
        conn = await self._readers.get()
        try:
            if conn is None:
                conn = await self._checkout_sqlite()
            yield _SqliteTx(conn)
        finally:
            self._readers.put_nowait(conn)

    async def close(self) -> None:
        """Returns held connections and disposes the engine if the store made it."""
        if self._closed:
            return
        self._closed = True
        held, self._held = self._held, []
        if self._writer is not None:
            self._writer.isolation_level = ""  # back to the driver default for the pool
        for fairy in held:
            await greenlet_spawn(fairy.close)
        self._writer = None
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
