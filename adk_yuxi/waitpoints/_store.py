"""Waiting points on the shared SQL store: create, list, answer, cancel.

A waiting point moves from ``pending`` to ``answered`` or ``cancelled`` exactly once,
through one conditional ``UPDATE … WHERE status = 'pending'``: of two concurrent
answers the database lets one change the row and the other finds it changed, on
SQLite and on PostgreSQL alike. Every method takes the user the host authenticated;
a waiting point of another user is reported as not found.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from google.genai import types

from .._sql import register_schema_part
from .._sql.paging import decode_page_token, encode_page_token
from .._sql.store import SqlStore, Tx
from ..observability._tracing import traced
from . import _spans
from ._errors import StoredQuestionsInvalid, WaitpointConflict, WaitpointNotFound
from ._questions import QUESTIONS_SCHEMA, Question, load_questions, validate_answers
from ._schema import WAITPOINTS_PART

__all__ = [
    "REQUEST_INPUT",
    "WAITPOINT_STATUSES",
    "Waitpoint",
    "WaitpointPage",
    "WaitpointStore",
    "waitpoint_id",
]

REQUEST_INPUT = "adk_request_input"
"""The function name of ADK's input request; a resume answers a call of this name."""

PENDING, ANSWERED, CANCELLED = "pending", "answered", "cancelled"
# A point is settled only while the run that asked has not ended: an answer to a run
# that was cancelled or failed would be accepted and then never resumed.
_RUN_OPEN = (
    " AND NOT EXISTS (SELECT 1 FROM yx_runs r WHERE r.app_name = yx_waitpoints.app_name"
    " AND r.user_id = yx_waitpoints.user_id AND r.session_id = yx_waitpoints.session_id"
    " AND r.invocation_id = yx_waitpoints.invocation_id"
    " AND r.status IN ('completed', 'failed', 'cancelled'))"
)
WAITPOINT_STATUSES = (PENDING, ANSWERED, CANCELLED)
_NAMESPACE = uuid.UUID("6f1d3c52-8f7e-4b0a-9d55-3a1f2b7c9e10")
_COLUMNS = (
    "id, app_name, user_id, session_id, invocation_id, call_id, questions,"
    " questions_schema, status, answers, created_at, updated_at"
)


def waitpoint_id(app: str, user: str, session: str, invocation: str, call_id: str) -> str:
    """The id of the waiting point one tool call opens: the same call, the same id."""
    key = "\x00".join((app, user, session, invocation, call_id))
    return f"wp-{uuid.uuid5(_NAMESPACE, key).hex}"


@dataclass(frozen=True)
class Waitpoint:
    id: str
    app_name: str
    user_id: str
    session_id: str
    invocation_id: str
    call_id: str
    questions: Any  # the stored JSON; `question_set()` re-validates it
    questions_schema: int
    status: str
    answers: dict[str, Any] | None
    created_at: float
    updated_at: float

    def question_set(self) -> list[Question]:
        """The stored questions under the current contract, or `StoredQuestionsInvalid`."""
        try:
            return load_questions(self.questions, self.questions_schema)
        except ValueError as exc:
            raise StoredQuestionsInvalid(self.id, str(exc)) from None

    def resume_payload(self) -> dict[str, Any]:
        if self.status == ANSWERED:
            return {"answers": self.answers}
        if self.status == CANCELLED:
            return {"cancelled": True}
        raise WaitpointConflict(self.id, self.status)

    def resume_message(self) -> types.Content:
        """The message that resumes the paused run once this point is answered or
        cancelled: pass it as `new_message` to `Runner.run_async` for this session."""
        response = types.FunctionResponse(
            id=self.id, name=REQUEST_INPUT, response=self.resume_payload()
        )
        return types.Content(role="user", parts=[types.Part(function_response=response)])

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "app_name": self.app_name,
            "user_id": self.user_id,
            "session_id": self.session_id,
            "invocation_id": self.invocation_id,
            "call_id": self.call_id,
            "questions": self.questions,
            "status": self.status,
            "answers": self.answers,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


@dataclass(frozen=True)
class WaitpointPage:
    items: list[Waitpoint] = field(default_factory=list)
    next_page_token: str | None = None


