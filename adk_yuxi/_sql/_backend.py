"""The small interface every database kind implements for ``SqlStore``.

Like an HTTP client's transports: ``SqlStore`` owns the engine, the schema check
and the closed flag; a backend owns how statements reach its database. There is
one implementation per kind (``_sqlite_backend``, ``_pg_backend``) and no
``if backend == ...`` anywhere else in the store.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from ._tx import Params, Tx
from .urls import Backend, DatabaseTarget


class StoreBackend(ABC):
    """How one kind of database runs the store's transactions."""

    name: Backend

    def __init__(self, target: DatabaseTarget, engine: AsyncEngine) -> None:
        self.target = target
        self.engine = engine

    @abstractmethod
    async def write_one(self, sql: str, params: Params | None) -> int:
        """One statement as its own transaction; the rows it changed."""

    @abstractmethod
    def write(self) -> AbstractAsyncContextManager[Tx]:
        """A write transaction, committed on success and rolled back on error."""

    @abstractmethod
    def read(self) -> AbstractAsyncContextManager[Tx]:
        """A read-only unit of work."""

    @abstractmethod
    async def lock_schema(self, conn: AsyncConnection) -> None:
        """Takes the lock that serialises schema creation and migration."""

    async def warm(self) -> int:
        """Opens the connections a busy process will want, before it is busy; how
        many are open. Nothing to open by default."""
        return 0

    @abstractmethod
    def default_blob_dir(self) -> Path:
        """Where artifact payloads go when neither caller nor URL names a directory."""

    @abstractmethod
    async def close(self) -> None:
        """Releases the backend's own connections and threads (not the engine)."""

    @abstractmethod
    async def flush(self) -> None:
        """Moves buffered state to its final place (SQLite: the WAL into the database)."""

    @abstractmethod
    def abandon(self) -> None:
        """Releases what can be released without awaiting (close on a foreign loop)."""
