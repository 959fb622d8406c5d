"""PostgreSQL behind ``SqlStore``: asyncpg connections from the engine's pool.

The pool, its idle-only ping and the connection setup (search path, JSON codecs)
stay SQLAlchemy's; statements go to the asyncpg connection directly. SQLAlchemy's
execution layers (greenlet hop, result objects, its own statement cache) cost more
per statement than the statement's round trip itself (``bench/README.md``,
"bench_host_api"). The ``:name`` SQL is compiled once per text by SQLAlchemy's own
asyncpg dialect into ``$n`` form, so both backends read the same SQL the same way.

Reads and single-statement writes run in autocommit: at PostgreSQL's READ COMMITTED
every statement takes its own snapshot inside a transaction too, and one statement
is atomic on its own, so BEGIN and COMMIT around them bought nothing but round trips.
A connection that failed mid-statement, or whose statement was cancelled, is
discarded rather than handed to the next caller.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.dialects.postgresql.asyncpg import dialect as asyncpg_dialect
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.util import greenlet_spawn

from ..observability._metrics import instruments
from ._backend import StoreBackend
from ._pg_errormap import PG_CONNECT_ERRORS, PG_ERRORS, translate_pg, translate_pg_connect
from ._tx import Params, Row, Tx
from .errors import DatabaseUnavailableError, YuxiStorageError
from .urls import Backend

# Arbitrary constant key for pg_advisory_xact_lock while creating or migrating.
_PG_SCHEMA_LOCK_KEY = 0x59_55_58_49
_log = logging.getLogger(__name__)
_DIALECT = asyncpg_dialect()


@functools.lru_cache(maxsize=2048)
def _compiled(sql: str) -> tuple[str, tuple[str, ...]]:
    """The statement in asyncpg's ``$n`` form and the parameter name of each ``$n``."""
    compiled = text(sql).compile(dialect=_DIALECT)
    return str(compiled), tuple(compiled.positiontup or ())


def _arguments(names: tuple[str, ...], params: Params | None) -> list[Any]:
    if not names:
        return []
    if params is None:
        raise ValueError(f"The statement needs a value for :{names[0]}.")
    try:
        return [params[name] for name in names]
    except KeyError as exc:
        raise ValueError(f"The statement needs a value for :{exc.args[0]}.") from None


def _rowcount(status: str) -> int:
    """The row count of a command tag (``UPDATE 3``, ``INSERT 0 1``); -1 for none."""
    last = status.rpartition(" ")[2]
    return int(last) if last.isdigit() else -1


async def _translated(step: Awaitable[Any]) -> None:
    try:
        await step
    except PG_ERRORS as exc:
        raise translate_pg(exc) from exc


class _Unit:
    """One pooled connection while a unit of work holds it, in a transaction or not.

    A class rather than a generator context manager: this runs for every statement.
    The connection goes back to the pool unless the work was cancelled mid-statement
    or the link failed; then its state is unknown and it is closed without waiting.
    """

    __slots__ = ("_backend", "_broken", "_fairy", "_transaction", "_transactional")

    def __init__(self, backend: PostgresBackend, transactional: bool) -> None:
        self._backend = backend
        self._transactional = transactional
        self._fairy: Any = None
        self._transaction: Any = None
        self._broken = False

    async def __aenter__(self) -> PgTx:
        backend = self._backend
        backend.waiting += 1
        start = time.perf_counter()
        try:
            self._fairy = await backend.engine.raw_connection()
        except PG_CONNECT_ERRORS as exc:
            raise translate_pg_connect(exc) from exc
        finally:
            backend.waiting -= 1
            instruments().pool_waited(backend.pool_name, time.perf_counter() - start)
        conn = self._fairy.driver_connection
        if self._transactional:
            try:
                transaction = conn.transaction()
                await _translated(transaction.start())
            except BaseException as exc:
                await self._release(exc)
                raise
            self._transaction = transaction
        return PgTx(conn)

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        try:
            if self._transaction is not None:
                await self._end(exc)
        except BaseException as failure:
            await self._release(failure)
            raise
        await self._release(exc)

    async def _end(self, exc: BaseException | None) -> None:
        # A failed COMMIT or ROLLBACK leaves the session's state in doubt: the
        # connection is not reused.
        if exc is None:
            try:
                await _translated(self._transaction.commit())
            except Exception:
                self._broken = True
                raise
        elif isinstance(exc, Exception) and not isinstance(exc, DatabaseUnavailableError):
            try:
                await _translated(self._transaction.rollback())
            except Exception:  # the caller's error, raised next, says more
                self._broken = True

    async def _release(self, exc: BaseException | None) -> None:
        if exc is not None and (
            not isinstance(exc, Exception) or isinstance(exc, DatabaseUnavailableError)
        ):
            self._broken = True  # cancelled mid-statement, or the link failed
        fairy, self._fairy = self._fairy, None
        if self._broken:
            fairy.invalidate()
        await greenlet_spawn(fairy.close)


