"""The access repository: users and resource share configs in the platform database.

It lives in the same database as sessions, memory and artifacts (one schema, one
version) and can share their `SqlStore`. Every write validates first and runs in one
transaction, so a refused write changes nothing. `load_principal` is what the runtime
asks at every model and tool call: it re-reads a user's rights only when the access
change marker (a version row bumped by trigger on every write to the access tables,
whoever makes it) moved, so a withdrawal is seen by the very next call and an unchanged
database costs one primary-key read.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from .._sql.store import SqlStore, Tx
from ._errors import AccessError, NotFoundError, ShareConfigError
from ._models import ResourceKind, ResourceRecord, Role, ShareConfig, User
from ._policy import can_read
from ._principal import Principal

__all__ = ["AccessRepository"]

_PRINCIPAL_CACHE = 1024
"""Principals kept per repository, each valid only under the change marker it was read at."""
_USER_COLUMNS = "id, name, role, department_id, active"
_RESOURCE_COLUMNS = "kind, id, creator_id, share, enabled"


def _user(row: Sequence[Any]) -> User:
    ident, name, role, department_id, active = row
    return User(
        id=ident, name=name, role=Role(role), department_id=department_id, active=bool(active)
    )


def _resource(row: Sequence[Any]) -> ResourceRecord:
    kind, ident, creator_id, share, enabled = row
    return ResourceRecord(
        kind=ResourceKind(kind),
        id=ident,
        creator_id=creator_id,
        share=ShareConfig.model_validate_json(share),
        enabled=bool(enabled),
    )


@functools.lru_cache(maxsize=4096)
def _row_may_read(user_row: tuple[Any, ...], resource_row: tuple[Any, ...]) -> bool:
    """`can_read` of the two rows as read: a pure function of their values, so the
    decision is remembered, not the rows' meaning (every call still reads them)."""
    return can_read(_user(user_row), _resource(resource_row))


