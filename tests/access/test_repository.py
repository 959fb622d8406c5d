"""The access repository on real SQLite and real PostgreSQL."""

from __future__ import annotations

import pytest

from adk_yuxi.access import (
    AccessRepository,
    NotFoundError,
    ResourceKind,
    ResourceRecord,
    Role,
    Scope,
    ShareConfig,
    ShareConfigError,
    User,
)


async def seed(repo: AccessRepository) -> None:
    await repo.save_user(User(id="carol", role=Role.ADMIN, department_id="ops"))
    await repo.save_user(User(id="alice", role=Role.USER, department_id="sales"))
    await repo.save_user(User(id="bob", role=Role.USER, department_id="eng"))


async def test_round_trip_and_principal(repo: AccessRepository) -> None:
    await seed(repo)
    share = ShareConfig(read_scope=Scope.departments("sales"), manage_scope=Scope.users("alice"))
    await repo.save_resource(
        ResourceRecord(kind=ResourceKind.AGENT, id="helper", creator_id="carol", share=share)
    )
    await repo.save_resource(
        ResourceRecord(
            kind=ResourceKind.KNOWLEDGE_BASE,
            id="kb1",
            creator_id="carol",
            share=ShareConfig.public(),
        )
    )
    stored = await repo.get_resource(ResourceKind.AGENT, "helper")
    assert stored.share == share
    alice = await repo.load_principal("alice")
    assert alice.usable(ResourceKind.AGENT) == {"helper"}
    assert alice.usable(ResourceKind.KNOWLEDGE_BASE) == {"kb1"}
    bob = await repo.load_principal("bob")
    assert bob.usable(ResourceKind.AGENT) == frozenset()


async def test_rejected_share_writes_nothing(repo: AccessRepository) -> None:
    await seed(repo)
    first = ResourceRecord(
        kind=ResourceKind.SKILL, id="s1", creator_id="carol", share=ShareConfig.public()
    )
    await repo.save_resource(first)
    bad = ShareConfig(read_scope=Scope.users("alice"), manage_scope=Scope.users("alice", "bob"))
    with pytest.raises(ShareConfigError):
        await repo.share(ResourceKind.SKILL, "s1", bad)
    assert (await repo.get_resource(ResourceKind.SKILL, "s1")).share == first.share
    with pytest.raises(ShareConfigError):
        await repo.save_resource(
            ResourceRecord(kind=ResourceKind.SKILL, id="s2", creator_id="carol", share=bad)
        )
    with pytest.raises(NotFoundError):
        await repo.get_resource(ResourceKind.SKILL, "s2")
    with pytest.raises(ShareConfigError, match="creator"):
        await repo.save_resource(
            ResourceRecord(kind=ResourceKind.SKILL, id="s3", creator_id="nobody")
        )


async def test_user_manage_scope_checked_against_departments(repo: AccessRepository) -> None:
    await seed(repo)
    inside = ShareConfig(read_scope=Scope.departments("eng"), manage_scope=Scope.users("bob"))
    await repo.save_resource(
        ResourceRecord(kind=ResourceKind.AGENT, id="a", creator_id="carol", share=inside)
    )
    outside = ShareConfig(read_scope=Scope.departments("eng"), manage_scope=Scope.users("alice"))
    with pytest.raises(ShareConfigError):
        await repo.save_resource(
            ResourceRecord(kind=ResourceKind.AGENT, id="b", creator_id="carol", share=outside)
        )


async def test_execution_denial_sees_changes_immediately(repo: AccessRepository) -> None:
    await seed(repo)
    share = ShareConfig(read_scope=Scope.users("alice"))
    await repo.save_resource(
        ResourceRecord(kind=ResourceKind.AGENT, id="helper", creator_id="carol", share=share)
    )
    assert await repo.execution_denial("alice", "helper") is None
    assert await repo.execution_denial("bob", "helper") is not None
    await repo.share(ResourceKind.AGENT, "helper", ShareConfig())
    assert "no longer use" in (await repo.execution_denial("alice", "helper") or "")
    await repo.share(ResourceKind.AGENT, "helper", share)
    await repo.set_user_active("alice", False)
    assert "disabled" in (await repo.execution_denial("alice", "helper") or "")
    assert await repo.execution_denial("ghost", "helper") is not None
    with pytest.raises(NotFoundError):
        await repo.set_user_active("ghost", False)


async def test_readable_among_follows_every_kind_of_change(repo: AccessRepository) -> None:
    """Asked twice after each change (the second time the remembered decision for the
    same rows): a share, a department, a role, the resource switched off, the account."""
    await seed(repo)
    kb = ResourceKind.KNOWLEDGE_BASE
    share = ShareConfig(read_scope=Scope.departments("eng"))
    await repo.save_resource(ResourceRecord(kind=kb, id="kb", creator_id="carol", share=share))

    async def readable(user: str) -> bool:
        first = (await repo.readable_among(user, kb, ["kb"]))[1]
        assert (await repo.readable_among(user, kb, ["kb"]))[1] == first
        return "kb" in first

    assert await readable("bob") and not await readable("alice")
    await repo.save_user(User(id="bob", role=Role.USER, department_id="sales"))
    assert not await readable("bob")
    await repo.share(kb, "kb", ShareConfig(read_scope=Scope.departments("sales")))
    assert await readable("bob") and await readable("alice")
    await repo.save_user(User(id="bob", role=Role.SUPERADMIN, department_id="ops"))
    assert await readable("bob")  # a superadmin reads every base
    await repo.save_resource(
        ResourceRecord(
            kind=kb, id="kb", creator_id="carol", enabled=False,
            share=ShareConfig(read_scope=Scope.departments("sales")),
        )
    )  # fmt: skip
    assert not await readable("bob") and not await readable("alice")  # enabled ones only
    await repo.save_resource(ResourceRecord(kind=kb, id="kb", creator_id="carol"))
    assert await readable("bob") and not await readable("alice")
    await repo.set_user_active("bob", False)
    assert not await readable("bob")


async def test_user_update_is_an_upsert(repo: AccessRepository) -> None:
    await seed(repo)
    await repo.save_user(User(id="alice", role=Role.ADMIN, department_id="eng"))
    assert (await repo.get_user("alice")).role is Role.ADMIN
    async with repo.store.read() as tx:
        row = await tx.fetchone("SELECT count(*) FROM yx_users")
    assert row is not None and row[0] == 3
