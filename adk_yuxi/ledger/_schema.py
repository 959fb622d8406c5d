"""The run ledger table, registered as its own schema part (applied by every store).

`runs` is the version-1 baseline; step 2 adds `cancel_requested_at` and the partial
unique index that lets a session have one `running` run at a time.
"""

from __future__ import annotations

from sqlalchemy import Column, Double, Index, MetaData, Table, Text, UniqueConstraint

from .._sql import Migration, SchemaPart, Step

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


# Rows that step 2's unique index would refuse (several running runs of one session,
# possible before it): all but the newest are closed first, as a dead worker's would be.
_SUPERSEDED = (
    "UPDATE yx_runs SET status = 'failed', error = 'worker_lease_expired',"
    " ended_at = updated_at WHERE status = 'running' AND EXISTS (SELECT 1 FROM yx_runs o"
    " WHERE o.app_name = yx_runs.app_name AND o.user_id = yx_runs.user_id"
    " AND o.session_id = yx_runs.session_id AND o.status = 'running'"
    " AND (o.started_at > yx_runs.started_at"
    " OR (o.started_at = yx_runs.started_at AND o.run_id > yx_runs.run_id)))"
)


async def _one_running_per_session(m: Migration) -> None:
    await m.execute("ALTER TABLE yx_runs ADD COLUMN cancel_requested_at DOUBLE PRECISION")
    await m.execute(_SUPERSEDED)
    await m.execute(
        "CREATE UNIQUE INDEX uq_yx_runs_running_session ON yx_runs"
        " (app_name, user_id, session_id) WHERE status = 'running'"
    )


LEDGER_PART = SchemaPart(
    "ledger",
    (
        Step(1, "runs and their leases", _create),
        Step(2, "cancel requests; one running run per session", _one_running_per_session),
    ),
)