class AccessRepository:
    """Users and resources, on an SQLAlchemy async URL, engine, or a shared `SqlStore`."""

    def __init__(self, db: str | URL | AsyncEngine | SqlStore, **engine_kwargs: Any) -> None:
        self._owns_store = not isinstance(db, SqlStore)
        self._store = db if isinstance(db, SqlStore) else SqlStore(db, **engine_kwargs)
        self._principals: OrderedDict[str, tuple[int, Principal]] = OrderedDict()

    @property
    def store(self) -> SqlStore:
        return self._store

    @property
    def engine(self) -> AsyncEngine:
        return self._store.engine

    async def prepare(self) -> None:
        """Creates the platform schema on a fresh database, or checks its version."""
        await self._store.ready()

    async def close(self) -> None:
        """Releases the connections, if this repository opened the store itself."""
        if self._owns_store:
            await self._store.close()

    # -- users --------------------------------------------------------------------------

    async def save_user(self, user: User) -> User:
        params = user.model_dump(mode="json")
        async with self._store.write() as tx:
            changed = await tx.execute(
                "UPDATE yx_users SET name = :name, role = :role,"
                " department_id = :department_id, active = :active WHERE id = :id",
                params,
            )
            if changed == 0:
                await tx.execute(
                    f"INSERT INTO yx_users ({_USER_COLUMNS})"
                    " VALUES (:id, :name, :role, :department_id, :active)",
                    params,
                )
        return user

    async def get_user(self, user_id: str) -> User:
        async with self._store.read() as tx:
            row = await tx.fetchone(
                f"SELECT {_USER_COLUMNS} FROM yx_users WHERE id = :id", {"id": user_id}
            )
        if row is None:
            raise NotFoundError("user", user_id)
        return _user(row)

    async def set_user_active(self, user_id: str, active: bool) -> None:
        async with self._store.write() as tx:
            changed = await tx.execute(
                "UPDATE yx_users SET active = :active WHERE id = :id",
                {"id": user_id, "active": active},
            )
            if changed == 0:
                raise NotFoundError("user", user_id)

    # -- resources ----------------------------------------------------------------------

    async def save_resource(self, record: ResourceRecord) -> ResourceRecord:
        """Creates or replaces a resource; raises `ShareConfigError` (and writes nothing)
        when the manage scope is not inside the read scope or the creator is unknown."""
        async with self._store.write() as tx:
            await self.save_resource_in(tx, record)
        return record

    @classmethod
    async def save_resource_in(cls, tx: Tx, record: ResourceRecord) -> None:
        """`save_resource` inside the caller's transaction, so a resource and the rows
        that describe it (a knowledge base, say) commit or roll back together."""
        params = {
            "kind": record.kind.value,
            "id": record.id,
            "creator_id": record.creator_id,
            "share": record.share.model_dump_json(),
            "enabled": record.enabled,
        }
        known = await cls._departments(tx, [record.creator_id])
        if record.creator_id not in known:
            raise ShareConfigError(f"creator {record.creator_id!r} is not a known user")
        departments = await cls._departments(tx, record.share.manage_scope.ids)
        record.share.check(departments.get)
        changed = await tx.execute(
            "UPDATE yx_resources SET creator_id = :creator_id, share = :share,"
            " enabled = :enabled WHERE kind = :kind AND id = :id",
            params,
        )
        if changed == 0:
            await tx.execute(
                f"INSERT INTO yx_resources ({_RESOURCE_COLUMNS})"
                " VALUES (:kind, :id, :creator_id, :share, :enabled)",
                params,
            )

    async def get_resource(self, kind: ResourceKind, ident: str) -> ResourceRecord:
        async with self._store.read() as tx:
            row = await tx.fetchone(
                f"SELECT {_RESOURCE_COLUMNS} FROM yx_resources WHERE kind = :kind AND id = :id",
                {"kind": kind.value, "id": ident},
            )
        if row is None:
            raise NotFoundError(kind.value, ident)
        return _resource(row)

    async def list_resources(self, kind: ResourceKind | None = None) -> list[ResourceRecord]:
        sql = f"SELECT {_RESOURCE_COLUMNS} FROM yx_resources"
        params: dict[str, Any] = {}
        if kind is not None:
            sql += " WHERE kind = :kind"
            params["kind"] = kind.value
        async with self._store.read() as tx:
            rows = await tx.fetchall(sql + " ORDER BY kind, id", params)
        return [_resource(row) for row in rows]

    async def set_resource_enabled(self, kind: ResourceKind, ident: str, enabled: bool) -> None:
        async with self._store.write() as tx:
            changed = await tx.execute(
                "UPDATE yx_resources SET enabled = :enabled WHERE kind = :kind AND id = :id",
                {"kind": kind.value, "id": ident, "enabled": enabled},
            )
            if changed == 0:
                raise NotFoundError(kind.value, ident)

    async def share(self, kind: ResourceKind, ident: str, share: ShareConfig) -> ResourceRecord:
        """Replaces only the share config of an existing resource."""
        current = await self.get_resource(kind, ident)
        return await self.save_resource(current.model_copy(update={"share": share}))

    # -- questions the runtime asks -----------------------------------------------------

    async def load_principal(self, user_id: str, *, marker: int | None = None) -> Principal:
        """The principal of `user_id` as the database holds it now. Raises
        `NotFoundError` for an unknown user.

        Cheap when nothing changed: every write to the access tables (by anyone, in any
        process) moves the change marker, and the principal is read again only when the
        marker moved since it was last read; otherwise this is one primary-key read.
        `marker` is that read done by the caller in a statement of its own just now
        (`ApiKeyStore.resolve_marked`); never one kept from an earlier request.
        """
        if marker is None:
            marker = await self.change_marker()
        cached = self._principals.get(user_id)
        if cached is not None and cached[0] == marker:
            self._principals.move_to_end(user_id)
            return cached[1]
        # Read after the marker: a write in between makes the marker newer than what is
        # cached under it, so the next call reads again (never the other way round).
        user = await self.get_user(user_id)
        principal = Principal.from_records(user, await self.list_resources())
        self._principals[user_id] = (marker, principal)
        if len(self._principals) > _PRINCIPAL_CACHE:
            self._principals.popitem(last=False)
        return principal

    current_principal = load_principal
    """What the runtime asks at every model and tool call (with this repository as
    `build_app`'s access)."""

    async def change_marker(self) -> int:
        """The access tables' version: it moves with every write to users or resources."""
        async with self._store.read() as tx:
            row = await tx.fetchone("SELECT version FROM yx_access_version WHERE id = 1")
        if row is None:
            raise AccessError("the access change marker row is missing")
        return int(row[0])

    async def execution_denial(self, user_id: str, agent_id: str) -> str | None:
        """Why `user_id` may no longer run `agent_id`, or None while they still may.

        One query (the user's row joined to the agent's), so a change is seen by the
        very next call. The reason names nothing the user could not see.
        """
        async with self._store.read() as tx:
            return await self.execution_denial_in(tx, user_id, agent_id)

    @staticmethod
    async def execution_denial_in(tx: Tx, user_id: str, agent_id: str) -> str | None:
        """`execution_denial` inside a caller's transaction, so a write can be made
        conditional on the right it re-checks."""
        row = await tx.fetchone(
            "SELECT u.id, u.name, u.role, u.department_id, u.active,"
            " r.kind, r.id, r.creator_id, r.share, r.enabled"
            " FROM yx_users u LEFT JOIN yx_resources r"
            " ON r.kind = :kind AND r.id = :agent WHERE u.id = :user",
            {"kind": ResourceKind.AGENT.value, "agent": agent_id, "user": user_id},
        )
        if row is None or not row[4]:
            return "this user account is disabled"
        if row[5] is None or not row[9]:
            return "this agent is no longer available"
        if not can_read(_user(row[:5]), _resource(row[5:])):
            return "this user may no longer use this agent"
        return None

    async def readable_among(
        self, user_id: str, kind: ResourceKind, idents: Iterable[str] | None
    ) -> tuple[User, frozenset[str]]:
        """The user as now, and which of `idents` (None: of every resource of `kind`) they
        may read now (enabled ones only).

        One query, no cache: the per-call check of resource-scoped tools (knowledge),
        so a withdrawn share or a disabled account is seen by the very next call.
        Raises `NotFoundError` for an unknown user.
        """
        names: dict[str, str] = {}
        among = ""
        if idents is not None:
            ids = sorted(set(idents))[:1000]
            names = {f"r{i}": ident for i, ident in enumerate(ids)}
            among = f" AND r.id IN ({', '.join(f':{name}' for name in names) or 'NULL'})"
        async with self._store.read() as tx:
            rows = await tx.fetchall(
                "SELECT u.id, u.name, u.role, u.department_id, u.active,"
                " r.kind, r.id, r.creator_id, r.share, r.enabled"
                " FROM yx_users u LEFT JOIN yx_resources r"
                f" ON r.kind = :kind{among} WHERE u.id = :user",
                {"kind": kind.value, "user": user_id, **names},
            )
        if not rows:
            raise NotFoundError("user", user_id)
        user_row = tuple(rows[0][:5])
        readable = frozenset(
            row[6]
            for row in rows
            if row[5] is not None and row[9] and _row_may_read(user_row, tuple(row[5:]))
        )
        return _user(user_row), readable

    # -- helpers ------------------------------------------------------------------------

    @staticmethod
    async def _departments(tx: Tx, user_ids: Iterable[str]) -> dict[str, str | None]:
        """Department of each known user among `user_ids` (unknown ids are absent)."""
        ids = sorted(set(user_ids))
        if not ids:
            return {}
        names = {f"u{i}": ident for i, ident in enumerate(ids)}
        placeholders = ", ".join(f":{name}" for name in names)
        rows = await tx.fetchall(
            f"SELECT id, department_id FROM yx_users WHERE id IN ({placeholders})", names
        )
        return {row[0]: row[1] for row in rows}
