"""Listing sessions: one query ordered by last update time, paged by keyset."""

from __future__ import annotations

from typing import Any

from google.adk.sessions.session import Session

from .._adk import set_storage_marker
from .._sql.names import check_app_name, check_user_id
from .._sql.store import SqlStore
from . import _state as js
from ._rows import REVISION, UPDATE_TIME, marker


async def list_sessions_of(
    store: SqlStore,
    app_name: str,
    user_id: str | None,
    page_size: int | None,
    after: tuple[float, str, str] | None,
) -> tuple[list[Session], bool]:
    """Sessions (without events) ordered by last update, user, id; and whether more follow.

    ``after`` is the (update time, user id, session id) of the last session of
    the previous page.
    """
    app_name = check_app_name(app_name)
    params: dict[str, Any] = {"app": app_name}
    where = "s.app_name = :app"
    keyset = "1 = 1"
    if user_id is not None:
        params["user"] = check_user_id(user_id)
        where += " AND s.user_id = :user"
    if after is not None:
        params.update(at=after[0], au=after[1], asid=after[2])
        keyset = (
            "(update_time > :at OR (update_time = :at AND (user_id > :au"
            " OR (user_id = :au AND session_id > :asid))))"
        )
    sql = (
        "SELECT sid, user_id, session_id, state, revision, update_time FROM"
        f" (SELECT s.sid, s.user_id, s.session_id, s.state, {REVISION} AS revision,"
        f" {UPDATE_TIME} AS update_time FROM yx_sessions s WHERE {where}) listed"
        f" WHERE {keyset} ORDER BY update_time, user_id, session_id"
    )
    if page_size is not None:
        sql += " LIMIT :limit"
        params["limit"] = page_size + 1
    async with store.read() as tx:
        rows = await tx.fetchall(sql, params)
        more = page_size is not None and len(rows) > page_size
        rows = rows[:page_size] if page_size is not None else rows
        app_row = await tx.fetchone(
            "SELECT state FROM yx_app_states WHERE app_name = :app", {"app": app_name}
        )
        user_sql = "SELECT user_id, state FROM yx_user_states WHERE app_name = :app"
        if user_id is not None:
            user_sql += " AND user_id = :user"
        user_rows = await tx.fetchall(user_sql, params)
    app_state = js.loads(app_row[0]) if app_row else {}
    user_states = {uid: js.loads(state) for uid, state in user_rows}
    sessions = []
    for row_id, uid, sid, state, revision, update_time in rows:
        session = Session(
            id=sid,
            app_name=app_name,
            user_id=uid,
            state=js.merged_state(app_state, user_states.get(uid, {}), js.loads(state)),
            last_update_time=float(update_time),
        )
        set_storage_marker(session, marker(int(row_id), int(revision)))
        sessions.append(session)
    return sessions, more
