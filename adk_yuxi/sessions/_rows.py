"""SQL text and row helpers of SqlSessionService.

A session's revision is the ``seq`` of its last event (0 without events), and
its last update time that event's timestamp (its creation time without events):
both are read from the ``(sid, seq)`` primary key, so an append writes one event
row and nothing else. The primary key is also the optimistic lock: an append
inserts ``seq = revision + 1`` for the revision its Session copy was read at,
and a copy another writer has overtaken collides with the row that writer made.

A Session handed out by the service carries ``yx:<sid>:<revision>`` in ADK's
``Session._storage_update_marker``: the row id guards against a deleted and
recreated session id (sids are never reused), the revision is the lock. A Session
whose events are every event from some seq on (a full or windowed read, see
``_window``) carries ``yx:<sid>:<revision>:<first seq>``; one read with other
filters, or listed without events, does not.
"""

from __future__ import annotations

# The last event of session row ``s``, by primary key.
REVISION = "COALESCE((SELECT MAX(e.seq) FROM yx_events e WHERE e.sid = s.sid), 0)"
UPDATE_TIME = (
    "COALESCE((SELECT e.timestamp FROM yx_events e WHERE e.sid = s.sid"
    " ORDER BY e.seq DESC LIMIT 1), s.update_time)"
)
LAST_EVENT_ID = (
    "(SELECT e.event_id FROM yx_events e WHERE e.sid = s.sid ORDER BY e.seq DESC LIMIT 1)"
)
KEY = "app_name = :app AND user_id = :user AND session_id = :sid"

SESSION_ROW = (
    f"SELECT s.sid, s.state, {REVISION}, {UPDATE_TIME},"
    " (SELECT a.state FROM yx_app_states a WHERE a.app_name = :app),"
    " (SELECT u.state FROM yx_user_states u WHERE u.app_name = :app AND u.user_id = :user)"
    " FROM yx_sessions s WHERE s.app_name = :app AND s.user_id = :user AND s.session_id = :sid"
)
# The session row and all its events in one statement, so one snapshot: the session
# row first (``kind`` 0), then its events by seq (``kind`` 1).
SESSION_WITH_EVENTS = (
    f"SELECT 0 AS kind, s.sid, s.state, {REVISION}, {UPDATE_TIME},"
    " (SELECT a.state FROM yx_app_states a WHERE a.app_name = :app),"
    " (SELECT u.state FROM yx_user_states u WHERE u.app_name = :app AND u.user_id = :user),"
    " NULL AS seq, NULL AS data, NULL AS fast_codec, NULL AS event_id"
    " FROM yx_sessions s WHERE s.app_name = :app AND s.user_id = :user AND s.session_id = :sid"
    " UNION ALL"
    " SELECT 1, NULL, NULL, NULL, NULL, NULL, NULL, e.seq, e.data, e.fast_codec, e.event_id"
    " FROM yx_sessions s JOIN yx_events e ON e.sid = s.sid"
    " WHERE s.app_name = :app AND s.user_id = :user AND s.session_id = :sid"
    " ORDER BY kind, seq"
)
# The same from the latest window floor on (all events if there is none, or it is 0).
# The latest floor is found through the partial index, which SQLite's planner must be
# told to use: by the primary key it would walk the session's rows back from the end,
# all of them for a session that has no floor.
_FLOOR = (
    "COALESCE((SELECT f.window_floor FROM yx_events f{hint} WHERE f.sid = s.sid"
    " AND f.window_floor IS NOT NULL ORDER BY f.seq DESC LIMIT 1), 0)"
)
_HINTS = {"sqlite": " INDEXED BY ix_yx_events_floor", "postgresql": ""}
SESSION_WITH_WINDOW = {
    backend: SESSION_WITH_EVENTS.replace(
        " ORDER BY kind, seq", f" AND e.seq >= {_FLOOR.format(hint=hint)} ORDER BY kind, seq"
    )
    for backend, hint in _HINTS.items()
}
FLOOR_OF_ROW = {
    backend: _FLOOR.format(hint=hint).replace("s.sid", ":row") for backend, hint in _HINTS.items()
}
# ``patch``: a session-state delta applied by SQLite's trigger (NULL: none). The guard
# is a scalar subquery: a missing session makes ``sid`` NULL, which the NOT NULL
# constraint refuses. (``INSERT ... SELECT`` from yx_sessions, which that trigger
# updates, made SQLite buffer the row in a temporary table on every append.)
INSERT_EVENT = (
    "INSERT INTO yx_events (sid, seq, event_id, invocation_id, timestamp, data, window_floor,"
    f" state_patch) VALUES ((SELECT sid FROM yx_sessions WHERE sid = :row AND {KEY}),"
    " CAST(:rev AS BIGINT) + 1, CAST(:event_id AS TEXT), CAST(:invocation_id AS TEXT),"
    " CAST(:ts AS DOUBLE PRECISION), CAST(:data AS TEXT), CAST(:floor AS BIGINT),"
    " CAST(:patch AS TEXT))"
)


class NotAppended(Exception):
    """The guarded INSERT found no session row: the session is gone."""


def marker(row_id: int, revision: int, first: int | None = None) -> str:
    """The storage marker; `first` is the seq of the first event held if the Session
    holds every event from there on."""
    tail = "" if first is None else f":{first}"
    return f"yx:{row_id}:{revision}{tail}"


def parse_marker(marker: str | None) -> tuple[int, int, int | None] | None:
    """(row id, revision, first seq held or None), or None for a foreign marker."""
    if not marker or not marker.startswith("yx:"):
        return None
    try:
        parts = marker.split(":")
        if len(parts) == 3:
            return int(parts[1]), int(parts[2]), None
        _, row_id, revision, first = parts
        return int(row_id), int(revision), int(first)
    except ValueError:
        return None
