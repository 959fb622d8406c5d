"""The API key table, registered as its own schema part (applied by every store)."""

from __future__ import annotations

from sqlalchemy import Column, Double, Index, MetaData, Table, Text

from .._sql import Migration, SchemaPart, Step

__all__ = ["API_KEYS_PART", "api_keys"]

metadata = MetaData()

api_keys = Table(
    "yx_api_keys",
    metadata,
    Column("id", Text, primary_key=True),
    Column("user_id", Text, nullable=False),
    # sha256 (hex) of the whole token: the token itself is shown once and never stored.
    Column("token_hash", Text, nullable=False, unique=True),
    Column("label", Text, nullable=False),
    Column("created_by", Text, nullable=False),
    Column("created_at", Double, nullable=False),
    Column("expires_at", Double),
    Column("revoked_at", Double),
    Index("ix_yx_api_keys_user", "user_id", "created_at", "id"),
)


async def _create(m: Migration) -> None:
    await m.create_tables(api_keys)


API_KEYS_PART = SchemaPart("api_keys", (Step(1, "API keys", _create),))
