"""The access repository: users and resource share configs in SQL.

Every write validates first and runs in one transaction, so a refused write changes
nothing. Reads return detached values, never live rows. `execution_denial` is the cheap
per-call question the authorization plugin asks at every model and tool call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from ._errors import NotFoundError, ShareConfigError
from ._models import ResourceKind, ResourceRecord, Role, ShareConfig, User
from ._policy import can_read
from ._principal import Principal
from ._tables import metadata, resources, users

__all__ = ["AccessRepository"]


def _user(row: Any) -> User:
    return User(
        id=row.id,
        name=row.name,
        role=Role(row.role),
        department_id=row.department_id,
        active=bool(row.active),
    )


def _resource(row: Any) -> ResourceRecord:
    return ResourceRecord(
        kind=ResourceKind(row.kind),
        id=row.id,
        creator_id=row.creator_id,
        share=ShareConfig.model_validate(row.share),
        enabled=bool(row.enabled),
    )


class AccessRepository:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    @property
    def engine(self) -> AsyncEngine:
        return self._engine

    async def create_tables(self) -> None:
        async with self._engine.begin() as conn:
            await conn.run_sync(metadata.create_all)

    # -- users --------------------------------------------------------------------------

    async def save_user(self, user: User) -> User:
        values = user.model_dump(mode="json")
        async with self._engine.begin() as conn:
            found = await conn.execute(sa.select(users.c.id).where(users.c.id == user.id))
            if found.first() is None:
                await conn.execute(users.insert().values(**values))
            else:
                await conn.execute(users.update().where(users.c.id == user.id).values(**values))
        return user

    async def get_user(self, user_id: str) -> User:
        async with self._engine.connect() as conn:
            row = (await conn.execute(sa.select(users).where(users.c.id == user_id))).first()
        if row is None:
            raise NotFoundError("user", user_id)
        return _user(row)

    async def set_user_active(self, user_id: str, active: bool) -> None:
        async with self._engine.begin() as conn:
            result = await conn.execute(
                users.update().where(users.c.id == user_id).values(active=active)
            )
            if result.rowcount == 0:
                raise NotFoundError("user", user_id)

    # -- resources ----------------------------------------------------------------------

    async def save_resource(self, record: ResourceRecord) -> ResourceRecord:
        """Creates or replaces a resource; raises `ShareConfigError` (and writes nothing)
        when the manage scope is not inside the read scope or the creator is unknown."""
        async with self._engine.begin() as conn:
            if await self._department(conn, record.creator_id) is _MISSING:
                raise ShareConfigError(f"creator {record.creator_id!r} is not a known user")
            departments = await self._departments(conn, record.share.manage_scope.ids)
            record.share.check(departments.get)
            values = {
                "kind": record.kind.value,
                "id": record.id,
                "creator_id": record.creator_id,
                "share": record.share.model_dump(mode="json"),
                "enabled": record.enabled,
            }
            where = sa.and_(resources.c.kind == record.kind.value, resources.c.id == record.id)
            found = await conn.execute(sa.select(resources.c.id).where(where))
            if found.first() is None:
                await conn.execute(resources.insert().values(**values))
            else:
                await conn.execute(resources.update().where(where).values(**values))
        return record

    async def get_resource(self, kind: ResourceKind, ident: str) -> ResourceRecord:
        where = sa.and_(resources.c.kind == kind.value, resources.c.id == ident)
        async with self._engine.connect() as conn:
            row = (await conn.execute(sa.select(resources).where(where))).first()
        if row is None:
            raise NotFoundError(kind.value, ident)
        return _resource(row)

    async def list_resources(self, kind: ResourceKind | None = None) -> list[ResourceRecord]:
        query = sa.select(resources).order_by(resources.c.kind, resources.c.id)
        if kind is not None:
            query = query.where(resources.c.kind == kind.value)
        async with self._engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [_resource(row) for row in rows]

    async def set_resource_enabled(self, kind: ResourceKind, ident: str, enabled: bool) -> None:
        where = sa.and_(resources.c.kind == kind.value, resources.c.id == ident)
        async with self._engine.begin() as conn:
            result = await conn.execute(resources.update().where(where).values(enabled=enabled))
            if result.rowcount == 0:
                raise NotFoundError(kind.value, ident)

    async def share(self, kind: ResourceKind, ident: str, share: ShareConfig) -> ResourceRecord:
        """Replaces only the share config of an existing resource."""
        current = await self.get_resource(kind, ident)
        return await self.save_resource(current.model_copy(update={"share": share}))

    # -- questions the runtime asks -----------------------------------------------------

    async def load_principal(self, user_id: str) -> Principal:
        user = await self.get_user(user_id)
        return Principal.from_records(user, await self.list_resources())

    async def execution_denial(self, user_id: str, agent_id: str) -> str | None:
        """Why `user_id` may no longer run `agent_id`, or None while they still may.

        Two indexed primary-key reads on one connection; no caching, so a change is
        seen by the very next call. The reason names nothing the user could not see.
        """
        where = sa.and_(resources.c.kind == ResourceKind.AGENT.value, resources.c.id == agent_id)
        async with self._engine.connect() as conn:
            user_row = (await conn.execute(sa.select(users).where(users.c.id == user_id))).first()
            agent_row = (await conn.execute(sa.select(resources).where(where))).first()
        if user_row is None or not user_row.active:
            return "this user account is disabled"
        if agent_row is None or not agent_row.enabled:
            return "this agent is no longer available"
        if not can_read(_user(user_row), _resource(agent_row)):
            return "this user may no longer use this agent"
        return None

    # -- helpers ------------------------------------------------------------------------

    async def _department(self, conn: AsyncConnection, user_id: str) -> object:
        row = (
            await conn.execute(sa.select(users.c.department_id).where(users.c.id == user_id))
        ).first()
        return _MISSING if row is None else row.department_id

    async def _departments(
        self, conn: AsyncConnection, user_ids: Iterable[str]
    ) -> dict[str, str | None]:
        ids = list(user_ids)
        if not ids:
            return {}
        rows = await conn.execute(
            sa.select(users.c.id, users.c.department_id).where(users.c.id.in_(ids))
        )
        return {row.id: row.department_id for row in rows}


_MISSING = object()
