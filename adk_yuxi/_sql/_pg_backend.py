"""PostgreSQL behind ``SqlStore``: SQLAlchemy Core ``text()`` on pooled asyncpg.

Statements are prepared and cached by SQLAlchemy and asyncpg; concurrency rests
on row locks and constraints, and schema changes on a transaction-level advisory
lock. Reads and single-statement writes run in autocommit: at PostgreSQL's READ
COMMITTED every statement takes its own snapshot inside a transaction too, and one
statement is atomic on its own, so BEGIN and COMMIT (or ROLLBACK) around them bought
nothing but two round trips each.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from ._backend import StoreBackend
from ._errormap import DRIVER_ERRORS, translate
from ._tx import Params, Row, Tx
from .urls import Backend, DatabaseTarget

# Arbitrary constant key for pg_advisory_xact_lock while creating or migrating.
_PG_SCHEMA_LOCK_KEY = 0x59_55_58_49


@functools.lru_cache(maxsize=1024)
def _clause(sql: str) -> TextClause:
    return text(sql)


class PgTx(Tx):
    """Statements on one SQLAlchemy connection."""

    backend: Backend = "postgresql"

    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params | None = None) -> int:
        try:
            result = await self._conn.execute(_clause(sql), dict(params or {}))
        except DRIVER_ERRORS as exc:
            raise translate(exc) from exc
        return int(result.rowcount)

    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        if not rows:
            return
        try:
            await self._conn.execute(_clause(sql), [dict(row) for row in rows])
        except DRIVER_ERRORS as exc:
            raise translate(exc) from exc

    async def fetchall(self, sql: str, params: Params | None = None) -> list[Row]:
        try:
            result = await self._conn.execute(_clause(sql), dict(params or {}))
        except DRIVER_ERRORS as exc:
            raise translate(exc) from exc
        return list(result.all())

    async def lock_key(self, key: str) -> None:
        await self.execute("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))", {"key": key})


class PostgresBackend(StoreBackend):
    """PostgreSQL through the engine's asyncpg pool."""

    name: Backend = "postgresql"

    def __init__(self, target: DatabaseTarget, engine: AsyncEngine) -> None:
        super().__init__(target, engine)
        # The same pool; a connection checked out here runs each statement alone.
        self._autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")

    async def write_one(self, sql: str, params: Params | None) -> int:
        async with self._autocommit.connect() as conn:
            return await PgTx(conn).execute(sql, params)

    @asynccontextmanager
    async def write(self) -> AsyncIterator[Tx]:
        async with self.engine.begin() as conn:
            yield PgTx(conn)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Tx]:
        async with self._autocommit.connect() as conn:
            yield PgTx(conn)

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
