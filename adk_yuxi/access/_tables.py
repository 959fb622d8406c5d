"""SQL tables of the access layer, on their own `MetaData` until the shared schema lands.

The shared schema module (`adk_yuxi._sql.schema`) is being built on another branch; when
it is merged these two tables move there in their own section, and `create_engine` is
replaced by its engine helper. Nothing outside this package imports from here.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

__all__ = ["create_engine", "metadata", "resources", "users"]

metadata = sa.MetaData()

users = sa.Table(
    "yuxi_users",
    metadata,
    sa.Column("id", sa.String(200), primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, default=""),
    sa.Column("role", sa.String(20), nullable=False),
    sa.Column("department_id", sa.String(200), nullable=True),
    sa.Column("active", sa.Boolean, nullable=False, default=True),
)

resources = sa.Table(
    "yuxi_resources",
    metadata,
    sa.Column("kind", sa.String(32), primary_key=True),
    sa.Column("id", sa.String(200), primary_key=True),
    sa.Column("creator_id", sa.String(200), nullable=False),
    sa.Column("share", sa.JSON, nullable=False),
    sa.Column("enabled", sa.Boolean, nullable=False, default=True),
)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers (the per-call revocation check) run while a writer commits;
    # the busy timeout turns a brief lock into a wait instead of an error.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def create_engine(url: str, **kwargs: Any) -> AsyncEngine:
    """An async engine for `sqlite+aiosqlite:///file.db` or `postgresql+asyncpg://...`."""
    engine = create_async_engine(url, **kwargs)
    if engine.dialect.name == "sqlite":
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    return engine
