"""`yuxi access`: users and shares from a terminal, as the database's operator.

Without it a host API (or any principal source on the access database) could only be
set up from Python: `yuxi api-key issue` needs a known user, and an agent a share.
Ids are taken exactly as typed; one with surrounding blanks, invisible characters or a
non-NFC spelling is refused rather than stored beside its look-alike.
"""

from __future__ import annotations

import asyncio
import unicodedata
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import click

from ._database import DB_OPTION
from ._table import echo_cells

if TYPE_CHECKING:
    from adk_yuxi.access import AccessRepository, ResourceRecord, Scope

__all__ = ["access"]

T = TypeVar("T")
_KINDS = {
    "agent": "agent",
    "knowledge_base": "knowledge_base",
    "kb": "knowledge_base",
    "skill": "skill",
    "mcp_server": "mcp_server",
}


# Control, format (zero-width), surrogate and line/paragraph separator characters.
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_RESERVED_USERS = frozenset({"me"})  # the host API's name for the caller


def _ident(value: str, what: str) -> str:
    """An id as typed, if it can only be read one way: no surrounding blanks, nothing
    invisible, NFC (so "é" typed two ways is not two users)."""
    if not value or value != value.strip():
        raise click.BadParameter(f"a {what} is not empty and has no surrounding blanks")
    if any(unicodedata.category(ch) in _INVISIBLE for ch in value):
        raise click.BadParameter(f"a {what} has no control or invisible characters")
    if unicodedata.normalize("NFC", value) != value:
        raise click.BadParameter(f"a {what} is in Unicode NFC form (as keyboards type it)")
    if len(value) > 128:
        raise click.BadParameter(f"a {what} has at most 128 characters")
    return value


def _user_id(value: str) -> str:
    """A user id, which must also be addressable in the host API's paths."""
    _ident(value, "user id")
    if value in _RESERVED_USERS or "/" in value:
        raise click.BadParameter("a user id is not 'me' and has no '/' (the host API's paths)")
    return value


