"""`yuxi runs`: the run ledger as the database's operator sees it.

Every user's runs with their lease holder; a lapsed lease taken over explicitly (the
ledger's own `take_over`: one conditional UPDATE, refused while the lease is live);
a run cancelled the way the host API cancels it (`RunLedger.cancel`: a waiting run
closes with its waiting points, a running one is asked to stop, a closed one stays
closed). Listing changes nothing: a run whose lease lapsed is shown as it is.
"""

from __future__ import annotations

import os
import socket
import time
from typing import TYPE_CHECKING, Any

import click

from ._database import DB_OPTION
from ._operator import LIMIT_OPTION, PAGE_TOKEN_OPTION, on_database
from ._table import JSON_OPTION, echo_json, echo_line, echo_more, echo_table, lease_text, when
from ._waitpoints import point_json, point_rows

if TYPE_CHECKING:
    from adk_yuxi._sql.store import SqlStore
    from adk_yuxi.ledger import RunPage, RunRecord
    from adk_yuxi.waitpoints import Waitpoint

__all__ = ["run_json", "runs"]

_STATUSES = ("running", "waiting", "completed", "failed", "cancelled")
_HEADERS = ("RUN", "APP", "USER", "SESSION", "STATUS", "ERROR", "WORKER", "LEASE", "STARTED")


def run_json(record: RunRecord, now: float) -> dict[str, Any]:
    """Everything the row holds, with the public error code beside the raw error."""
    from adk_yuxi.ledger._outcome import error_code_of

    return {
        "run_id": record.run_id,
        "app_name": record.app_name,
        "user_id": record.user_id,
        "session_id": record.session_id,
        "invocation_id": record.invocation_id,
        "agent_name": record.agent_name,
        "status": record.status,
        "error_code": error_code_of(record),
        "error": record.error,
        "worker": record.worker,
        "lease_expires_at": record.lease_expires_at,
        "lease_live": record.lease_live(now),
        "cancel_requested_at": record.cancel_requested_at,
        "started_at": record.started_at,
        "updated_at": record.updated_at,
        "ended_at": record.ended_at,
    }


def _row(record: RunRecord, now: float) -> list[Any]:
    from adk_yuxi.ledger._outcome import error_code_of

    return [
        record.run_id,
        record.app_name,
        record.user_id,
        record.session_id,
        record.status,
        error_code_of(record),
        record.worker if record.status == "running" else None,
        lease_text(record.status, record.lease_expires_at, now),
        when(record.started_at),
    ]


def _echo_record(record: RunRecord, as_json: bool, **extra: Any) -> None:
    now = time.time()
    if as_json:
        echo_json({**run_json(record, now), **extra})
        return
    echo_table(_HEADERS, [_row(record, now)])
    for key, value in extra.items():
        echo_line(f"{key}: {value}")


@click.group("runs")
def runs() -> None:
    """Every user's runs: list, show, take over a lapsed lease, cancel."""


@runs.command("list")
@click.option("--status", type=click.Choice(_STATUSES), default=None)
@click.option("--user", "user_id", default=None, help="Only this user's runs.")
@click.option("--app", "app_name", default=None, help="Only runs of this app (agent id).")
@click.option("--session", "session_id", default=None, help="Only runs of this session.")
@LIMIT_OPTION
@PAGE_TOKEN_OPTION
@JSON_OPTION
@DB_OPTION
def list_runs(
    status: str | None,
    user_id: str | None,
    app_name: str | None,
    session_id: str | None,
    limit: int,
    page_token: str | None,
    as_json: bool,
    db: str,
) -> None:
    """Runs newest first, with the worker holding each running one and its lease."""
    from adk_yuxi.ledger import RunLedger

    async def work(store: SqlStore) -> RunPage:
        return await RunLedger(store).list_runs(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            status=status,
            page_size=limit,
            page_token=page_token,
        )

    page = on_database(db, work)
    now = time.time()
    if as_json:
        items = [run_json(r, now) for r in page.items]
        echo_json({"runs": items, "next_page_token": page.next_page_token})
        return
    echo_table(_HEADERS, [_row(r, now) for r in page.items])
    echo_more(page.next_page_token)


