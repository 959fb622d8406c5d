"""The improvement mark table, registered as its own schema part (applied by every store)."""

from __future__ import annotations

from sqlalchemy import Column, Double, Index, MetaData, Table, Text, UniqueConstraint

from .._sql import Migration, SchemaPart, Step

__all__ = ["MARKS_PART", "marks"]

metadata = MetaData()

marks = Table(
    "yx_marks",
    metadata,
    Column("id", Text, primary_key=True),
    Column("run_id", Text, nullable=False),
    Column("call_id", Text, nullable=False),
    Column("app_name", Text, nullable=False),
    Column("user_id", Text, nullable=False),
    Column("agent_name", Text, nullable=False),
    Column("session_id", Text, nullable=False),
    Column("invocation_id", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("created_at", Double, nullable=False),
    # A replayed call finds its mark instead of adding a second one.
    UniqueConstraint("run_id", "call_id", name="uq_yx_marks_call"),
    Index("ix_yx_marks_time", "created_at", "id"),
    Index("ix_yx_marks_user", "user_id", "created_at", "id"),
)


async def _create(m: Migration) -> None:
    await m.create_tables(marks)


MARKS_PART = SchemaPart("marks", (Step(1, "improvement marks", _create),))
