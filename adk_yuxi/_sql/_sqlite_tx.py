"""The SQLite transaction objects: inline on the loop's thread, or on aiosqlite.

``InlineTx`` runs statements on the store's stdlib connection, only while that
connection holds the write lock (or for one statement tried with
``busy_timeout=0``), so no call waits for a lock on the loop. ``InlineReadTx``
reads inline and retries a rare ``SQLITE_BUSY`` on an aiosqlite reader.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from ._errormap import DRIVER_ERRORS, translate
from ._tx import Params, Row, Tx
from .urls import Backend

_SQLITE_BUSY = 5


def is_busy(exc: BaseException) -> bool:
    """Whether an error means "another connection holds the lock; try later"."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF == _SQLITE_BUSY
    return "database is locked" in str(exc)


class AioSqliteTx(Tx):
    """Statements on an aiosqlite connection (the store's readers)."""

    backend: Backend = "sqlite"

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params | None = None) -> int:
        try:
            cursor = await self._conn.execute(sql, params or {})
        except DRIVER_ERRORS as exc:
            raise translate(exc) from exc
        return int(cursor.rowcount)

    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        try:
            await self._conn.executemany(sql, rows)
        except DRIVER_ERRORS as exc:
            raise translate(exc) from exc

    async def fetchall(self, sql: str, params: Params | None = None) -> list[Row]:
        try:
            return list(await self._conn.execute_fetchall(sql, params or {}))
        except DRIVER_ERRORS as exc:
            raise translate(exc) from exc

    async def lock_key(self, key: str) -> None:
        """A reader takes no locks."""


class InlineTx(Tx):
    """Statements on the inline writer, run on the calling thread.

    Only used while the writer holds the write lock (or for one autocommitted
    statement tried with ``busy_timeout=0``), so no call here waits for a lock.
    """

    backend: Backend = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params | None = None) -> int:
        try:
            return int(self._conn.execute(sql, params or {}).rowcount)
        except DRIVER_ERRORS as exc:
            raise translate(exc) from exc

    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        try:
            self._conn.executemany(sql, rows)
        except DRIVER_ERRORS as exc:
            raise translate(exc) from exc

    async def fetchall(self, sql: str, params: Params | None = None) -> list[Row]:
        try:
            return list(self._conn.execute(sql, params or {}).fetchall())
        except DRIVER_ERRORS as exc:
            raise translate(exc) from exc

    async def lock_key(self, key: str) -> None:
        """Nothing more to take: a write transaction holds SQLite's one write lock."""


class InlineReadTx(InlineTx):
    """Reads inline on their own connection; a busy answer retries on aiosqlite.

    In WAL mode a reader never waits for the writer, so a read runs inline with
    ``busy_timeout=0``. The rare ``SQLITE_BUSY`` (another connection recovering
    the WAL, or a write sent through ``read()`` while another writer holds the
    lock) is retried on an aiosqlite reader, whose busy timeout waits in
    aiosqlite's thread: this connection is shared by every task and must never
    leave the loop's thread.
    """

    def __init__(
        self, conn: sqlite3.Connection, fallback: Callable[[], AbstractAsyncContextManager[Tx]]
    ) -> None:
        super().__init__(conn)
        self._fallback = fallback

    async def execute(self, sql: str, params: Params | None = None) -> int:
        try:
            return await super().execute(sql, params)
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
        async with self._fallback() as tx:
            return await tx.execute(sql, params)

    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        try:
            return await super().executemany(sql, rows)
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
        async with self._fallback() as tx:
            await tx.executemany(sql, rows)

    async def fetchall(self, sql: str, params: Params | None = None) -> list[Row]:
        try:
            return await super().fetchall(sql, params)
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
        async with self._fallback() as tx:
            return await tx.fetchall(sql, params)