@runs.command("show")
@click.argument("run_id")
@JSON_OPTION
@DB_OPTION
def show(run_id: str, as_json: bool, db: str) -> None:
    """One run: its row, lease holder and expiry, error code, and its waiting points."""
    from adk_yuxi.ledger import RunLedger
    from adk_yuxi.waitpoints import WaitpointStore

    async def work(store: SqlStore) -> tuple[RunRecord, list[Waitpoint]]:
        record = await RunLedger(store).get(run_id)
        points = await WaitpointStore(store).list_points(
            app_name=record.app_name,
            user_id=record.user_id,
            session_id=record.session_id,
            invocation_id=record.invocation_id,
            status=None,
            page_size=500,
        )
        return record, points.items

    record, points = on_database(db, work)
    now = time.time()
    data = run_json(record, now)
    if as_json:
        echo_json({**data, "waitpoints": [point_json(p) for p in points]})
        return
    lease = lease_text(record.status, record.lease_expires_at, now)
    running = record.status == "running"
    data["lease_expires_at"] = f"{when(record.lease_expires_at)} ({lease})" if running else "-"
    for key in ("started_at", "updated_at", "ended_at", "cancel_requested_at"):
        data[key] = when(data[key])
    data.pop("lease_live")
    width = max(len(k) for k in data)
    for key, value in data.items():
        echo_line(f"{key.ljust(width)}  {'-' if value is None else value}")
    click.echo("")
    click.echo("waiting points:")
    point_rows(points)


def _operator_worker() -> str:
    return f"operator:{socket.gethostname()}:{os.getpid()}"


@runs.command("take-over")
@click.argument("run_id")
@click.option(
    "--worker",
    default=None,
    help="The worker token that takes the lease (default: operator:HOST:PID).",
)
@click.option(
    "--lease-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=120.0,
    show_default=True,
    help="How long the new lease lasts.",
)
@JSON_OPTION
@DB_OPTION
def take_over(
    run_id: str, worker: str | None, lease_seconds: float, as_json: bool, db: str
) -> None:
    """Moves the lapsed lease of a running run to --worker (the ledger's `take_over`).

    Refused while the lease is live (its worker may be running it now), for a run
    waiting at a waiting point (answer or cancel it instead) and for a closed run. The
    worker that lost the lease stops at its next model or tool call.
    """
    from adk_yuxi.ledger import LeaseHeld, RunLedger

    taker = worker or _operator_worker()

    async def work(store: SqlStore) -> RunRecord:
        ledger = RunLedger(store)
        try:
            return await ledger.take_over(run_id, taker, lease_seconds)
        except LeaseHeld:
            held = await ledger.get(run_id)
            left = held.lease_expires_at - time.time()
            raise click.ClickException(
                f"run {run_id!r} is held by {held.worker!r} under a live lease until"
                f" {when(held.lease_expires_at)} ({max(left, 0):.0f}s left):"
                " a take-over needs the lease to have expired"
            ) from None

    _echo_record(on_database(db, work), as_json)


@runs.command("cancel")
@click.argument("run_id")
@JSON_OPTION
@DB_OPTION
def cancel(run_id: str, as_json: bool, db: str) -> None:
    """Cancels the run as the host API does: a waiting run is closed at once with its
    pending waiting points; a running one gets a cancel request its worker acts on
    within its poll interval (one whose lease lapsed is closed as failed); a closed
    run is refused and stays as it is."""
    from adk_yuxi.ledger import RunEnded, RunLedger

    async def work(store: SqlStore) -> RunRecord:
        ledger = RunLedger(store)
        record, changed = await ledger.cancel(await ledger.get(run_id))
        if record.status == "running" or (changed and record.status == "cancelled"):
            return record
        raise RunEnded(record.run_id, record.status)

    record = on_database(db, work)
    outcome = "cancel_requested" if record.status == "running" else "cancelled"
    _echo_record(record, as_json, outcome=outcome)
