"""`yuxi marks list`: improvement marks with the host API's filters, as an admin sees them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click

from ._database import DB_OPTION
from ._operator import LIMIT_OPTION, PAGE_TOKEN_OPTION, on_database
from ._table import JSON_OPTION, echo_json, echo_more, echo_table, when

if TYPE_CHECKING:
    from adk_yuxi._sql.store import SqlStore
    from adk_yuxi.marks import Mark, MarkPage

__all__ = ["marks"]

_HEADERS = ("MARK", "AGENT", "USER", "SESSION", "RUN", "CREATED", "REASON")


class _Time(click.ParamType):
    """Epoch seconds (as the query API takes them) or an ISO 8601 time (UTC if no zone)."""

    name = "TIME"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        text = str(value).strip()
        try:
            seconds = float(text)
        except ValueError:
            try:
                parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                self.fail(f"{value!r} is neither epoch seconds nor an ISO 8601 time", param, ctx)
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            seconds = parsed.timestamp()
        if not 0 <= seconds <= 1e11:
            self.fail(f"{value!r} is out of range", param, ctx)
        return seconds


def mark_json(mark: Mark) -> dict[str, Any]:
    """The query API's keys (`agent_id` is the app), with the user always named."""
    return {
        "id": mark.id,
        "agent_id": mark.app_name,
        "agent_name": mark.agent_name,
        "user_id": mark.user_id,
        "session_id": mark.session_id,
        "run_id": mark.run_id,
        "invocation_id": mark.invocation_id,
        "call_id": mark.call_id,
        "reason": mark.reason,
        "created_at": mark.created_at,
    }


@click.group("marks")
def marks() -> None:
    """Improvement marks the agents recorded, everyone's."""


@marks.command("list")
@click.option("--agent", default=None, help="Only marks of this agent (app) id.")
@click.option("--user", "user_id", default=None, help="Only this user's marks.")
@click.option("--since", type=_Time(), default=None, help="From this time on (inclusive).")
@click.option("--until", type=_Time(), default=None, help="Before this time (exclusive).")
@LIMIT_OPTION
@PAGE_TOKEN_OPTION
@JSON_OPTION
@DB_OPTION
def list_marks(
    agent: str | None,
    user_id: str | None,
    since: float | None,
    until: float | None,
    limit: int,
    page_token: str | None,
    as_json: bool,
    db: str,
) -> None:
    """Newest first, filtered as `GET /v1/marks` filters (agent, user, since, until)."""
    from adk_yuxi.marks import MarkStore

    if since is not None and until is not None and until < since:
        raise click.BadParameter("--until is before --since", param_hint="--until")

    async def work(store: SqlStore) -> MarkPage:
        return await MarkStore(store).list_marks(
            viewer_id="",
            viewer_is_admin=True,
            app_name=agent,
            user_id=user_id,
            since=since,
            until=until,
            page_size=limit,
            page_token=page_token,
        )

    page = on_database(db, work)
    if as_json:
        items = [mark_json(m) for m in page.items]
        echo_json({"marks": items, "next_page_token": page.next_page_token})
        return
    rows = [
        [m.id, m.app_name, m.user_id, m.session_id, m.run_id, when(m.created_at), m.reason[:60]]
        for m in page.items
    ]
    echo_table(_HEADERS, rows)
    echo_more(page.next_page_token)
