"""`Idempotency-Key` on the POSTs that start work: a retry gets the original result.

The key is claimed *before* the work starts (one row per user, scope and key; the
primary key makes two concurrent claims have one winner), with a hash of the request
body and what a retry needs to answer the same way. A retry with another body is 409.
A key older than the retention (`ApiConfig.idempotency_ttl_seconds`, 24 h by default)
is forgotten: its next use is a new request, and expired rows are deleted lazily (at
most every five minutes, or every TTL if shorter, by a process claiming a key).
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
    Tx,
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


HOST_API_PART = SchemaPart("host_api", (Step(1, "idempotency keys", _create),))

_KEY = re.compile(r"^[\x21-\x7e]{1,128}$")


def check_key(key: str) -> str:
    if not _KEY.fullmatch(key):
        raise ApiError(
            422, "invalid_request", "Idempotency-Key must be 1-128 visible ASCII characters"
        )
    return key


def body_hash(body: Any) -> str:
    """The hash of a request body; "surrogatepass": a lone surrogate (a JSON escape
    such as "\\ud800") hashes rather than failing, so the body's own check refuses it."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


_PURGE_EVERY_S = 300.0
_WHERE = "user_id = :user AND scope = :scope AND idem_key = :key"


class IdempotencyKeys:
    """Claims of one store; `ttl_seconds` None keeps keys for good."""

    def __init__(self, store: SqlStore, *, ttl_seconds: float | None = 86400.0) -> None:
        if ttl_seconds is not None and ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive (or None: kept for good)")
        self._store = store
        self._ttl = ttl_seconds
        register_schema_part(HOST_API_PART)  # its table, in every store it works on
        self._next_purge = 0.0

    async def _purge(self, cutoff: float) -> None:
        if time.monotonic() < self._next_purge:
            return
        self._next_purge = time.monotonic() + min(_PURGE_EVERY_S, self._ttl or _PURGE_EVERY_S)
        async with self._store.write() as tx:
            await tx.execute(
                "DELETE FROM yx_api_idempotency WHERE created_at < :cutoff", {"cutoff": cutoff}
            )

    async def claim(
        self, user_id: str, scope: str, key: str, request_hash: str, result: dict[str, Any]
    ) -> tuple[bool, dict[str, Any]]:
        """(True, result) if this call claimed the key, else (False, the first result);
        409 when the key was first used with another body. An expired claim is taken
        over in one statement, so two retries after expiry still have one winner."""
        now = time.time()
        cutoff = now - self._ttl if self._ttl is not None else None
        if cutoff is not None:
            await self._purge(cutoff)
        params = {"user": user_id, "scope": scope, "key": key}
        values = {**params, "hash": request_hash, "result": json.dumps(result), "now": now}
        try:
            async with self._store.write() as tx:
                await tx.execute(
                    "INSERT INTO yx_api_idempotency"
                    " (user_id, scope, idem_key, request_hash, result, created_at)"
                    " VALUES (:user, :scope, :key, :hash, :result, :now)",
                    values,
                )
            return True, result
        except IntegrityViolation:
            pass
        if cutoff is not None:
            async with self._store.write() as tx:
                taken = await tx.execute(
                    "UPDATE yx_api_idempotency SET request_hash = :hash, result = :result,"
                    f" created_at = :now WHERE {_WHERE} AND created_at < :cutoff",
                    {**values, "cutoff": cutoff},
                )
            if taken == 1:
                return True, result
        async with self._store.read() as tx:
            row = await tx.fetchone(
                f"SELECT request_hash, result FROM yx_api_idempotency WHERE {_WHERE}", params
            )
        if row is None:  # claimed and released between the two statements
            raise ApiError(409, "conflict", "this Idempotency-Key is in use; retry")
        if row[0] != request_hash:
            raise ApiError(409, "conflict", "this Idempotency-Key was used with another request")
        first: dict[str, Any] = json.loads(row[1])
        return False, first

    async def held(self, user_id: str, scope: str, key: str) -> bool:
        """Whether the key is claimed (a first request still working, or done)."""
        async with self._store.read() as tx:
            row = await tx.fetchone(
                f"SELECT 1 FROM yx_api_idempotency WHERE {_WHERE}",
                {"user": user_id, "scope": scope, "key": key},
            )
        return row is not None

    async def release(self, user_id: str, scope: str, key: str) -> None:
        """Forgets a claim whose work was refused, so nothing of it is left."""
        async with self._store.write() as tx:
            await tx.execute(
                f"DELETE FROM yx_api_idempotency WHERE {_WHERE}",
                {"user": user_id, "scope": scope, "key": key},
            )

    @staticmethod
    async def forget_session(
        tx: Tx, user_id: str, agent_id: str, session_id: str, created_results: list[str]
    ) -> int:
        """Inside the caller's transaction: forgets the keys of a deleted session (its
        runs and answers, and the create that made it: one of `created_results`), so
        a session re-created with the same id replays nothing of the old one; returns
        how many."""
        return await tx.execute(
            "DELETE FROM yx_api_idempotency WHERE user_id = :user AND (scope IN (:run, :answer)"
            " OR (scope = :create AND result IN (:made_0, :made_1, :made_2)))",
            {
                "user": user_id,
                "run": f"run:{agent_id}:{session_id}",
                "answer": f"answer:{agent_id}:{session_id}",
                "create": f"session:{agent_id}",
                **{f"made_{i}": text for i, text in enumerate(created_results)},
            },
        )

    async def result(self, user_id: str, scope: str, key: str) -> dict[str, Any] | None:
        """What the key's claim records now; None once it was released."""
        async with self._store.read() as tx:
            row = await tx.fetchone(
                f"SELECT result FROM yx_api_idempotency WHERE {_WHERE}",
                {"user": user_id, "scope": scope, "key": key},
            )
        return None if row is None else dict(json.loads(row[0]))

    async def record(self, user_id: str, scope: str, key: str, result: dict[str, Any]) -> None:
        """Replaces what the claim records (the first request's outcome, for retries)."""
        async with self._store.write() as tx:
            await tx.execute(
                f"UPDATE yx_api_idempotency SET result = :result WHERE {_WHERE}",
                {"user": user_id, "scope": scope, "key": key, "result": json.dumps(result)},
            )