def _run(db: str, work: Callable[[AccessRepository], Awaitable[T]]) -> T:
    """Runs `work(repository)` on the access records of `db`; library errors become
    one-line CLI errors."""
    from adk_yuxi.access import AccessRepository
    from adk_yuxi.errors import YuxiError

    async def main() -> T:
        repository = AccessRepository(db)
        try:
            await repository.prepare()
            return await work(repository)
        finally:
            await repository.close()

    try:
        return asyncio.run(main())
    except (YuxiError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


@click.group("access")
def access() -> None:
    """Users, their roles and departments, and who may use each resource."""


@access.group("user")
def user() -> None:
    """Add, list, disable and enable users."""


@user.command("add")
@click.argument("user_id")
@click.option("--name", default="", help="A display name.")
@click.option(
    "--role", type=click.Choice(["user", "admin", "superadmin"]), default="user", show_default=True
)
@click.option("--department", default=None, help="The user's department id.")
@DB_OPTION
def add_user(user_id: str, name: str, role: str, department: str | None, db: str) -> None:
    """A new user (an existing id is refused: nothing is overwritten)."""
    from adk_yuxi.access import NotFoundError, Role, User

    ident = _user_id(user_id)
    dept = _ident(department, "department id") if department is not None else None

    async def work(repository: AccessRepository) -> None:
        try:
            await repository.get_user(ident)
        except NotFoundError:
            await repository.save_user(
                User(id=ident, name=name, role=Role(role), department_id=dept)
            )
            return
        raise click.ClickException(f"user {ident!r} exists")

    _run(db, work)
    echo_cells([ident, role, dept or "-"])


def _set_active(user_id: str, db: str, active: bool) -> None:
    async def work(repository: AccessRepository) -> None:
        await repository.set_user_active(user_id, active)

    _run(db, work)
    echo_cells([user_id, "active" if active else "disabled"])


@user.command("disable")
@click.argument("user_id")
@DB_OPTION
def disable_user(user_id: str, db: str) -> None:
    """Stops the user at once: runs, API keys and delegations are refused."""
    _set_active(user_id, db, False)


@user.command("enable")
@click.argument("user_id")
@DB_OPTION
def enable_user(user_id: str, db: str) -> None:
    """Lets a disabled user in again: runs and the user's live API keys work at once."""
    _set_active(user_id, db, True)


@user.command("list")
@DB_OPTION
def list_users(db: str) -> None:
    """One line per user: id, role, department, active or disabled."""

    async def work(repository: AccessRepository) -> list[tuple[str, ...]]:
        async with repository.store.read() as tx:
            rows = await tx.fetchall(
                "SELECT id, role, department_id, active FROM yx_users ORDER BY id"
            )
        return [(r[0], r[1], r[2] or "-", "active" if r[3] else "disabled") for r in rows]

    for row in _run(db, work):
        echo_cells(row)


@access.command("share")
@click.argument("kind", type=click.Choice(sorted(_KINDS)))
@click.argument("resource_id")
@click.option("--everyone", is_flag=True, help="Every active user may read (use) it.")
@click.option("--user", "users", multiple=True, help="A user who may use it (repeatable).")
@click.option("--department", "departments", multiple=True, help="A department (repeatable).")
@click.option("--private", is_flag=True, help="Only its creator (and admins).")
@click.option("--creator", default=None, help="Creator, when the resource is new.")
@DB_OPTION
def share(
    kind: str,
    resource_id: str,
    everyone: bool,
    users: tuple[str, ...],
    departments: tuple[str, ...],
    private: bool,
    creator: str | None,
    db: str,
) -> None:
    """Sets who may read (use) a resource; a new one is recorded with `--creator`.

    The manage scope is kept; a read scope that no longer contains it is refused.
    """
    from adk_yuxi.access import NotFoundError, ResourceKind, ResourceRecord, Scope, ShareConfig

    chosen = [everyone, bool(users), bool(departments), private]
    if sum(chosen) != 1:
        raise click.UsageError("give exactly one of --everyone, --user, --department, --private")
    if everyone:
        read = Scope.everyone()
    elif users:
        read = Scope.users(*(_user_id(u) for u in users))
    elif departments:
        read = Scope.departments(*(_ident(d, "department id") for d in departments))
    else:
        read = Scope.users()
    resource_kind = ResourceKind(_KINDS[kind])
    ident = _ident(resource_id, "resource id")

    async def work(repository: AccessRepository) -> ResourceRecord:
        try:
            current = await repository.get_resource(resource_kind, ident)
        except NotFoundError:
            if creator is None:
                raise click.ClickException(
                    f"{kind} {ident!r} is not recorded yet: give --creator USER to record it"
                ) from None
            record = ResourceRecord(
                kind=resource_kind, id=ident, creator_id=_user_id(creator),
                share=ShareConfig(read_scope=read),
            )  # fmt: skip
            return await repository.save_resource(record)
        if creator is not None and creator != current.creator_id:
            raise click.ClickException(
                f"{kind} {ident!r} was created by {current.creator_id!r}; --creator only"
                " names the creator of a new resource"
            )
        updated = ShareConfig(read_scope=read, manage_scope=current.share.manage_scope)
        return await repository.share(resource_kind, ident, updated)

    record = _run(db, work)
    echo_cells([record.kind.value, record.id, _scope_text(record.share.read_scope)])


def _scope_text(scope: Scope) -> str:
    if scope.kind == "global":
        return "everyone"
    if not scope.ids:
        return "creator only"
    return f"{scope.kind}s: {', '.join(scope.ids)}"


@access.command("list")
@click.option("--kind", type=click.Choice(sorted(_KINDS)), default=None)
@DB_OPTION
def list_resources(kind: str | None, db: str) -> None:
    """One line per resource: kind, id, creator, who may use it, enabled or disabled."""
    from adk_yuxi.access import ResourceKind

    async def work(repository: AccessRepository) -> list[ResourceRecord]:
        chosen = ResourceKind(_KINDS[kind]) if kind is not None else None
        return list(await repository.list_resources(chosen))

    for record in _run(db, work):
        state = "enabled" if record.enabled else "disabled"
        echo_cells(
            [
                record.kind.value,
                record.id,
                record.creator_id,
                _scope_text(record.share.read_scope),
                state,
            ]
        )
