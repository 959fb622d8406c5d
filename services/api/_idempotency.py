"""`Idempotency-Key` on the POSTs that start work: a retry gets the original result.

The key is claimed *before* the work starts (one row per user, scope and key; the
primary key makes two concurrent claims have one winner), with a hash of the request
body and what a retry needs to answer the same way. A retry with another body is 409.
Keys are kept for good: a table for a later session to expire.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from typing import Any

from sqlalchemy import Column, Double, MetaData, PrimaryKeyConstraint, Table, Text

from adk_yuxi._sql import (
    IntegrityViolation,
    Migration,
    SchemaPart,
    SqlStore,
    Step,
    register_schema_part,
)

from ._errors import ApiError

__all__ = ["IdempotencyKeys", "body_hash", "check_key"]

metadata = MetaData()
idempotency = Table(
    "yx_api_idempotency",
    metadata,
    Column("user_id", Text, nullable=False),
    Column("scope", Text, nullable=False),
    Column("idem_key", Text, nullable=False),
    Column("request_hash", Text, nullable=False),
    Column("result", Text, nullable=False),
    Column("created_at", Double, nullable=False),
    PrimaryKeyConstraint("user_id", "scope", "idem_key"),
)


async def _create(m: Migration) -> None:
    await m.create_tables(idempotency)


register_schema_part(SchemaPart("host_api", (Step(1, "idempotency keys", _create),)))

_KEY = re.compile(r"^[\x21-\x7e]{1,128}$")


def check_key(key: str) -> str:
    if not _KEY.fullmatch(key):
        raise ApiError(
            422, "invalid_request", "Idempotency-Key must be 1-128 visible ASCII characters"
        )
    return key


def body_hash(body: Any) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class IdempotencyKeys:
    def __init__(self, store: SqlStore) -> None:
        self._store = store

    async def claim(
        self, user_id: str, scope: str, key: str, request_hash: str, result: dict[str, Any]
    ) -> tuple[bool, dict[str, Any]]:
        """(True, result) if this call claimed the key, else (False, the first result);
        409 when the key was first used with another body."""
        params = {"user": user_id, "scope": scope, "key": key}
        try:
            async with self._store.write() as tx:
                await tx.execute(
                    "INSERT INTO yx_api_idempotency"
                    " (user_id, scope, idem_key, request_hash, result, created_at)"
                    " VALUES (:user, :scope, :key, :hash, :result, :now)",
                    {
                        **params,
                        "hash": request_hash,
                        "result": json.dumps(result),
                        "now": time.time(),
                    },
                )
            return True, result
        except IntegrityViolation:
            pass
        async with self._store.read() as tx:
            row = await tx.fetchone(
                "SELECT request_hash, result FROM yx_api_idempotency"
                " WHERE user_id = :user AND scope = :scope AND idem_key = :key",
                params,
            )
        if row is None:  # claimed and released between the two statements
            raise ApiError(409, "conflict", "this Idempotency-Key is in use; retry")
        if row[0] != request_hash:
            raise ApiError(409, "conflict", "this Idempotency-Key was used with another request")
        first: dict[str, Any] = json.loads(row[1])
        return False, first

    async def release(self, user_id: str, scope: str, key: str) -> None:
        """Forgets a claim whose work was refused, so nothing of it is left."""
        async with self._store.write() as tx:
            await tx.execute(
                "DELETE FROM yx_api_idempotency"
                " WHERE user_id = :user AND scope = :scope AND idem_key = :key",
                {"user": user_id, "scope": scope, "key": key},
            )
