"""`yuxi waitpoints`: every user's waiting points, as the database's operator sees them.

A point is cancelled through the store's own `cancel` (pending to cancelled, once):
the run that waits there stays waiting, and its next resume tells the model the
question was withdrawn. To close the run and withdraw all its points at once, cancel
the run (`yuxi runs cancel`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from ._database import DB_OPTION
from ._operator import LIMIT_OPTION, PAGE_TOKEN_OPTION, on_database
from ._table import JSON_OPTION, echo_json, echo_more, echo_table, when

if TYPE_CHECKING:
    from adk_yuxi._sql.store import SqlStore
    from adk_yuxi.waitpoints import Waitpoint, WaitpointPage

__all__ = ["point_json", "point_rows", "waitpoints"]

_HEADERS = ("POINT", "APP", "USER", "SESSION", "INVOCATION", "STATUS", "CREATED", "QUESTION")


def point_json(point: Waitpoint) -> dict[str, Any]:
    return point.to_dict()


def _first_question(point: Waitpoint) -> str:
    questions = point.questions if isinstance(point.questions, list) else []
    first = questions[0] if questions and isinstance(questions[0], dict) else {}
    text = str(first.get("question") or first.get("header") or "")
    more = f" (+{len(questions) - 1})" if len(questions) > 1 else ""
    return (text[:47] + "...") if len(text) > 50 else text + more


def point_rows(points: Sequence[Waitpoint]) -> None:
    echo_table(
        _HEADERS,
        [
            [
                p.id,
                p.app_name,
                p.user_id,
                p.session_id,
                p.invocation_id,
                p.status,
                when(p.created_at),
                _first_question(p),
            ]
            for p in points
        ],
    )


@click.group("waitpoints")
def waitpoints() -> None:
    """Every user's waiting points: list them, cancel one."""


@waitpoints.command("list")
@click.option(
    "--status",
    type=click.Choice(["pending", "answered", "cancelled", "all"]),
    default="pending",
    show_default=True,
)
@click.option("--user", "user_id", default=None, help="Only this user's points.")
@click.option("--app", "app_name", default=None, help="Only points of this app (agent id).")
@click.option("--session", "session_id", default=None, help="Only points of this session.")
@LIMIT_OPTION
@PAGE_TOKEN_OPTION
@JSON_OPTION
@DB_OPTION
def list_points(
    status: str,
    user_id: str | None,
    app_name: str | None,
    session_id: str | None,
    limit: int,
    page_token: str | None,
    as_json: bool,
    db: str,
) -> None:
    """Waiting points oldest first: who is asked, in which session, since when."""
    from adk_yuxi.waitpoints import WaitpointStore

    async def work(store: SqlStore) -> WaitpointPage:
        return await WaitpointStore(store).list_points(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            status=None if status == "all" else status,
            page_size=limit,
            page_token=page_token,
        )

    page = on_database(db, work)
    if as_json:
        items = [point_json(p) for p in page.items]
        echo_json({"waitpoints": items, "next_page_token": page.next_page_token})
        return
    point_rows(page.items)
    echo_more(page.next_page_token)


@waitpoints.command("cancel")
@click.argument("point_id")
@JSON_OPTION
@DB_OPTION
def cancel(point_id: str, as_json: bool, db: str) -> None:
    """Withdraws a pending waiting point (an answered or cancelled one is refused and
    stays as it is). Its run stays waiting: cancel the run to close it."""
    from adk_yuxi.ledger import RunLedger, RunRecord
    from adk_yuxi.waitpoints import WaitpointStore

    async def work(store: SqlStore) -> tuple[Waitpoint, RunRecord | None]:
        points = WaitpointStore(store)
        found = await points.find(point_id)
        if found is None:  # the operator names no user: not "for this user"
            raise click.ClickException(f"no waiting point {point_id!r}")
        cancelled = await points.cancel(found.id, user_id=found.user_id)
        run = await RunLedger(store).find(
            app_name=found.app_name,
            user_id=found.user_id,
            session_id=found.session_id,
            invocation_id=found.invocation_id,
        )
        return cancelled, run

    point, run = on_database(db, work)
    if as_json:
        echo_json(
            {
                **point_json(point),
                "run_id": None if run is None else run.run_id,
                "run_status": None if run is None else run.status,
            }
        )
        return
    point_rows([point])
    if run is not None and run.status == "waiting":
        click.echo(
            f"run {run.run_id} still waits: its next resume tells the model the question"
            f" was withdrawn; `yuxi runs cancel {run.run_id}` closes it",
            err=True,
        )
