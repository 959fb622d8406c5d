"""Access fixtures: a repository on a real SQLite file and on real PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adk_yuxi.access import AccessRepository
from tests.sql_backends import db_url, pg_schema

__all__ = ["db_url", "pg_schema", "repo", "sqlite_repo"]


@pytest.fixture
async def repo(db_url: str) -> AsyncIterator[AccessRepository]:
    """The same repository tests run against both databases."""
    repository = AccessRepository(db_url)
    await repository.prepare()
    try:
        yield repository
    finally:
        await repository.close()


@pytest.fixture
async def sqlite_repo(tmp_path: Path) -> AsyncIterator[AccessRepository]:
    repository = AccessRepository(f"sqlite+aiosqlite:///{tmp_path}/access.db")
    await repository.prepare()
    yield repository
    await repository.close()
