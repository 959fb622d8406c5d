"""SQL text and row helpers of SqlSessionService.

A Session handed out by the service carries ``yx:<sid>:<revision>`` in ADK's
``Session._storage_update_marker``: the row id guards against a deleted and
recreated session id, the revision is the optimistic lock.
"""

from __future__ import annotations

SESSION_ROW = (
    "SELECT s.sid, s.state, s.revision, s.update_time,"
    " (SELECT a.state FROM yx_app_states a WHERE a.app_name = :app),"
    " (SELECT u.state FROM yx_user_states u WHERE u.app_name = :app AND u.user_id = :user)"
    " FROM yx_sessions s WHERE s.app_name = :app AND s.user_id = :user AND s.session_id = :sid"
)
INSERT_EVENT = (
    "INSERT INTO yx_events (sid, seq, event_id, invocation_id, timestamp, data, fast_codec)"
    " SELECT sid, revision + 1, CAST(:event_id AS TEXT), CAST(:invocation_id AS TEXT),"
    " CAST(:ts AS DOUBLE PRECISION), CAST(:data AS TEXT), CAST(:fast_codec AS TEXT)"
    " FROM yx_sessions"
    " WHERE sid = :row AND revision = :rev"
    " AND app_name = :app AND user_id = :user AND session_id = :sid"
)
KEY = "app_name = :app AND user_id = :user AND session_id = :sid"


class NotAppended(Exception):
    """The guarded INSERT matched no session row at the expected revision."""


def marker(row_id: int, revision: int) -> str:
    return f"yx:{row_id}:{revision}"


def parse_marker(marker: str | None) -> tuple[int, int] | None:
    if not marker or not marker.startswith("yx:"):
        return None
    try:
        _, row_id, revision = marker.split(":")
        return int(row_id), int(revision)
    except ValueError:
        return None
