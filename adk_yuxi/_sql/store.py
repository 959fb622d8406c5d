"""One database shared by the services: engine, schema, and transactions.

The services write their SQL once, with ``:name`` parameters, and run it through
``SqlStore.write()`` / ``SqlStore.read()`` / ``SqlStore.write_one()``. How those
reach the database is the business of one backend object per database kind
(``_sqlite_backend.SqliteBackend``, ``_pg_backend.PostgresBackend``); driver
errors become ours in one place (``_errormap``); schema creation and migration
run through ``migrations`` under the backend's schema lock.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from .._extras import require_extra
from ..observability._metrics import PoolState, track_pool
from ._backend import StoreBackend
from ._sqlite_backend import SqliteBackend
from ._tx import IntegrityViolation, Params, Row, Tx
from .engine import create_engine
from .errors import DatabaseUnavailableError, StoreClosedError
from .migrations import SchemaPart, apply_parts, schema_generation, schema_parts
from .schema import PLATFORM
from .urls import Backend, DatabaseTarget, parse_database_url, with_options

__all__ = [
    "IntegrityViolation",
    "Params",
    "Row",
    "SqlStore",
    "Tx",
    "make_store",
]


def _sqlite() -> type[StoreBackend]:
    return SqliteBackend


def _postgres() -> type[StoreBackend]:
    """Loaded on first use: asyncpg comes with the `postgres` extra."""
    require_extra("asyncpg", "postgres", "A PostgreSQL database")
    from ._pg_backend import PostgresBackend

    return PostgresBackend


_BACKENDS: dict[Backend, Callable[[], type[StoreBackend]]] = {
    "sqlite": _sqlite,
    "postgresql": _postgres,
}


class SqlStore:
    """The engine, schema and transaction helpers behind the services."""

    def __init__(
        self,
        db: str | URL | AsyncEngine,
        *,
        options: Mapping[str, str] | None = None,
        **engine_kwargs: Any,
    ) -> None:
        if isinstance(db, AsyncEngine):
            target = with_options(parse_database_url(db.url), options)
            backend = _BACKENDS[target.backend]()
            self.engine = db
            self._owns_engine = False
        else:
            target = with_options(parse_database_url(db), options)
            backend = _BACKENDS[target.backend]()
            self.engine = create_engine(target, **engine_kwargs)
            self._owns_engine = True
        self.target: DatabaseTarget = target
        self.options: dict[str, str] = dict(target.options)
        self.backend: Backend = target.backend
        self._backend = backend(target, self.engine)
        self._applied: tuple[SchemaPart, ...] = ()
        self._background: set[asyncio.Task[None]] = set()
        self._ready_lock = asyncio.Lock()
        self._closed = False
        track_pool(self)

    @property
    def description(self) -> str:
        """The database URL with any password hidden, paths as the caller wrote them."""
        return self.target.redacted()

    def pool_state(self) -> PoolState:
        """Its connections as of now, for the metrics (`db.client.connection.*`)."""
        return self._backend.pool_state()

    def default_blob_dir(self) -> Path:
        """Where artifact payloads go when the caller names no directory."""
        if "blob_dir" in self.options:
            return Path(self.options["blob_dir"]).expanduser()
        return self._backend.default_blob_dir()

    async def ready(self) -> None:
        """Creates or migrates the schema: every registered part, once per store.

        A part registered after this store got ready is applied at the next call.
        """
        if len(self._applied) == schema_generation() and not self._closed:
            return  # the hot path: every statement passes here
        self._check_open()
        parts = schema_parts()
        if parts == self._applied:
            return
        async with self._ready_lock:
            self._check_open()
            parts = schema_parts()
            if parts == self._applied:
                return
            await self.migrate((PLATFORM, *(part for part in parts if part is not PLATFORM)))
            self._applied = parts

    async def migrate(self, parts: Sequence[SchemaPart]) -> None:
        """Applies the pending steps of ``parts`` in one transaction under the schema lock."""
        self._check_open()
        async with contextlib.AsyncExitStack() as stack:
            try:
                conn = await stack.enter_async_context(self.engine.connect())
            except Exception as exc:  # refused, unknown host, bad password, no such file
                raise DatabaseUnavailableError(
                    f"Cannot open the database {self.description}: {_cause(exc)}"
                ) from exc
            await self._backend.lock_schema(conn)
            await apply_parts(conn, self.backend, parts)
            await conn.commit()

    async def warm(self) -> int:
        """Creates or checks the schema, then opens the connections a busy server
        wants (PostgreSQL: the pool's size) so its first requests do not each open
        one; returns how many were opened. For a server's start, not per request."""
        await self.ready()
        return await self._backend.warm()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(f"The SQL store for {self.description} has been closed.")

    async def write_one(self, sql: str, params: Params | None = None) -> int:
        """Runs one statement as its own transaction; returns the rows changed."""
        await self.ready()
        return await self._backend.write_one(sql, params)

    def write(self) -> AbstractAsyncContextManager[Tx]:
        """A write transaction, committed on success and rolled back on error.

        On SQLite it holds the database write lock from its first statement;
        PostgreSQL callers rely on row locks and constraints.
        """
        return _ReadyUnit(self, self._backend.write)

    def read(self) -> AbstractAsyncContextManager[Tx]:
        """A read-only unit of work."""
        return _ReadyUnit(self, self._backend.read)

    async def flush(self) -> None:
        """Moves buffered database state to its final place (SQLite: empties the WAL)."""
        if not self._closed:
            await self._backend.flush()

    def in_background(self, work: Coroutine[Any, Any, None]) -> None:
        """Runs best-effort work on the store as a task that ``close()`` waits for."""
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def settle(self) -> None:
        """Waits for the background work started so far."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    async def close(self) -> None:
        """Releases connections, threads and (if the store made it) the engine.

        Background work on this loop is finished first. From any event loop: on
        a loop other than the one the store ran on, nothing can be awaited on its
        connections, so they are closed without awaiting. A closed store refuses
        further use.
        """
        if self._closed:
            return
        loop = asyncio.get_running_loop()
        pending = [task for task in self._background if task.get_loop() is loop]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        self._closed = True
        try:
            await self._backend.close()
        except RuntimeError:  # futures or locks of another event loop
            self._backend.abandon()
        finally:
            await self._dispose()

    async def _dispose(self) -> None:
        if not self._owns_engine:
            return
        try:
            await self.engine.dispose()
        except (RuntimeError, asyncio.CancelledError, OSError):
            # Pooled connections of another loop: drop them without the
            # close handshake (their sockets close with them).
            await self.engine.dispose(close=False)

    def close_now(self) -> None:
        """Closes without an event loop (at interpreter exit)."""
        if self._closed:
            return
        self._closed = True
        self._backend.abandon()
        if self._owns_engine:
            self.engine.sync_engine.dispose(close=False)


def _cause(exc: BaseException) -> str:
    """The driver's own words, without SQLAlchemy's wrapping and links."""
    cause = getattr(exc, "orig", None) or exc
    return f"{type(cause).__name__}: {cause}"


class _ReadyUnit:
    """The backend's unit of work, entered once the schema is ready (a class: this
    runs for every statement, and a generator context manager costs several times
    as much)."""

    __slots__ = ("_open", "_store", "_unit")

    def __init__(self, store: SqlStore, open_unit: Callable[[], AbstractAsyncContextManager[Tx]]):
        self._store = store
        self._open = open_unit
        self._unit: AbstractAsyncContextManager[Tx] | None = None

    async def __aenter__(self) -> Tx:
        await self._store.ready()
        self._unit = self._open()
        return await self._unit.__aenter__()

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> bool | None:
        assert self._unit is not None
        return await self._unit.__aexit__(exc_type, exc, tb)


def make_store(
    db: str | URL | AsyncEngine | SqlStore, **engine_kwargs: Any
) -> tuple[SqlStore, bool]:
    """Returns a store for the argument and whether the caller owns it."""
    if isinstance(db, SqlStore):
        return db, False
    return SqlStore(db, **engine_kwargs), True
