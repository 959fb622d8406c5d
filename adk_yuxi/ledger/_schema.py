"""The run ledger table, registered as its own schema part (applied by every store)."""

from __future__ import annotations

from sqlalchemy import Column, Double, Index, MetaData, Table, Text, UniqueConstraint

from .._sql import Migration, SchemaPart, Step, register_schema_part

__all__ = ["LEDGER_PART", "runs"]

metadata = MetaData()

runs = Table(
    "yx_runs",
    metadata,
    Column("run_id", Text, primary_key=True),
    Column("app_name", Text, nullable=False),
    Column("user_id", Text, nullable=False),
    Column("session_id", Text, nullable=False),
    Column("invocation_id", Text, nullable=False),
    Column("agent_name", Text, nullable=False),
    # The worker holding the execution lease, and until when it holds it.
    Column("worker", Text, nullable=False),
    Column("lease_expires_at", Double, nullable=False),
    # running | waiting | completed | failed | cancelled
    Column("status", Text, nullable=False),
    Column("error", Text),
    Column("started_at", Double, nullable=False),
    Column("updated_at", Double, nullable=False),
    Column("ended_at", Double),
    UniqueConstraint(
        "app_name", "user_id", "session_id", "invocation_id", name="uq_yx_runs_invocation"
    ),
    Index("ix_yx_runs_lease", "status", "lease_expires_at"),
)


async def _create(m: Migration) -> None:
    await m.create_tables(runs)


LEDGER_PART = SchemaPart("ledger", (Step(1, "runs and their leases", _create),))
register_schema_part(LEDGER_PART)
