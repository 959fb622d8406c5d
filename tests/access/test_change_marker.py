"""The access change marker: every write to the access tables moves it, whoever makes
it, so `load_principal` re-reads rights exactly when they may have changed."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy

from adk_yuxi._sql import PLATFORM, SchemaPart, SqlStore
from adk_yuxi.access import AccessRepository, ResourceKind, ResourceRecord, ShareConfig, User


async def test_every_kind_of_write_moves_the_marker(repo: AccessRepository) -> None:
    seen = [await repo.change_marker()]

    async def moved() -> bool:
        seen.append(await repo.change_marker())
        return seen[-1] != seen[-2]

    await repo.save_user(User(id="alice"))
    assert await moved()
    await repo.set_user_active("alice", False)
    assert await moved()
    record = ResourceRecord(kind=ResourceKind.KNOWLEDGE_BASE, id="kb", creator_id="alice")
    await repo.save_resource(record)
    assert await moved()
    await repo.share(ResourceKind.KNOWLEDGE_BASE, "kb", ShareConfig.public())
    assert await moved()
    await repo.set_resource_enabled(ResourceKind.KNOWLEDGE_BASE, "kb", False)
    assert await moved()
    # A write that is not ours (another process, an administrator's console).
    async with repo.engine.begin() as conn:
        await conn.execute(sqlalchemy.text("DELETE FROM yx_resources WHERE id = 'kb'"))
    assert await moved()
    assert not await moved()  # reading changes nothing


async def test_a_principal_is_read_again_only_after_a_change(repo: AccessRepository) -> None:
    await repo.save_user(User(id="alice", department_id="d1"))
    first = await repo.load_principal("alice")
    assert await repo.load_principal("alice") is first  # unchanged: not read again
    await repo.save_resource(
        ResourceRecord(
            kind=ResourceKind.SKILL, id="s", creator_id="alice", share=ShareConfig.public()
        )
    )
    second = await repo.load_principal("alice")
    assert second is not first and second.may_use(ResourceKind.SKILL, "s")
    async with repo.engine.begin() as conn:
        await conn.execute(sqlalchemy.text("UPDATE yx_users SET active = false"))
    assert not (await repo.load_principal("alice")).user.active


async def test_a_version_2_database_gets_the_marker(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    old = SqlStore(url)
    await old.migrate([SchemaPart("platform", PLATFORM.steps[:1])])  # as version 2 shipped
    async with old.engine.begin() as conn:
        await conn.execute(
            sqlalchemy.text(
                "INSERT INTO yx_users (id, name, role, active) VALUES ('alice', '', 'user', 1)"
            )
        )
    await old.close()
    repo = AccessRepository(url)
    try:
        await repo.prepare()
        before = await repo.change_marker()
        assert (await repo.load_principal("alice")).user.active
        await repo.set_user_active("alice", False)
        assert await repo.change_marker() != before
        assert not (await repo.load_principal("alice")).user.active
    finally:
        await repo.close()
