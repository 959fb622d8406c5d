"""A run's ledger row as the ledger and its readers see it, and its keyset page."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._sql.paging import decode_page_token, encode_page_token

__all__ = ["RUN_STATUSES", "RunPage", "RunRecord", "record_of"]

RUNNING, WAITING = "running", "waiting"

RUN_STATUSES = ("running", "waiting", "completed", "failed", "cancelled")
_COLUMNS = (
    "run_id, app_name, user_id, session_id, invocation_id, agent_name, worker,"
    " lease_expires_at, status, error, started_at, updated_at, ended_at, cancel_requested_at"
)


@dataclass(frozen=True)
class RunRecord:
    run_id: str
    app_name: str
    user_id: str
    session_id: str
    invocation_id: str
    agent_name: str
    worker: str
    lease_expires_at: float
    status: str
    error: str | None
    started_at: float
    updated_at: float
    ended_at: float | None
    cancel_requested_at: float | None = None

    def lease_live(self, now: float | None = None) -> bool:
        return self.status == RUNNING and self.lease_expires_at > (now or time.time())


@dataclass(frozen=True)
class RunPage:
    items: list[RunRecord] = field(default_factory=list)
    next_page_token: str | None = None


def _token(started_at: float, run_id: str) -> str:
    return encode_page_token(started_at, run_id)


def _position(token: str) -> tuple[float, str]:
    at, (run_id,) = decode_page_token(token, ids=1, listing="list_runs")
    return at, run_id


def record_of(row: Sequence[Any]) -> RunRecord:
    return RunRecord(
        run_id=row[0],
        app_name=row[1],
        user_id=row[2],
        session_id=row[3],
        invocation_id=row[4],
        agent_name=row[5],
        worker=row[6],
        lease_expires_at=float(row[7]),
        status=row[8],
        error=row[9],
        started_at=float(row[10]),
        updated_at=float(row[11]),
        ended_at=None if row[12] is None else float(row[12]),
        cancel_requested_at=None if row[13] is None else float(row[13]),
    )
