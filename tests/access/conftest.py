"""Access fixtures: a repository on a real SQLite file and on real PostgreSQL."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator

import pytest
import sqlalchemy as sa

from adk_yuxi.access import AccessRepository, create_engine

PG_URL = os.environ.get("YUXI_TEST_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")


async def _postgres_repository() -> tuple[AccessRepository, str] | None:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL)
    try:
        async with admin.begin() as conn:
            await conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    except (OSError, sa.exc.SQLAlchemyError) as exc:
        await admin.dispose()
        if os.environ.get("CI"):
            raise
        pytest.skip(f"PostgreSQL at {PG_URL} is unreachable ({type(exc).__name__}: {exc})")
    await admin.dispose()
    engine = create_engine(PG_URL).execution_options(schema_translate_map={None: schema})
    return AccessRepository(engine), schema


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def repo(request: pytest.FixtureRequest, tmp_path: object) -> AsyncIterator[AccessRepository]:
    """The same repository tests run against both databases."""
    if request.param == "sqlite":
        repository = AccessRepository(create_engine(f"sqlite+aiosqlite:///{tmp_path}/access.db"))
        await repository.create_tables()
        yield repository
        await repository.engine.dispose()
        return
    made = await _postgres_repository()
    assert made is not None
    repository, schema = made
    await repository.create_tables()
    try:
        yield repository
    finally:
        await repository.engine.dispose()
        cleanup = create_engine(PG_URL)
        async with cleanup.begin() as conn:
            await conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        await cleanup.dispose()


@pytest.fixture
async def sqlite_repo(tmp_path: object) -> AsyncIterator[AccessRepository]:
    repository = AccessRepository(create_engine(f"sqlite+aiosqlite:///{tmp_path}/access.db"))
    await repository.create_tables()
    yield repository
    await repository.engine.dispose()
