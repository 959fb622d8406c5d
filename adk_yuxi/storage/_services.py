"""One call for a host service: all three SQL services on one shared engine."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from .._sql.store import SqlStore
from ..artifacts import SqlArtifactService
from ..memory import SqlMemoryService
from ..sessions import SqlSessionService

if TYPE_CHECKING:
    from ..knowledge import Embedder


@dataclass
class YuxiServices:
    """The session, memory and artifact services of one database.

    They share one engine and connection set; ``close()`` releases it once.
    """

    session_service: SqlSessionService
    memory_service: SqlMemoryService
    artifact_service: SqlArtifactService
    store: SqlStore

    async def prepare(self) -> None:
        """Creates or checks the schema now instead of on first use."""
        await self.store.ready()

    async def close(self) -> None:
        """Releases connections and disposes the engine if it was created here."""
        await self.store.close()

    async def __aenter__(self) -> YuxiServices:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def open_services(
    db: str | URL | AsyncEngine,
    *,
    blob_dir: str | Path | None = None,
    max_artifact_bytes: int | None = None,
    max_memory_results: int = 10,
    memory_embedder: Embedder | None = None,
    **engine_kwargs: Any,
) -> YuxiServices:
    """Builds the three services on one database URL or engine.

    Args:
      db: An SQLAlchemy async URL (``sqlite+aiosqlite:///app.db``,
        ``postgresql+asyncpg://...``, or a ``yuxi+`` scheme) or an ``AsyncEngine``.
      blob_dir: Where artifact payloads live (see ``SqlArtifactService``).
      max_artifact_bytes: The artifact size limit.
      max_memory_results: The most memories one search returns.
      memory_embedder: Opt-in embeddings for memory search (see ``SqlMemoryService``).
      **engine_kwargs: Passed to ``create_async_engine`` when ``db`` is a URL.
    """
    store = SqlStore(db, **engine_kwargs)
    return YuxiServices(
        session_service=SqlSessionService(store),
        memory_service=SqlMemoryService(
            store, max_results=max_memory_results, embedder=memory_embedder
        ),
        artifact_service=SqlArtifactService(
            store, blob_dir=blob_dir, max_artifact_bytes=max_artifact_bytes
        ),
        store=store,
    )
