"""The waiting point table, registered as its own schema part (applied by every store)."""

from __future__ import annotations

from sqlalchemy import Column, Double, Index, Integer, MetaData, Table, Text

from .._sql import Migration, SchemaPart, Step

__all__ = ["WAITPOINTS_PART", "waitpoints"]

metadata = MetaData()

waitpoints = Table(
    "yx_waitpoints",
    metadata,
    # Derived from (app, user, session, invocation, call id): the interrupt id ADK
    # resumes with, and the key that makes opening the same waiting point idempotent.
    Column("id", Text, primary_key=True),
    Column("app_name", Text, nullable=False),
    Column("user_id", Text, nullable=False),
    Column("session_id", Text, nullable=False),
    Column("invocation_id", Text, nullable=False),
    Column("call_id", Text, nullable=False),
    # The normalised question set (JSON) and the contract version it was stored under.
    Column("questions", Text, nullable=False),
    Column("questions_schema", Integer, nullable=False),
    # pending -> answered | cancelled, once, by a conditional UPDATE.
    Column("status", Text, nullable=False),
    Column("answers", Text),
    Column("created_at", Double, nullable=False),
    Column("updated_at", Double, nullable=False),
    Index("ix_yx_waitpoints_user", "app_name", "user_id", "status", "created_at", "id"),
    Index(
        "ix_yx_waitpoints_session",
        "app_name",
        "user_id",
        "session_id",
        "status",
        "created_at",
        "id",
    ),
)


async def _create(m: Migration) -> None:
    await m.create_tables(waitpoints)


WAITPOINTS_PART = SchemaPart("waitpoints", (Step(1, "waiting points", _create),))
