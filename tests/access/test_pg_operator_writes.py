"""An operator's SQL write to the access tables, from a session without the schema's
search_path, still bumps the access version the runtime watches (PostgreSQL)."""

from __future__ import annotations

import asyncpg

from adk_yuxi.access import AccessRepository, User
from tests.sql_backends import PG_DSN, PG_URL, pg_schema

__all__ = ["pg_schema"]


async def test_a_qualified_write_without_the_search_path_bumps_the_version(
    pg_schema: str,
) -> None:
    repo = AccessRepository(f"{PG_URL}?schema={pg_schema}")
    await repo.prepare()
    try:
        await repo.save_user(User(id="ann"))
        conn = await asyncpg.connect(PG_DSN, timeout=3)  # search_path: the default one
        try:
            before = await conn.fetchval(f"SELECT version FROM {pg_schema}.yx_access_version")
            await conn.execute(f"UPDATE {pg_schema}.yx_users SET active = false WHERE id = 'ann'")
            after = await conn.fetchval(f"SELECT version FROM {pg_schema}.yx_access_version")
        finally:
            await conn.close()
        assert after == before + 1
        assert (await repo.get_user("ann")).active is False
    finally:
        await repo.close()