def _row(row: Sequence[Any]) -> Waitpoint:
    return Waitpoint(
        id=row[0],
        app_name=row[1],
        user_id=row[2],
        session_id=row[3],
        invocation_id=row[4],
        call_id=row[5],
        questions=json.loads(row[6]),
        questions_schema=int(row[7]),
        status=row[8],
        answers=None if row[9] is None else json.loads(row[9]),
        created_at=float(row[10]),
        updated_at=float(row[11]),
    )


def _encode_token(created_at: float, ident: str) -> str:
    return encode_page_token(created_at, ident)


class WaitpointStore:
    """The waiting points of every app on one `SqlStore`."""

    def __init__(self, store: SqlStore) -> None:
        self.store = store
        register_schema_part(WAITPOINTS_PART)  # its table, in every store it works on

    @traced("yuxi.waitpoint.create", _spans.on_open, result=_spans.settled)
    async def open(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        invocation_id: str,
        call_id: str,
        questions: Sequence[Question],
    ) -> Waitpoint:
        """Creates the pending point of this call, or returns the one it already has
        (a re-run of the same call never opens a second one)."""
        ident = waitpoint_id(app_name, user_id, session_id, invocation_id, call_id)
        now = time.time()
        params = {
            "id": ident,
            "app": app_name,
            "user": user_id,
            "session": session_id,
            "invocation": invocation_id,
            "call": call_id,
            "questions": json.dumps([q.model_dump(mode="json") for q in questions]),
            "schema": QUESTIONS_SCHEMA,
            "now": now,
        }
        async with self.store.write() as tx:
            await tx.execute(
                "INSERT INTO yx_waitpoints (" + _COLUMNS + ") VALUES (:id, :app, :user,"
                " :session, :invocation, :call, :questions, :schema, 'pending', NULL,"
                " :now, :now) ON CONFLICT (id) DO NOTHING",
                params,
            )
            found = await self._get(tx, ident)
        assert found is not None
        return found

    @staticmethod
    async def _get(tx: Tx, ident: str) -> Waitpoint | None:
        row = await tx.fetchone(
            f"SELECT {_COLUMNS} FROM yx_waitpoints WHERE id = :id", {"id": ident}
        )
        return None if row is None else _row(row)

    async def get(self, waitpoint_id: str, *, user_id: str) -> Waitpoint:
        """The waiting point, if it is this user's; else `WaitpointNotFound`."""
        async with self.store.read() as tx:
            found = await self._get(tx, waitpoint_id)
        if found is None or found.user_id != user_id:
            raise WaitpointNotFound(waitpoint_id)
        return found

    async def list_pending(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None = None,
        page_size: int = 50,
        page_token: str | None = None,
    ) -> WaitpointPage:
        """Pending points of a user (or of one session), oldest first, keyset-paged."""
        filters = {"app_name": app_name, "user_id": user_id, "session_id": session_id}
        return await self._page(
            {**filters, "status": PENDING}, page_size, page_token, "list_pending"
        )

    async def count_pending(self, app_names: Sequence[str]) -> dict[str, int]:
        """Pending points of each app (for the `yuxi.waitpoints.pending` gauge)."""
        counts = dict.fromkeys(app_names, 0)
        async with self.store.read() as tx:
            for app in counts:
                row = await tx.fetchone(
                    "SELECT count(*) FROM yx_waitpoints WHERE app_name = :app"
                    " AND status = 'pending'",
                    {"app": app},
                )
                counts[app] = int(row[0]) if row is not None else 0
        return counts

    async def find(self, waitpoint_id: str) -> Waitpoint | None:
        """The waiting point whoever's it is: for the database's operator, not for a
        caller (`get` scopes to the user the host authenticated)."""
        async with self.store.read() as tx:
            return await self._get(tx, waitpoint_id)

    async def list_points(
        self,
        *,
        app_name: str | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        invocation_id: str | None = None,
        status: str | None = PENDING,
        page_size: int = 50,
        page_token: str | None = None,
    ) -> WaitpointPage:
        """Every user's points for the operator, oldest first, keyset-paged; a filter
        left None matches every row (`status=None`: settled ones too)."""
        if status is not None and status not in WAITPOINT_STATUSES:
            raise ValueError(f"unknown waiting point status {status!r}")
        filters = {
            "app_name": app_name,
            "user_id": user_id,
            "session_id": session_id,
            "invocation_id": invocation_id,
            "status": status,
        }
        return await self._page(filters, page_size, page_token, "list_points")

    async def _page(
        self,
        filters: dict[str, str | None],
        page_size: int,
        page_token: str | None,
        listing: str,
    ) -> WaitpointPage:
        """Points matching every filter not None, oldest first, keyset-paged."""
        if not 1 <= page_size <= 500:
            raise ValueError("page_size must be between 1 and 500")
        where = [f"{column} = :{column}" for column, v in filters.items() if v is not None]
        params: dict[str, Any] = {c: v for c, v in filters.items() if v is not None}
        params["limit"] = page_size + 1
        if page_token is not None:
            at, (after,) = decode_page_token(page_token, ids=1, listing=listing)
            params["after_t"], params["after_id"] = at, after
            where.append("(created_at > :after_t OR (created_at = :after_t AND id > :after_id))")
        sql = f"SELECT {_COLUMNS} FROM yx_waitpoints WHERE {' AND '.join(where) or '1 = 1'}"
        sql += " ORDER BY created_at, id LIMIT :limit"
        async with self.store.read() as tx:
            rows = [_row(r) for r in await tx.fetchall(sql, params)]
        if len(rows) <= page_size:
            return WaitpointPage(rows, None)
        last = rows[page_size - 1]
        return WaitpointPage(rows[:page_size], _encode_token(last.created_at, last.id))

    @traced("yuxi.waitpoint.answer", _spans.on_point, result=_spans.settled)
    async def answer(self, waitpoint_id: str, answers: Any, *, user_id: str) -> Waitpoint:
        """Validates `answers` against the stored questions and records them.

        Raises `WaitpointNotFound`, `WaitpointConflict` (answered or cancelled already:
        nothing changes), `StoredQuestionsInvalid`, or `AnswerRejected` (the point stays
        pending). Resume the run with `resume_message()` of the result."""
        current = await self.get(waitpoint_id, user_id=user_id)
        if current.status != PENDING:
            raise WaitpointConflict(waitpoint_id, current.status)
        accepted = validate_answers(current.question_set(), answers)
        return await self._settle(current, ANSWERED, accepted)

    @traced("yuxi.waitpoint.cancel", _spans.on_point, result=_spans.settled)
    async def cancel(self, waitpoint_id: str, *, user_id: str) -> Waitpoint:
        """Withdraws a pending point; the resumed tool tells the model it was cancelled."""
        current = await self.get(waitpoint_id, user_id=user_id)
        if current.status != PENDING:
            raise WaitpointConflict(waitpoint_id, current.status)
        return await self._settle(current, CANCELLED, None)

    async def _settle(
        self, current: Waitpoint, status: str, answers: dict[str, Any] | None
    ) -> Waitpoint:
        params = {
            "id": current.id,
            "status": status,
            "answers": None if answers is None else json.dumps(answers),
            "now": time.time(),
        }
        async with self.store.write() as tx:
            changed = await tx.execute(
                "UPDATE yx_waitpoints SET status = :status, answers = :answers,"
                f" updated_at = :now WHERE id = :id AND status = 'pending'{_RUN_OPEN}",
                params,
            )
            if changed != 1:  # a run that ended without withdrawing its point: do it now
                await tx.execute(
                    "UPDATE yx_waitpoints SET status = 'cancelled', updated_at = :now"
                    " WHERE id = :id AND status = 'pending'",
                    params,
                )
            settled = await self._get(tx, current.id)
        if settled is None:  # its session was deleted since it was read
            raise WaitpointNotFound(current.id)
        if changed != 1:
            raise WaitpointConflict(current.id, settled.status)
        return settled

    async def forget_session(self, tx: Tx, *, app_name: str, user_id: str, session_id: str) -> int:
        """Inside the caller's transaction: deletes every waiting point of the session
        (pending or settled: the session is being deleted); returns how many."""
        return await tx.execute(
            "DELETE FROM yx_waitpoints WHERE app_name = :app AND user_id = :user"
            " AND session_id = :session",
            {"app": app_name, "user": user_id, "session": session_id},
        )
