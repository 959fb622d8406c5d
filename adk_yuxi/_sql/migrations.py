"""The schema's migration home: named parts, each a list of versioned steps.

A *part* is one component's tables (``platform`` holds sessions, memory,
artifacts and access; another package registers its own). Each part has one row
in ``yx_schema_version`` naming the last step applied. When a store gets ready it
takes the schema lock (SQLite ``BEGIN IMMEDIATE``, PostgreSQL advisory lock),
applies every registered part's pending steps in order and records the new
versions, all in that one transaction: two processes starting together never
both migrate, and a failing step leaves the database as it was.

A fresh database runs every step from the first, so the first step of a part is
its baseline. A database whose version is newer than the code knows, or older
than a part's first step, is refused with ``SchemaVersionError``.
How to add a step or a part: ``docs/operations.md``, "Schema migrations".
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import Column, Integer, MetaData, Table, Text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection

from .errors import SchemaVersionError
from .urls import Backend

__all__ = [
    "Migration",
    "SchemaPart",
    "Step",
    "apply_parts",
    "register_schema_part",
    "schema_parts",
]

version_metadata = MetaData()
schema_version = Table(
    "yx_schema_version",
    version_metadata,
    Column("name", Text, primary_key=True),
    Column("version", Integer, nullable=False),
)


@dataclass(frozen=True)
class Migration:
    """What a step works with: the connection holding the schema lock."""

    conn: AsyncConnection
    backend: Backend

    async def execute(self, sql: str) -> None:
        """Runs one DDL or DML statement."""
        await self.conn.exec_driver_sql(sql)

    async def create_tables(self, *tables: Table) -> None:
        """Creates these tables (and their indexes) with portable DDL."""

        def create(sync_conn: Connection) -> None:
            for table in tables:
                table.create(sync_conn)

        await self.conn.run_sync(create)

    async def run_ddl(self, ddl: Mapping[Backend, Sequence[str]]) -> None:
        """Runs the statements listed for this backend (triggers, full-text indexes)."""
        for statement in ddl.get(self.backend, ()):
            await self.execute(statement)

    async def run_sync(self, fn: Callable[[Connection], object]) -> None:
        """Runs ``fn`` with a synchronous SQLAlchemy connection (data moves)."""
        await self.conn.run_sync(fn)


@dataclass(frozen=True)
class Step:
    """One schema change: it brings its part to ``version``."""

    version: int
    summary: str
    apply: Callable[[Migration], Awaitable[None]]


@dataclass(frozen=True)
class SchemaPart:
    """A component's tables as a sequence of steps with consecutive versions."""

    name: str
    steps: tuple[Step, ...]

    def __post_init__(self) -> None:
        if not self.steps:
            raise ValueError(f"Schema part {self.name!r} has no steps.")
        versions = [step.version for step in self.steps]
        expected = list(range(versions[0], versions[0] + len(versions)))
        if versions[0] < 1 or versions != expected:
            raise ValueError(
                f"Schema part {self.name!r}: step versions must be consecutive from at"
                f" least 1, got {versions}."
            )

    @property
    def version(self) -> int:
        """The version a database has once every step ran."""
        return self.steps[-1].version

    def pending(self, found: int | None) -> tuple[Step, ...]:
        """The steps to apply to a database at ``found`` (None: part absent)."""
        if found is None:
            return self.steps
        if found > self.version or found < self.steps[0].version:
            raise SchemaVersionError(expected=self.version, found=found, part=self.name)
        return tuple(step for step in self.steps if step.version > found)


_lock = threading.Lock()
_parts: dict[str, SchemaPart] = {}


def register_schema_part(part: SchemaPart) -> None:
    """Adds a part that every store applies from its next ``ready()`` on.

    Registering the same part again is a no-op; another part under a taken name
    is refused.
    """
    with _lock:
        known = _parts.get(part.name)
        if known is not None and known is not part:
            raise ValueError(f"A schema part named {part.name!r} is already registered.")
        _parts[part.name] = part


def schema_generation() -> int:
    """How many parts are registered: a store ready for this many has nothing to do
    (parts are only ever added; a cheap check for every statement)."""
    return len(_parts)


def schema_parts() -> tuple[SchemaPart, ...]:
    """Registered parts in registration order (``platform`` first)."""
    with _lock:
        return tuple(_parts.values())


def _found_versions(sync_conn: Connection) -> dict[str, int]:
    schema_version.create(sync_conn, checkfirst=True)
    rows = sync_conn.execute(schema_version.select()).all()
    return {str(name): int(version) for name, version in rows}


async def apply_parts(conn: AsyncConnection, backend: Backend, parts: Sequence[SchemaPart]) -> None:
    """Applies pending steps of ``parts``; the caller holds the schema lock and commits."""
    found = await conn.run_sync(_found_versions)
    for part in parts:
        steps = part.pending(found.get(part.name))
        for step in steps:
            await step.apply(Migration(conn, backend))
        if not steps:
            continue
        if part.name in found:
            await conn.execute(
                schema_version.update()
                .where(schema_version.c.name == part.name)
                .values(version=part.version)
            )
        else:
            await conn.execute(schema_version.insert().values(name=part.name, version=part.version))
