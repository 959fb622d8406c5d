"""The run ledger: one row per invocation, held by one worker's lease at a time.

A worker records the run before it starts, renews the lease while it runs and closes
the row with its outcome. Another worker may resume the invocation only when the row
is not held: released (``waiting`` at a waiting point, or ended), or taken over
explicitly once the holder's lease has expired. All transitions are conditional
``UPDATE``s, so two workers never both believe they hold a run.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

from .._sql import register_schema_part
from .._sql.store import IntegrityViolation, SqlStore, Tx
from ..observability._metrics import instruments
from ..observability._tracing import traced
from ..waitpoints._schema import WAITPOINTS_PART
from . import _spans
from ._codes import LEASE_LAPSED, run_error_code
from ._errors import (
    LeaseExpired,
    LeaseHeld,
    LedgerError,
    RunEnded,
    RunInProgress,
    RunNotFound,
    RunWaiting,
)
from ._record import (
    _COLUMNS,
    RUN_STATUSES,
    RUNNING,
    WAITING,
    RunPage,
    RunRecord,
    _position,
    _token,
    record_of,
)
from ._schema import LEDGER_PART
from ._session_runs import WITHDRAW_PENDING, SessionOps

__all__ = ["LEASE_LAPSED", "RUN_STATUSES", "RunLedger", "RunPage", "RunRecord", "record_of"]

_KEY = "app_name = :a AND user_id = :u AND session_id = :s AND invocation_id = :i"
# A new invocation; nothing when it is recorded already (a unique index decides a race).
# Another run of the session running violates the partial unique index instead.
_INSERT_NEW = (
    f"INSERT INTO yx_runs ({_COLUMNS}) VALUES (:r, :a, :u, :s, :i, :agent, :w, :lease,"
    " 'running', NULL, :now, :now, NULL, NULL)"
    " ON CONFLICT (app_name, user_id, session_id, invocation_id) DO NOTHING"
)
# A run waiting at a waiting point, resumed: only from `waiting`, so one claim wins.
_RESUME_WAITING = (
    "UPDATE yx_runs SET worker = :w, lease_expires_at = :lease, status = 'running',"
    f" error = NULL, updated_at = :now, ended_at = NULL WHERE {_KEY} AND status = 'waiting'"
)


class RunLedger(SessionOps):
    """Runs and their leases on one `SqlStore`: the one class over `yx_runs`.

    An invocation's side (`claim`/`begin`, `renew`, `finish`, `take_over`: what the
    ledger plugin and a worker do) is here; a session's side (`claim_new`, `resume`,
    `cancel`, `expire`, `current`, `get_in_session`: what a host does) is `SessionOps`."""

    def __init__(self, store: SqlStore) -> None:
        self.store = store
        # Its tables, for every store this ledger works on (the session side withdraws
        # the waiting points of a run it closes).
        register_schema_part(LEDGER_PART)
        register_schema_part(WAITPOINTS_PART)

    async def get(self, run_id: str) -> RunRecord:
        async with self.store.read() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM yx_runs WHERE run_id = :r", {"r": run_id}
            )
        if row is None:
            raise RunNotFound(run_id)
        return record_of(row)

    async def find(
        self, *, app_name: str, user_id: str, session_id: str, invocation_id: str
    ) -> RunRecord | None:
        async with self.store.read() as tx:
            return await self._find(tx, app_name, user_id, session_id, invocation_id)

    @staticmethod
    async def _find(tx: Tx, app: str, user: str, session: str, invocation: str) -> RunRecord | None:
        row = await tx.fetchone(
            f"SELECT {_COLUMNS} FROM yx_runs WHERE app_name = :a AND user_id = :u"
            " AND session_id = :s AND invocation_id = :i",
            {"a": app, "u": user, "s": session, "i": invocation},
        )
        return None if row is None else record_of(row)

    async def begin(
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
        """Records the run as running under `worker`'s lease: a new invocation, or one
        waiting at a waiting point (a resume). Raises `LeaseHeld` while it runs under
        a live lease (anyone's: a worker does not re-enter its own running run),
        `LeaseExpired` when that lease has lapsed (`take_over` first), `RunEnded` once
        it is closed, `RunInProgress` while another run of the session is running."""
        record, _ = await self.claim(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            invocation_id=invocation_id,
            agent_name=agent_name,
            worker=worker,
            lease_seconds=lease_seconds,
        )
        return record

    @traced("yuxi.ledger.claim", _spans.on_session, result=_spans.claimed)
    async def claim(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        invocation_id: str,
        agent_name: str,
        worker: str,
        lease_seconds: float,
        resume_only: bool = False,
    ) -> tuple[RunRecord, bool]:
        """`begin`, and whether the claim resumed a run that waited (False: a new one).

        Each step is one conditional statement the database decides (an insert that
        does nothing when the invocation is recorded, an update only of a `waiting`
        row, checked by their row counts): of two workers claiming at once, exactly
        one gets the run, on every backend. With `resume_only` nothing is inserted: a
        run that is not recorded (its session was deleted meanwhile) is `RunNotFound`."""
        keys = {"a": app_name, "u": user_id, "s": session_id, "i": invocation_id}
        for _ in range(3):
            now = time.time()
            params: dict[str, Any] = {
                **keys,
                "r": f"run-{uuid.uuid4().hex}",
                "agent": agent_name,
                "w": worker,
                "lease": now + lease_seconds,
                "now": now,
            }
            try:
                async with self.store.write() as tx:
                    inserted = not resume_only and await tx.execute(_INSERT_NEW, params) == 1
                    resumed = not inserted and await tx.execute(_RESUME_WAITING, params) == 1
                    found = await self._find(tx, app_name, user_id, session_id, invocation_id)
            except IntegrityViolation:  # another run of the session is running
                # ... or this one: PostgreSQL may check the session's index first.
                found = await self.find(
                    app_name=app_name,
                    user_id=user_id,
                    session_id=session_id,
                    invocation_id=invocation_id,
                )
                if found is not None and found.status != WAITING:
                    raise _refusal(found, now) from None
                raise RunInProgress(session_id) from None
            if found is not None and (inserted or resumed):
                return found, resumed
            if found is not None and found.status != WAITING:
                raise _refusal(found, now)
            if found is None and resume_only:
                raise RunNotFound(f"{session_id}/{invocation_id}")
            # Released or removed between the two statements: decide again.
        raise RunInProgress(session_id)

    @traced("yuxi.ledger.renew", _spans.on_run, result=_spans.held)
    async def renew(self, run_id: str, worker: str, lease_seconds: float) -> bool:
        """Extends the lease; False when this worker no longer holds the run."""
        now = time.time()
        changed = await self.store.write_one(
            "UPDATE yx_runs SET lease_expires_at = :lease, updated_at = :now"
            " WHERE run_id = :r AND worker = :w AND status = 'running'",
            {"r": run_id, "w": worker, "lease": now + lease_seconds, "now": now},
        )
        return changed == 1

    @traced("yuxi.ledger.close", _spans.on_run, result=_spans.outcome)
    async def finish(self, run_id: str, worker: str, status: str, error: str | None = None) -> bool:
        """Closes the run with its outcome and releases the lease; False when this
        worker no longer holds it (it was taken over), and then nothing changes.

        An ended run withdraws the questions it opened in the same transaction: a run
        cancelled or failed right after it asked must not leave a point to answer."""
        if status not in RUN_STATUSES or status == RUNNING:
            raise ValueError(f"not a closing status: {status!r}")
        now = time.time()
        params = {
            "r": run_id,
            "w": worker,
            "st": status,
            "e": error,
            "now": now,
            "ended": None if status == WAITING else now,
        }
        async with self.store.write() as tx:
            changed = await tx.execute(
                "UPDATE yx_runs SET status = :st, error = :e, lease_expires_at = :now,"
                " updated_at = :now, ended_at = :ended"
                " WHERE run_id = :r AND worker = :w AND status = 'running'",
                params,
            )
            if changed == 1 and status != WAITING:
                await tx.execute(WITHDRAW_PENDING, params)
        if changed == 1:
            instruments().run_closed(status, run_error_code(status, error))
        return changed == 1

    @traced("yuxi.ledger.take_over", _spans.on_run, result=_spans.took_over)
    async def take_over(self, run_id: str, worker: str, lease_seconds: float) -> RunRecord:
        """Moves a lapsed lease of a running run to `worker` (one conditional UPDATE: of
        several takers, or a taker and `expire`, one wins). Raises
        `LeaseHeld` while the lease is live (also the holder's own), `RunWaiting` for a
        run waiting at a waiting point (answer it instead), `RunEnded` for a closed one.
        The taker continues the run by handing the record to its `LedgerPlugin`
        (`LedgerPlugin.take_over` does both)."""
        now = time.time()
        params = {"r": run_id, "w": worker, "lease": now + lease_seconds, "now": now}
        async with self.store.write() as tx:
            changed = await tx.execute(
                "UPDATE yx_runs SET worker = :w, lease_expires_at = :lease, updated_at = :now"
                " WHERE run_id = :r AND status = 'running' AND lease_expires_at <= :now",
                params,
            )
            row = await tx.fetchone(f"SELECT {_COLUMNS} FROM yx_runs WHERE run_id = :r", params)
        if row is None:
            raise RunNotFound(run_id)
        record = record_of(row)
        if changed == 1:
            instruments().lease_takeovers.add(1)
            return record
        if record.status == WAITING:
            raise RunWaiting(record.session_id, record.run_id)
        raise _refusal(record, now)

    async def list_runs(
        self,
        *,
        app_name: str | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        status: str | None = None,
        page_size: int = 50,
        page_token: str | None = None,
    ) -> RunPage:
        """Runs newest first, keyset-paged: a user's (or one session's) for a host, any
        user's or app's for an operator (a filter left None matches every row)."""
        if not 1 <= page_size <= 500:
            raise ValueError("page_size must be between 1 and 500")
        if status is not None and status not in RUN_STATUSES:
            raise ValueError(f"unknown run status {status!r}")
        where = ["1 = 1"]
        params: dict[str, Any] = {"n": page_size + 1}
        for column, key, value in (
            ("app_name", "a", app_name),
            ("user_id", "u", user_id),
            ("session_id", "s", session_id),
            ("status", "st", status),
        ):
            if value is not None:
                where.append(f"{column} = :{key}")
                params[key] = value
        if page_token is not None:
            params["at"], params["after"] = _position(page_token)
            where.append("(started_at < :at OR (started_at = :at AND run_id < :after))")
        sql = f"SELECT {_COLUMNS} FROM yx_runs WHERE {' AND '.join(where)}"
        sql += " ORDER BY started_at DESC, run_id DESC LIMIT :n"
        async with self.store.read() as tx:
            rows = [record_of(r) for r in await tx.fetchall(sql, params)]
        if len(rows) <= page_size:
            return RunPage(rows)
        last = rows[page_size - 1]
        return RunPage(rows[:page_size], _token(last.started_at, last.run_id))

    async def list_expired(self, *, limit: int = 100) -> list[RunRecord]:
        """Runs still marked running whose lease has lapsed: candidates for takeover."""
        async with self.store.read() as tx:
            rows = await tx.fetchall(
                f"SELECT {_COLUMNS} FROM yx_runs WHERE status = 'running'"
                " AND lease_expires_at <= :now ORDER BY lease_expires_at LIMIT :n",
                {"now": time.time(), "n": limit},
            )
        return [record_of(r) for r in rows]

    @staticmethod
    async def lease_denial(tx: Tx, run_id: str, worker: str) -> str | None:
        """Inside a caller's transaction: why `worker` may not act for `run_id` now.
        A read: what a write transaction should use is `hold`."""
        row = await tx.fetchone(
            "SELECT worker, status, lease_expires_at FROM yx_runs WHERE run_id = :r",
            {"r": run_id},
        )
        return _denial(row, worker)

    @staticmethod
    async def hold(tx: Tx, run_id: str, worker: str) -> str | None:
        """Inside a caller's write transaction: None when `worker` holds a live lease
        on `run_id`, which then stays so until the transaction ends (a conditional
        UPDATE that changes nothing but locks the row: a take-over or an expiry waits
        for the caller's commit); else why not."""
        held = await tx.execute(
            "UPDATE yx_runs SET worker = worker WHERE run_id = :r AND worker = :w"
            " AND status = 'running' AND lease_expires_at > :now",
            {"r": run_id, "w": worker, "now": time.time()},
        )
        if held == 1:
            return None
        row = await tx.fetchone(
            "SELECT worker, status, lease_expires_at FROM yx_runs WHERE run_id = :r",
            {"r": run_id},
        )
        return _denial(row, worker) or "the run's lease has expired"

    async def forget_session(self, tx: Tx, *, app_name: str, user_id: str, session_id: str) -> int:
        """Inside the caller's transaction: deletes every run of the session (the
        session is being deleted); returns how many. The caller makes sure none is
        running under a live lease first."""
        return await tx.execute(
            "DELETE FROM yx_runs WHERE app_name = :a AND user_id = :u AND session_id = :s",
            {"a": app_name, "u": user_id, "s": session_id},
        )

    async def forget_run(self, run_id: str, worker: str) -> bool:
        """Deletes a run `worker` claimed but never started (its session was deleted
        between the claim and the start); False when it is not so held."""
        changed = await self.store.write_one(
            "DELETE FROM yx_runs WHERE run_id = :r AND worker = :w AND status = 'running'",
            {"r": run_id, "w": worker},
        )
        return changed == 1

    async def hold_for_delete(
        self, tx: Tx, *, app_name: str, user_id: str, session_id: str, worker: str
    ) -> bool:
        """Inside the transaction that deletes the session: closes its waiting run and
        holds the session as a run would (one ``running`` row per session), so no run
        starts or resumes until the transaction ends. False while a run is running:
        the caller refuses the delete and rolls back.

        The waiting rows are locked first (by the ``UPDATE``), as a resume locks them
        before it claims the session: the two never wait on each other."""
        now = time.time()
        params = {
            "r": f"run-{uuid.uuid4().hex}",
            "a": app_name,
            "u": user_id,
            "s": session_id,
            "i": f"delete-{uuid.uuid4().hex}",
            "w": worker,
            "now": now,
        }
        await tx.execute(
            "UPDATE yx_runs SET status = 'cancelled', updated_at = :now, ended_at = :now"
            " WHERE app_name = :a AND user_id = :u AND session_id = :s AND status = 'waiting'",
            params,
        )
        inserted = await tx.execute(
            f"INSERT INTO yx_runs ({_COLUMNS}) VALUES (:r, :a, :u, :s, :i, '', :w, :now,"
            " 'running', NULL, :now, :now, NULL, NULL) ON CONFLICT DO NOTHING",
            params,
        )
        return inserted == 1


def _denial(row: Sequence[Any] | None, worker: str) -> str | None:
    if row is None:
        return "the run is not recorded"
    if row[0] != worker or row[1] != RUNNING:
        return "this worker no longer holds the run"
    if float(row[2]) <= time.time():
        return "the run's lease has expired"
    return None


def _refusal(record: RunRecord, now: float) -> LedgerError:
    """Why a run that is not waiting cannot be claimed."""
    if record.status != RUNNING:
        return RunEnded(record.run_id, record.status)
    if record.lease_live(now):
        return LeaseHeld(record.run_id)
    return LeaseExpired(record.run_id)
