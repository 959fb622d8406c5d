"""Fixtures that run a test against SQLite and against the real PostgreSQL.

PostgreSQL tests get a fresh schema each (named in the URL's ``schema`` option,
dropped afterwards), so parallel runs and leftovers never collide. When the
server is unreachable they are skipped, unless ``CI`` is set: then they fail.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from adk_yuxi.storage import YuxiServices, open_services

PG_DSN = os.environ.get("YUXI_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/test")
PG_URL = PG_DSN.replace("postgresql://", "postgresql+asyncpg://", 1)
_reachable: list[bool] = []


async def _pg_execute(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(PG_DSN, timeout=3)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def pg_available() -> bool:
    """Whether the test PostgreSQL answers (checked once per test session)."""
    if not _reachable:
        try:
            asyncio.run(_pg_execute("SELECT 1"))
            _reachable.append(True)
        except Exception as exc:  # any failure to connect: refused, timeout, auth, driver
            _reachable.append(False)
            if os.environ.get("CI"):
                raise RuntimeError(f"CI is set but PostgreSQL is unreachable: {exc}") from exc
    return _reachable[0]


def require_pg() -> None:
    """Skips (or, under CI, fails) when PostgreSQL is unreachable."""
    if not pg_available():
        pytest.skip(f"PostgreSQL at {PG_DSN} is unreachable (set CI=1 to make this fail)")


@pytest.fixture
def pg_schema() -> Iterator[str]:
    """A fresh PostgreSQL schema for one test, dropped afterwards."""
    require_pg()
    name = f"yx_test_{uuid.uuid4().hex[:12]}"
    asyncio.run(_pg_execute(f"CREATE SCHEMA {name}"))
    try:
        yield name
    finally:
        asyncio.run(_pg_execute(f"DROP SCHEMA IF EXISTS {name} CASCADE"))


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL for an empty database on each backend."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'yuxi.db'}"
    schema = request.getfixturevalue("pg_schema")
    return f"{PG_URL}?schema={schema}"


@pytest.fixture
async def services(db_url: str, tmp_path: Path) -> AsyncIterator[YuxiServices]:
    """All three services on the test database, closed afterwards."""
    opened = open_services(db_url, blob_dir=tmp_path / "blobs")
    try:
        yield opened
    finally:
        await opened.close()
