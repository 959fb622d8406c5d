"""The run ledger's session side: a session's runs as a host drives them, one at a time,
cancellable, never left hanging. A part of `RunLedger` (the one class over `yx_runs`),
kept in its own module so each file stays one concern.

The database decides every race: a partial unique index allows one ``running`` row per
session, so of two workers claiming a session at once one insert wins; a run waiting
at a waiting point blocks a new message by a conditional insert. A run whose worker's
lease lapsed is closed as failed (``worker_lease_expired``) by whoever looks next,
through one conditional ``UPDATE`` (one winner), and never executed again. A cancel
request is a timestamp on the row that the executing worker polls for.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from .._sql.store import IntegrityViolation, SqlStore
from ..observability._metrics import instruments
from ..observability._tracing import traced
from . import _spans
from ._codes import LEASE_LAPSED
from ._errors import RunEnded, RunInProgress, RunNotFound, RunWaiting
from ._record import _COLUMNS, RunRecord, record_of

__all__ = ["WITHDRAW_PENDING", "SessionOps"]

_ACTIVE = "status IN ('running', 'waiting')"
_SESSION = "app_name = :a AND user_id = :u AND session_id = :s"
# A closed run's pending waiting points are cancelled with it, in the same transaction:
# nobody can answer a question of a run that will never resume.
WITHDRAW_PENDING = (
    "UPDATE yx_waitpoints SET status = 'cancelled', updated_at = :now"
    " WHERE status = 'pending' AND EXISTS (SELECT 1 FROM yx_runs r WHERE r.run_id = :r"
    " AND r.app_name = yx_waitpoints.app_name AND r.user_id = yx_waitpoints.user_id"
    " AND r.session_id = yx_waitpoints.session_id"
    " AND r.invocation_id = yx_waitpoints.invocation_id)"
)


_PAUSED = f"SELECT 1 FROM yx_runs WHERE {_SESSION} AND status = 'waiting'"


class _PausedMeanwhile(Exception):
    """Rolls back a claim that a run pausing at the same moment made wrong."""


class SessionOps:
    """`RunLedger`'s operations on a session's runs (mixed into it, never used alone)."""

    store: SqlStore

    async def _one(self, where: str, params: dict[str, Any]) -> RunRecord | None:
        async with self.store.read() as tx:
            row = await tx.fetchone(f"SELECT {_COLUMNS} FROM yx_runs WHERE {where}", params)
        return None if row is None else record_of(row)

    async def get_in_session(
        self, run_id: str, *, app_name: str, user_id: str, session_id: str
    ) -> RunRecord:
        """The run, if it belongs to this session (closed first if its lease lapsed);
        else `RunNotFound`: another user's run is reported as missing."""
        key = {"r": run_id, "a": app_name, "u": user_id, "s": session_id}
        found = await self._one(f"run_id = :r AND {_SESSION}", key)
        if found is None:
            raise RunNotFound(run_id)
        if found.status == "running" and not found.lease_live() and await self.expire(run_id):
            found = await self._one("run_id = :r", key)
        if found is None:  # its session was deleted since it was read
            raise RunNotFound(run_id)
        return found

    @traced("yuxi.ledger.expire", _spans.on_run, result=_spans.expired)
    async def expire(self, run_id: str) -> bool:
        """Closes a run whose lease lapsed as failed (and withdraws the questions it
        had opened); False when it is held or closed already."""
        params = {"r": run_id, "e": LEASE_LAPSED, "now": time.time()}
        async with self.store.write() as tx:
            changed = await tx.execute(
                "UPDATE yx_runs SET status = 'failed', error = :e, updated_at = :now,"
                " ended_at = :now WHERE run_id = :r AND status = 'running'"
                " AND lease_expires_at <= :now",
                params,
            )
            if changed == 1:
                await tx.execute(WITHDRAW_PENDING, params)
        if changed == 1:
            instruments().lease_expired(LEASE_LAPSED)
        return changed == 1

    async def current(self, *, app_name: str, user_id: str, session_id: str) -> RunRecord | None:
        """The session's active run (running or waiting), else its latest one; a
        running run whose lease lapsed is closed as failed first."""
        key = {"a": app_name, "u": user_id, "s": session_id}
        found = await self._one(
            f"{_SESSION} ORDER BY CASE WHEN {_ACTIVE} THEN 0 ELSE 1 END,"
            " updated_at DESC, run_id DESC LIMIT 1",
            key,
        )
        if found is not None and found.status == "running" and not found.lease_live():
            await self.expire(found.run_id)
            found = await self._one("run_id = :r", {"r": found.run_id})
        return found

    @traced("yuxi.ledger.claim", _spans.on_session, result=_spans.claimed)
    async def claim_new(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        invocation_id: str,
        agent_name: str,
        worker: str,
        lease_seconds: float,
    ) -> RunRecord:
        """Records a new run of the session as running under `worker`'s lease, before
        anything of it is stored. Raises `RunInProgress` while another run is running
        under a live lease (a lapsed one is closed as failed first) and `RunWaiting`
        while one waits at a waiting point."""
        for _ in range(3):
            now = time.time()
            run_id, lease = f"run-{uuid.uuid4().hex}", now + lease_seconds
            params = {
                "r": run_id,
                "a": app_name,
                "u": user_id,
                "s": session_id,
                "i": invocation_id,
                "agent": agent_name,
                "w": worker,
                "lease": lease,
                "now": now,
            }
            try:
                inserted = await self._insert(params)
            except _PausedMeanwhile:
                inserted = 0
            if inserted == 1:  # the row is what was just inserted: no read back
                return RunRecord(
                    run_id=run_id,
                    app_name=app_name,
                    user_id=user_id,
                    session_id=session_id,
                    invocation_id=invocation_id,
                    agent_name=agent_name,
                    worker=worker,
                    lease_expires_at=lease,
                    status="running",
                    error=None,
                    started_at=now,
                    updated_at=now,
                    ended_at=None,
                )
            blocking = await self._one(f"{_SESSION} AND {_ACTIVE} LIMIT 1", params)
            if blocking is None:
                continue  # it ended meanwhile: try again
            if blocking.status == "waiting":
                raise RunWaiting(session_id, blocking.run_id)
            if blocking.lease_live() or not await self.expire(blocking.run_id):
                raise RunInProgress(session_id, blocking.run_id)
        raise RunInProgress(session_id)

    async def _insert(self, params: dict[str, Any]) -> int:
        """The new running row, unless a run of the session waits. The condition is
        read again after the insert, in its transaction: on PostgreSQL a run that
        paused while the insert waited on the unique index (it was running then) is
        only visible to a later statement, and then the insert is rolled back."""
        async with self.store.write() as tx:
            inserted = await tx.execute(
                f"INSERT INTO yx_runs ({_COLUMNS}) SELECT :r, :a, :u, :s, :i, :agent, :w,"
                f" :lease, 'running', NULL, :now, :now, NULL, NULL WHERE NOT EXISTS ({_PAUSED})"
                " ON CONFLICT DO NOTHING",
                params,
            )
            if inserted == 1 and await tx.fetchone(_PAUSED, params) is not None:
                raise _PausedMeanwhile
        return inserted

    @traced("yuxi.ledger.claim", _spans.on_run, result=_spans.resumed)
    async def resume(self, run: RunRecord, *, worker: str, lease_seconds: float) -> RunRecord:
        """Moves a run waiting at a waiting point back to running under `worker`, before
        its answer is recorded. `RunInProgress` while it (or another run of the
        session) runs; `RunEnded` once it is closed (cancelled, failed: a resume whose
        worker died is closed here)."""
        now = time.time()
        params = {"r": run.run_id, "w": worker, "lease": now + lease_seconds, "now": now}
        try:
            changed = await self.store.write_one(
                "UPDATE yx_runs SET status = 'running', worker = :w, lease_expires_at = :lease,"
                " updated_at = :now WHERE run_id = :r AND status = 'waiting'",
                params,
            )
        except IntegrityViolation:
            raise RunInProgress(run.session_id, run.run_id) from None
        found = await self._one("run_id = :r", params)
        if found is None:
            raise RunNotFound(run.run_id)
        if changed == 1:
            return found
        if found.status == "running" and (found.lease_live() or not await self.expire(run.run_id)):
            raise RunInProgress(run.session_id, run.run_id)
        raise RunEnded(run.run_id, "failed" if found.status == "running" else found.status)

    async def cancel(self, run: RunRecord) -> tuple[RunRecord, bool]:
        """Cancels the run: a waiting one is closed ``cancelled`` at once with its
        pending waiting points, a running one gets `cancel_requested_at` for its
        worker to act on. Returns the record after the request and whether this call
        changed it; an ended run is left as it is (and a running one whose lease
        lapsed is closed as failed)."""
        now = time.time()
        params = {"r": run.run_id, "now": now}
        await self.expire(run.run_id)
        async with self.store.write() as tx:
            closed = await tx.execute(
                "UPDATE yx_runs SET status = 'cancelled', error = 'cancelled by the caller',"
                " cancel_requested_at = :now, updated_at = :now, ended_at = :now"
                " WHERE run_id = :r AND status = 'waiting'",
                params,
            )
            if closed == 1:
                await tx.execute(WITHDRAW_PENDING, params)
            changed = closed + await tx.execute(
                "UPDATE yx_runs SET cancel_requested_at = :now, updated_at = :now"
                " WHERE run_id = :r AND status = 'running' AND cancel_requested_at IS NULL",
                params,
            )
            row = await tx.fetchone(f"SELECT {_COLUMNS} FROM yx_runs WHERE run_id = :r", params)
        if closed == 1:
            instruments().run_closed("cancelled", None)
        if row is None:
            raise RunNotFound(run.run_id)
        return record_of(row), changed == 1

    async def cancel_requested(self, worker: str) -> list[str]:
        """Runs `worker` holds whose cancellation was requested (one query per poll)."""
        async with self.store.read() as tx:
            rows = await tx.fetchall(
                "SELECT run_id FROM yx_runs WHERE worker = :w AND status = 'running'"
                " AND cancel_requested_at IS NOT NULL",
                {"w": worker},
            )
        return [str(r[0]) for r in rows]
