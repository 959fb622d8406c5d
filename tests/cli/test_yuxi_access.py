"""`yuxi access ...`: users and shares set up from a terminal, checked in the database."""

from __future__ import annotations

import asyncio
from pathlib import Path

from click.testing import CliRunner, Result

from adk_yuxi.access import AccessRepository, ResourceKind, Scope
from adk_yuxi.apikeys import ApiKeyStore, InvalidApiKey
from adk_yuxi.cli import main


def yuxi(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, [*args, "--db", str(db)])


def principal_may_use(db: Path, user_id: str, agent: str) -> bool:
    async def check() -> bool:
        repository = AccessRepository(f"sqlite+aiosqlite:///{db}")
        try:
            principal = await repository.load_principal(user_id)
            return principal.may_use(ResourceKind.AGENT, agent)
        finally:
            await repository.close()

    return asyncio.run(check())


def test_a_new_operator_sets_up_users_shares_and_a_key(tmp_path: Path) -> None:
    db = tmp_path / "platform.db"
    refused = yuxi(db, "api-key", "issue", "--user", "ann")
    assert refused.exit_code == 1 and "yuxi access user add" in refused.output

    assert yuxi(db, "access", "user", "add", "root", "--role", "superadmin").exit_code == 0
    added = yuxi(db, "access", "user", "add", "ann", "--department", "eng")
    assert added.exit_code == 0 and added.output.strip() == "ann\tuser\teng"
    again = yuxi(db, "access", "user", "add", "ann", "--role", "admin")
    assert again.exit_code == 1 and "exists" in again.output  # nothing overwritten

    unrecorded = yuxi(db, "access", "share", "agent", "helper", "--everyone")
    assert unrecorded.exit_code == 1 and "--creator" in unrecorded.output
    assert not principal_may_use(db, "ann", "helper")
    shared = yuxi(
        db, "access", "share", "agent", "helper", "--department", "eng", "--creator", "root"
    )
    assert shared.exit_code == 0 and shared.output.strip() == "agent\thelper\tdepartments: eng"
    assert principal_may_use(db, "ann", "helper")

    narrowed = yuxi(db, "access", "share", "agent", "helper", "--user", "someone-else")
    assert narrowed.exit_code == 0
    assert not principal_may_use(db, "ann", "helper")  # a withdrawn share counts at once
    listed = yuxi(db, "access", "list")
    assert listed.output.strip() == "agent\thelper\troot\tusers: someone-else\tenabled"

    issued = yuxi(db, "api-key", "issue", "--user", "ann")
    assert issued.exit_code == 0 and issued.output.startswith("yxk_")
    assert yuxi(db, "access", "user", "disable", "ann").exit_code == 0
    users = yuxi(db, "access", "user", "list").output.splitlines()
    assert users == ["ann\tuser\teng\tdisabled", "root\tsuperadmin\t-\tactive"]

    async def resolve() -> None:
        repository = AccessRepository(f"sqlite+aiosqlite:///{db}")
        try:
            await ApiKeyStore(repository.store).resolve(issued.output.strip())
        finally:
            await repository.close()

    try:
        asyncio.run(resolve())
    except InvalidApiKey:
        pass
    else:
        raise AssertionError("a disabled user's key still resolved")


def test_look_alike_ids_and_bad_shares_are_refused_without_writing(tmp_path: Path) -> None:
    db = tmp_path / "platform.db"
    # Blanks, a control character, empty, a zero-width space, a decomposed é, a C1
    # control, a line separator, the API's name for the caller, a slash, oversize.
    odd = ("ann\u200b", "Jose\u0301", "ann\x85", "a\u2028b", "me", "a/b", "x" * 129)
    for bad in ("ann ", " ann", "an\x07n", "", *odd):
        result = yuxi(db, "access", "user", "add", bad)
        assert result.exit_code == 2, bad  # a usage error: nothing written
    assert yuxi(db, "access", "user", "list").output == ""
    assert yuxi(db, "access", "user", "add", "root").exit_code == 0
    both = yuxi(db, "access", "share", "kb", "k1", "--everyone", "--private", "--creator", "root")
    assert both.exit_code == 2
    ghost = yuxi(db, "access", "share", "kb", "k1", "--everyone", "--creator", "ghost")
    assert ghost.exit_code == 1 and "not a known user" in ghost.output
    assert yuxi(db, "access", "list").output == ""
    made = yuxi(db, "access", "share", "skill", "s1", "--private", "--creator", "root")
    assert made.output.strip() == "skill\ts1\tcreator only"
    other = yuxi(db, "access", "share", "skill", "s1", "--everyone", "--creator", "ann")
    assert other.exit_code == 1 and "created by 'root'" in other.output
    assert yuxi(db, "access", "user", "disable", "nobody").exit_code == 1

    async def scope() -> Scope:
        repository = AccessRepository(f"sqlite+aiosqlite:///{db}")
        try:
            return (await repository.get_resource(ResourceKind.SKILL, "s1")).share.read_scope
        finally:
            await repository.close()

    assert asyncio.run(scope()) == Scope.users()
