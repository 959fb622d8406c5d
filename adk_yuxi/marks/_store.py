"""Improvement marks on the shared SQL store: one row per distinct problem an agent
recorded, written in one transaction with the checks that allow it.

A mark is keyed by (run, call): a replayed call finds its own row and returns the same
id; the same call with another reason is a conflict. Marks are never deleted with
their run, so one recorded before a run failed or was cancelled stays.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._sql import register_schema_part
from .._sql.paging import decode_page_token, encode_page_token
from .._sql.store import IntegrityViolation, SqlStore, Tx
from ..errors import RunStopped
from ._errors import MarkConflict, MarkRefused
from ._schema import MARKS_PART

__all__ = ["Check", "Mark", "MarkPage", "MarkStore"]

Check = tuple[type[RunStopped], Callable[[Tx], Awaitable[str | None]]]
"""How a refusal ends the run, and a query run inside the mark's transaction that says
why it refuses (None allows)."""

_COLUMNS = (
    "id, run_id, call_id, app_name, user_id, agent_name, session_id, invocation_id,"
    " reason, created_at"
)


@dataclass(frozen=True)
class Mark:
    id: str
    run_id: str
    call_id: str
    app_name: str
    user_id: str
    agent_name: str
    session_id: str
    invocation_id: str
    reason: str
    created_at: float


@dataclass(frozen=True)
class MarkPage:
    items: list[Mark] = field(default_factory=list)
    next_page_token: str | None = None


def _mark(row: Sequence[Any]) -> Mark:
    return Mark(
        id=row[0],
        run_id=row[1],
        call_id=row[2],
        app_name=row[3],
        user_id=row[4],
        agent_name=row[5],
        session_id=row[6],
        invocation_id=row[7],
        reason=row[8],
        created_at=float(row[9]),
    )


def _token(mark: Mark) -> str:
    return encode_page_token(mark.created_at, mark.id)


def _position(token: str) -> tuple[float, str]:
    at, (ident,) = decode_page_token(token, ids=1, listing="list_marks")
    return at, ident


class MarkStore:
    def __init__(self, store: SqlStore) -> None:
        self.store = store
        register_schema_part(MARKS_PART)  # its table, in every store it works on

    async def record(
        self,
        *,
        run_id: str,
        call_id: str,
        app_name: str,
        user_id: str,
        agent_name: str,
        session_id: str,
        invocation_id: str,
        reason: str,
        checks: Sequence[Check] = (),
    ) -> tuple[Mark, bool]:
        """Saves the mark after every check passed, all in one transaction; returns it
        and whether it was new. Raises `MarkRefused` or `MarkConflict`."""
        params = {
            "id": f"mark-{uuid.uuid4().hex}",
            "run": run_id,
            "call": call_id,
            "app": app_name,
            "user": user_id,
            "agent": agent_name,
            "session": session_id,
            "invocation": invocation_id,
            "reason": reason,
            "now": time.time(),
        }
        try:
            async with self.store.write() as tx:
                for stop, check in checks:
                    denial = await check(tx)
                    if denial is not None:
                        raise MarkRefused(stop, denial)
                found = await self._find(tx, run_id, call_id)
                if found is None:
                    await tx.execute(
                        f"INSERT INTO yx_marks ({_COLUMNS}) VALUES (:id, :run, :call, :app,"
                        " :user, :agent, :session, :invocation, :reason, :now)",
                        params,
                    )
                    return _mark(list(params.values())), True
        except IntegrityViolation:
            # A concurrent replay of the same call inserted first (PostgreSQL).
            async with self.store.read() as tx:
                found = await self._find(tx, run_id, call_id)
            if found is None:
                raise
        if found.reason != reason:
            raise MarkConflict(run_id, call_id)
        return found, False

    @staticmethod
    async def _find(tx: Tx, run_id: str, call_id: str) -> Mark | None:
        row = await tx.fetchone(
            f"SELECT {_COLUMNS} FROM yx_marks WHERE run_id = :run AND call_id = :call",
            {"run": run_id, "call": call_id},
        )
        return None if row is None else _mark(row)

    async def get(self, mark_id: str, *, viewer_id: str, viewer_is_admin: bool) -> Mark | None:
        """The mark, if the viewer may see it (an admin: any; anyone else: their own);
        another user's mark is None, as a missing one is."""
        async with self.store.read() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM yx_marks WHERE id = :id", {"id": mark_id}
            )
        found = None if row is None else _mark(row)
        if found is None or (not viewer_is_admin and found.user_id != viewer_id):
            return None
        return found

    async def list_marks(
        self,
        *,
        viewer_id: str,
        viewer_is_admin: bool,
        app_name: str | None = None,
        agent_name: str | None = None,
        user_id: str | None = None,
        since: float | None = None,
        until: float | None = None,
        page_size: int = 50,
        page_token: str | None = None,
    ) -> MarkPage:
        """Newest first. An admin sees every user's marks (or one user's with
        `user_id`); anyone else sees their own, whatever `user_id` says."""
        if not 1 <= page_size <= 500:
            raise ValueError("page_size must be between 1 and 500")
        where: list[str] = []
        params: dict[str, Any] = {"limit": page_size + 1}
        owner = user_id if viewer_is_admin else viewer_id
        for column, value in (
            ("user_id", owner),
            ("agent_name", agent_name),
            ("app_name", app_name),
        ):
            if value is not None:
                where.append(f"{column} = :{column}")
                params[column] = value
        if since is not None:
            where.append("created_at >= :since")
            params["since"] = since
        if until is not None:
            where.append("created_at < :until")
            params["until"] = until
        if page_token is not None:
            params["at"], params["after"] = _position(page_token)
            where.append("(created_at < :at OR (created_at = :at AND id < :after))")
        sql = f"SELECT {_COLUMNS} FROM yx_marks"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at DESC, id DESC LIMIT :limit"
        async with self.store.read() as tx:
            rows = [_mark(r) for r in await tx.fetchall(sql, params)]
        if len(rows) <= page_size:
            return MarkPage(rows)
        return MarkPage(rows[:page_size], _token(rows[page_size - 1]))
