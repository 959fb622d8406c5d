"""API keys on both backends: hashed at rest, one refusal for every dead key."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from adk_yuxi.access import AccessRepository, Role, User
from adk_yuxi.apikeys import ApiKeyForbidden, ApiKeyNotFound, ApiKeyStore, InvalidApiKey
from adk_yuxi.storage import YuxiServices, open_services
from tests.sql_backends import db_url, pg_schema

__all__ = ["db_url", "pg_schema"]


@pytest.fixture
async def keys(db_url: str) -> AsyncIterator[tuple[ApiKeyStore, AccessRepository]]:
    services: YuxiServices = open_services(db_url)
    try:
        access = AccessRepository(services.store)
        await access.save_user(User(id="admin", role=Role.ADMIN))
        await access.save_user(User(id="mei"))
        await access.save_user(User(id="bo"))
        yield ApiKeyStore(services.store), access
    finally:
        await services.close()


async def test_issue_resolve_revoke(keys: tuple[ApiKeyStore, AccessRepository]) -> None:
    store, _ = keys
    issued = await store.issue("mei", issued_by="mei", label="laptop")
    assert issued.token.startswith("yxk_") and len(issued.token) > 40
    assert (await store.resolve(issued.token)).id == issued.key.id
    for wrong in [
        "",
        "yxk_",
        issued.token[:-1],
        issued.token + "x",
        " " + issued.token,
        issued.token.upper(),
        "yxk_" + "\x00" * 43,
        "y" * 10_000,
    ]:
        with pytest.raises(InvalidApiKey):
            await store.resolve(wrong)
    with pytest.raises(ApiKeyNotFound):
        await store.revoke(issued.key.id, by="bo")
    first = await store.revoke(issued.key.id, by="mei")
    again = await store.revoke(issued.key.id, by="admin")
    assert first.revoked_at is not None and again.revoked_at == first.revoked_at
    with pytest.raises(InvalidApiKey):
        await store.resolve(issued.token)


async def test_expiry_and_disabled_user(keys: tuple[ApiKeyStore, AccessRepository]) -> None:
    store, access = keys
    short = await store.issue("mei", issued_by="admin", ttl_seconds=0.05)
    lasting = await store.issue("bo", issued_by="admin")
    await asyncio.sleep(0.1)
    with pytest.raises(InvalidApiKey):
        await store.resolve(short.token)
    await access.set_user_active("bo", False)
    with pytest.raises(InvalidApiKey):
        await store.resolve(lasting.token)


async def test_who_may_issue(keys: tuple[ApiKeyStore, AccessRepository]) -> None:
    store, access = keys
    with pytest.raises(ApiKeyForbidden):
        await store.issue("bo", issued_by="mei")
    with pytest.raises(ApiKeyForbidden):
        await store.issue("ghost", issued_by="admin")
    with pytest.raises(ApiKeyForbidden):
        await store.issue("ghost", issued_by="ghost")
    await access.set_user_active("admin", False)
    with pytest.raises(ApiKeyForbidden):
        await store.issue("mei", issued_by="admin")
    for bad in [{"label": "x" * 201}, {"ttl_seconds": 0}, {"ttl_seconds": -1}]:
        with pytest.raises(ValueError):
            await store.issue("mei", issued_by="mei", **bad)  # type: ignore[arg-type]
    assert await store.list_keys("mei") == [] and await store.list_keys("bo") == []


async def test_the_key_comes_with_the_access_marker_of_the_same_snapshot(
    keys: tuple[ApiKeyStore, AccessRepository],
) -> None:
    """What the API's authentication passes to `load_principal(marker=)`: a change to
    the access tables made after one request is seen by the next one's principal."""
    store, access = keys
    issued = await store.issue("mei", issued_by="mei")
    key, marker = await store.resolve_marked(issued.token)
    assert key.id == issued.key.id and marker == await access.change_marker()
    before = await access.load_principal("mei", marker=marker)
    assert before.user.role is Role.USER
    await access.save_user(User(id="mei", role=Role.ADMIN))
    _, moved = await store.resolve_marked(issued.token)
    assert moved > marker
    assert (await access.load_principal("mei", marker=moved)).user.role is Role.ADMIN


async def test_no_account_mints_itself_a_higher_role(
    keys: tuple[ApiKeyStore, AccessRepository],
) -> None:
    store, access = keys
    await access.save_user(User(id="root", role=Role.SUPERADMIN))
    await access.save_user(User(id="adm2", role=Role.ADMIN))
    rooted = await store.issue("root", issued_by="root")
    with pytest.raises(ApiKeyForbidden, match="only a superadmin"):
        await store.issue("root", issued_by="admin")
    with pytest.raises(ApiKeyForbidden):
        await store.list_keys("root", by="admin")
    with pytest.raises(ApiKeyNotFound):
        await store.revoke(rooted.key.id, by="admin")
    assert (await store.resolve(rooted.token)).user_id == "root"  # still live
    # Down and across the ladder is allowed: an admin for users and admins, the
    # superadmin for anyone.
    peer = await store.issue("adm2", issued_by="admin")
    assert [k.id for k in await store.list_keys("adm2", by="admin")] == [peer.key.id]
    assert (await store.revoke(peer.key.id, by="admin")).revoked_at is not None
    mine = await store.issue("admin", issued_by="root")
    assert [k.id for k in await store.list_keys("admin", by="root")] == [mine.key.id]
    # The check reads the roles as they are now: a demoted admin acts for nobody else.
    await access.save_user(User(id="admin", role=Role.USER))
    with pytest.raises(ApiKeyForbidden):
        await store.issue("mei", issued_by="admin")
    with pytest.raises(ApiKeyForbidden):
        await store.list_keys("mei", by="admin")
