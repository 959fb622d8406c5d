"""The transaction interface the services write against, shared by both backends.

It lives apart from ``store`` so the SQLite module can implement it without an
import cycle; ``store`` re-exports everything here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .urls import Backend

Params = Mapping[str, Any]
Row = Sequence[Any]


class IntegrityViolation(Exception):
    """A unique or foreign-key constraint rejected a statement (either backend)."""


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

    async def lock_key(self, key: str) -> None:
        """Holds a lock named ``key`` until the transaction ends (write transactions).

        For work outside the database that must not interleave with another
        transaction's (a payload file removed only while nobody references it).
        """
        raise NotImplementedError

    async def fetchone(self, sql: str, params: Params | None = None) -> Row | None:
        """Runs a query and returns its first row, if any."""
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None