async def _touch_tables(conn: Any) -> None:
    try:
        names = await conn.fetch(
            "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace"
            " AND relkind IN ('r', 'p') AND relname LIKE 'yx\\_%'"
        )
        if names:
            quoted = ['"' + str(row[0]).replace('"', '""') + '"' for row in names]
            await conn.execute(" UNION ALL ".join(f"SELECT 1 FROM {q} WHERE false" for q in quoted))
    except PG_ERRORS as exc:
        raise translate_pg(exc) from exc


class PgTx(Tx):
    """Statements on one asyncpg connection."""

    backend: Backend = "postgresql"

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params | None = None) -> int:
        query, names = _compiled(sql)
        args = _arguments(names, params)
        try:
            status = await self._conn.execute(query, *args)
        except PG_ERRORS as exc:
            raise translate_pg(exc) from exc
        return _rowcount(str(status))

    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        if not rows:
            return
        query, names = _compiled(sql)
        args = [_arguments(names, row) for row in rows]
        try:
            await self._conn.executemany(query, args)
        except PG_ERRORS as exc:
            raise translate_pg(exc) from exc

    async def fetchall(self, sql: str, params: Params | None = None) -> list[Row]:
        query, names = _compiled(sql)
        args = _arguments(names, params)
        try:
            records = await self._conn.fetch(query, *args)
        except PG_ERRORS as exc:
            raise translate_pg(exc) from exc
        return [tuple(record) for record in records]

    async def lock_key(self, key: str) -> None:
        await self.execute("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))", {"key": key})


class PostgresBackend(StoreBackend):
    """PostgreSQL on the asyncpg connections of the engine's pool."""

    name: Backend = "postgresql"

    async def write_one(self, sql: str, params: Params | None) -> int:
        async with _Unit(self, transactional=False) as tx:
            return await tx.execute(sql, params)

    def write(self) -> AbstractAsyncContextManager[Tx]:
        return _Unit(self, transactional=True)

    def read(self) -> AbstractAsyncContextManager[Tx]:
        return _Unit(self, transactional=False)

    async def warm(self) -> int:
        """Fills the pool, each connection with the store's tables known to its server
        process. A new connection costs the server a process, and its first statement
        on each table ~1 ms more than later ones (catalog caches); at a start under
        load every request would pay both at once (``bench/README.md``). Best effort,
        and never more than half the server's free connection slots, so a start with
        a `pool_size` past what the server has leaves room for other clients (another
        worker, an operator's psql); a connection that cannot be opened now is logged
        and left to be opened on demand, as without warming."""
        size = getattr(self.engine.pool, "size", None)
        wanted = size() if callable(size) else 0
        if wanted <= 0:
            return 0
        spare = await self._free_slots()
        if spare is not None and (room := max(spare // 2, 0)) < wanted:
            _log.warning(
                "pool_size is %d, but the database has %d free connection slots: opening"
                " %d ahead of use; size pool_size within max_connections over all workers",
                wanted, spare, room,
            )  # fmt: skip
            if room == 0:
                return 0
            wanted = room
        opened = await asyncio.gather(
            *(self.engine.raw_connection() for _ in range(wanted)), return_exceptions=True
        )
        fairies = [f for f in opened if not isinstance(f, BaseException)]
        touched = await asyncio.gather(
            *(_touch_tables(f.driver_connection) for f in fairies), return_exceptions=True
        )
        for fairy, outcome in zip(fairies, touched, strict=True):
            if outcome is not None:
                fairy.invalidate()  # its state is unknown
            await greenlet_spawn(fairy.close)  # back to the pool, open
        failures = [f for f in [*opened, *touched] if isinstance(f, BaseException)]
        for failure in failures:
            if not isinstance(failure, Exception):
                raise failure  # cancelled: the start is being abandoned
        if failures:
            first = failures[0]
            why = translate_pg_connect(first) if isinstance(first, PG_CONNECT_ERRORS) else first
            _log.warning(
                "opened %d of %d pooled connections ahead of use: %s",
                wanted - len(failures), wanted, why,
            )  # fmt: skip
        return wanted - len(failures)

    async def _free_slots(self) -> int | None:
        """Client connection slots the server has left (its own connection counted as
        taken), or None when it cannot be asked now: warming then tries as before."""
        try:
            async with self.read() as tx:
                rows = await tx.fetchall(
                    "SELECT current_setting('max_connections')::int"
                    " - current_setting('superuser_reserved_connections')::int"
                    " - (SELECT count(*) FROM pg_stat_activity"
                    " WHERE backend_type = 'client backend')"
                )
        except YuxiStorageError:  # unreachable, or a server that will not say
            return None
        return int(rows[0][0])

    async def lock_schema(self, conn: AsyncConnection) -> None:
        await conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_PG_SCHEMA_LOCK_KEY})")
        schema = self.target.options.get("schema")
        if schema:
            await conn.exec_driver_sql(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')

    def default_blob_dir(self) -> Path:
        return Path(".yuxi") / "blobs"

    async def flush(self) -> None:
        """Nothing buffered: every commit is already in the database."""

    async def close(self) -> None:
        """Nothing of its own: the pool belongs to the engine."""

    def abandon(self) -> None:
        """Nothing of its own: the pool belongs to the engine."""
