"""Deleting artifact versions inside a caller's transaction, and the payload references
they held.

A version row references its payload by digest; `yx_artifact_blobs` counts the
references. Deleting rows drops their counts in the same transaction and names the
digests left with none, whose files the caller removes only after the commit (a kill
before that leaves orphan files, swept later, never a version without bytes).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .._sql.names import check_app_name, check_session_id, check_user_id
from .._sql.store import Tx

__all__ = ["drop_references", "forget_session_versions"]


async def drop_references(tx: Tx, rows: list[Any]) -> list[str]:
    """Drops the references of deleted version rows (``(digest,)`` each); returns the
    digests now unreferenced."""
    unreferenced: list[str] = []
    counts = Counter(row[0] for row in rows if row[0] is not None)
    for digest, count in sorted(counts.items()):
        left = await tx.fetchall(
            "UPDATE yx_artifact_blobs SET refs = refs - :count WHERE digest = :digest"
            " RETURNING refs",
            {"count": count, "digest": digest},
        )
        if left and int(left[0][0]) <= 0:
            await tx.execute(
                "DELETE FROM yx_artifact_blobs WHERE digest = :digest", {"digest": digest}
            )
            unreferenced.append(digest)
    return unreferenced


async def forget_session_versions(
    tx: Tx, app_name: str, user_id: str, session_id: str
) -> list[str]:
    """Deletes every session-scoped version of the session (user-scoped ones, scope
    ``''``, stay); returns the digests now unreferenced."""
    rows = await tx.fetchall(
        "DELETE FROM yx_artifact_versions WHERE app_name = :app AND user_id = :user"
        " AND scope = :scope RETURNING digest",
        {
            "app": check_app_name(app_name),
            "user": check_user_id(user_id),
            "scope": check_session_id(session_id),
        },
    )
    return await drop_references(tx, rows)
