"""ADK session service on SQLite or PostgreSQL, built for many fast appends.

Layout: one ``yx_sessions`` row per session (its own state as a JSON object and a
creation time), one ``yx_events`` row per event (the event as ADK's JSON, plus the
indexed columns ``sid, seq, timestamp``), and shared ``yx_app_states`` /
``yx_user_states`` rows for ``app:`` and ``user:`` keys.
Event rows also carry ``fast_codec``, which lets ``get_session`` skip ADK's slow
Python validators where a previous read proved that exact (see ``_event_codec``),
``window_floor``, where a windowed read (``SessionWindow``) may start (see
``_window``), and ``state_patch``, a session-state delta SQLite's insert trigger
merges (see ``_state``).

Concurrency policy: optimistic, like ADK's own SQL services. A ``Session`` handed
out by this service remembers the row id and revision it was read at (in ADK's
``Session._storage_update_marker``); the revision is the seq of the session's last
event. An append inserts its event at the next seq, so one made from a copy that
another writer has overtaken collides with that writer's event on the primary
key (see ``_rows``). A writer holding an older copy therefore
gets ``StaleSessionError`` (ours subclasses ADK's) and must reload the session
and retry; nothing it sent is half-applied. We raise rather than merge because
the Runner keeps working on the Session object it holds: silently merging would
let a model answer from a history that lacks the other writer's events. The
Runner's normal use (one in-memory Session per invocation, ``adk web`` reloading
it for every request) never sees the error. Concurrent appends through the *same*
Session object are not stale: they run one after another (``_object_locks``).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from google.adk.events.event import Event
from google.adk.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
)
from google.adk.sessions.session import Session
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from .._adk import (
    apply_temp_state,
    commit_event_to_session,
    read_for_a_run,
    set_storage_marker,
    storage_marker,
    trim_temp_delta_state,
)
from .._sql.errors import SessionExistsError
from .._sql.jsoncodec import check_text
from .._sql.names import check_app_name, check_session_id, check_user_id
from .._sql.store import IntegrityViolation, SqlStore, Tx, make_store
from . import _state as js
from ._event_cache import DEFAULT_MAX_EVENTS, EventCache, read_events
from ._event_codec import encode_event
from ._fast_marks import FastMarks
from ._listing import list_sessions_of
from ._object_locks import SessionObjectLocks
from ._paging import SessionPage, decode_token, encode_token
from ._revisions import adopt_revision, rejection
from ._rows import (
    FLOOR_OF_ROW,
    INSERT_EVENT,
    KEY,
    SESSION_ROW,
    SESSION_WITH_EVENTS,
    SESSION_WITH_WINDOW,
    NotAppended,
    marker,
    parse_marker,
)
from ._tail import StoredEvents, events_after
from ._window import SessionWindow, stored_floor, wants_window

_RUN_WINDOW = SessionWindow()


class SqlSessionService(BaseSessionService):
    """Sessions in one SQL database, safe for many processes writing at once.

    Args:
      db: An SQLAlchemy async URL (``sqlite+aiosqlite:///app.db``,
        ``postgresql+asyncpg://user@host/db``; ``sqlite://``, ``postgresql://`` and
        the ``yuxi+`` CLI schemes are accepted too) or an existing ``AsyncEngine``.
      window_runs: Read through a ``SessionWindow`` when ADK's Runner reads the session
        to run a turn without a ``get_session_config`` of its own (``adk run``,
        ``adk web``, a ``Runner.run_async`` without a run config). Every other read
        without a config (listing, export, ``adk web``'s session view) stays whole.
      **engine_kwargs: Passed to ``create_async_engine`` when ``db`` is a URL.
    """

    def __init__(
        self,
        db: str | URL | AsyncEngine | SqlStore,
        *,
        window_runs: bool = True,
        event_cache: int = DEFAULT_MAX_EVENTS,
        **engine_kwargs: Any,
    ) -> None:
        self.window_runs = window_runs
        self._events = EventCache(event_cache)
        self._store, self._owns_store = make_store(db, **engine_kwargs)
        self._object_locks = SessionObjectLocks()
        self._marks = FastMarks(self._store)
        self._sqlite = self._store.backend == "sqlite"

    async def close(self) -> None:
        """Releases connections (and the engine, if this service created it)."""
        await self._marks.settle()
        if self._owns_store:
            await self._store.close()

    async def flush(self) -> None:
        """Called by ``Runner.close()``: on SQLite, empties the WAL into the database file."""
        await self._store.flush()

    async def __aenter__(self) -> SqlSessionService:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # --- create / get / list / delete ----------------------------------------

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        app_name = check_app_name(app_name)
        user_id = check_user_id(user_id)
        session_id = check_session_id(session_id) if session_id else str(uuid.uuid4())
        app_delta, user_delta, session_state = js.split_state(state)
        now = time.time()
        params = {"app": app_name, "user": user_id, "sid": session_id}
        try:
            async with self._store.write() as tx:
                await tx.execute(
                    "INSERT INTO yx_sessions (app_name, user_id, session_id, state, revision,"
                    f" create_time, update_time) VALUES (:app, :user, :sid,"
                    f" {js.json_param(tx, 'state')}, 0, :now, :now)",
                    {**params, "state": js.dumps(session_state), "now": now},
                )
                await js.upsert_scoped_state(
                    tx, "yx_app_states", {"app_name": app_name}, app_delta, now
                )
                await js.upsert_scoped_state(
                    tx,
                    "yx_user_states",
                    {"app_name": app_name, "user_id": user_id},
                    user_delta,
                    now,
                )
                row = await tx.fetchone(SESSION_ROW, params)
        except IntegrityViolation as exc:
            raise SessionExistsError(
                f"Session {session_id!r} already exists for app {app_name!r} and user {user_id!r}."
            ) from exc
        assert row is not None
        return self._to_session(app_name, user_id, session_id, row, [], 1)

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        for_a_run = read_for_a_run()  # first, while the caller's frame is the one below
        if config is None and self.window_runs and for_a_run:
            config = _RUN_WINDOW
        app_name = check_app_name(app_name)
        user_id = check_user_id(user_id)
        session_id = check_session_id(session_id)
        params = {"app": app_name, "user": user_id, "sid": session_id}
        first: int | None = None
        async with self._store.read() as tx:
            if _unfiltered(config):
                windowed = wants_window(config)
                sql = SESSION_WITH_WINDOW[tx.backend] if windowed else SESSION_WITH_EVENTS
                both = await tx.fetchall(sql, params)
                if not both or both[0][0] != 0:
                    return None
                row, rows = both[0][1:7], [r[7:] for r in both[1:]]
                first = int(rows[0][0]) if rows else int(row[2]) + 1
            else:
                found = await tx.fetchone(SESSION_ROW, params)
                if found is None:
                    return None
                row, rows = found, await self._event_rows(tx, found[0], found[2], config)
        events = read_events(
            self._events, self._marks, int(row[0]), rows, shared=for_a_run and _unfiltered(config)
        )
        return self._to_session(app_name, user_id, session_id, row, events, first)

    async def events_after(
        self, *, app_name: str, user_id: str, session_id: str, after_seq: int = 0
    ) -> StoredEvents | None:
        """The session's events stored after `after_seq` and the seq to poll after next:
        what a follower reads instead of the whole session (None: no such session)."""
        return await events_after(
            self._store,
            self._events,
            self._marks,
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            after_seq=after_seq,
        )

    async def _event_rows(
        self, tx: Tx, row_id: int, revision: int, config: GetSessionConfig | None
    ) -> list[Any]:
        """Fetches event JSON, with the config's filters done by the database: the
        window and ``num_recent_events`` as ranges of the ``(sid, seq)`` primary key,
        ``after_timestamp`` as a filter on the session's range.

        Bounding by ``seq <= revision`` pins the events to the state read in the
        same call, even when a concurrent append lands in between.
        """
        limit = config.num_recent_events if config else None
        after = config.after_timestamp if config else None
        if limit == 0:
            return []
        sql = (
            "SELECT seq, data, fast_codec, event_id FROM yx_events WHERE sid = :row AND seq <= :rev"
        )
        params: dict[str, Any] = {"row": row_id, "rev": revision}
        if after is not None:
            sql += " AND timestamp >= :after"
            params["after"] = after
        if wants_window(config):
            sql += f" AND seq >= {FLOOR_OF_ROW[tx.backend]}"
        if limit is None:
            return await tx.fetchall(sql + " ORDER BY seq", params)
        params["limit"] = limit
        rows = await tx.fetchall(sql + " ORDER BY seq DESC LIMIT :limit", params)
        rows.reverse()
        return rows

    def _to_session(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        row: Any,
        events: list[Event],
        first: int | None,
    ) -> Session:
        row_id, state, revision, update_time, app_state, user_state = row
        session = Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=js.merged_state(js.loads(app_state), js.loads(user_state), js.loads(state)),
            events=events,
            last_update_time=float(update_time),
        )
        set_storage_marker(session, marker(int(row_id), int(revision), first))
        return session

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        """All sessions (without events), oldest update first, as ADK orders them."""
        sessions, _ = await list_sessions_of(self._store, app_name, user_id, None, None)
        return ListSessionsResponse(sessions=sessions)

    async def list_sessions_page(
        self,
        *,
        app_name: str,
        user_id: str | None = None,
        page_size: int = 100,
        page_token: str | None = None,
    ) -> SessionPage:
        """One page of ``list_sessions``; pass ``next_page_token`` back for the next."""
        if page_size < 1:
            raise ValueError("page_size must be at least 1.")
        after = decode_token(page_token) if page_token else None
        sessions, more = await list_sessions_of(self._store, app_name, user_id, page_size, after)
        token = None
        if more and sessions:
            last = sessions[-1]
            token = encode_token((last.last_update_time, last.user_id, last.id))
        return SessionPage(sessions=sessions, next_page_token=token)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Deletes the session and its events; deleting a missing session is a no-op."""
        async with self._store.write() as tx:
            await self.forget_session(tx, app_name=app_name, user_id=user_id, session_id=session_id)

    @staticmethod
    async def forget_session(tx: Tx, *, app_name: str, user_id: str, session_id: str) -> int:
        """`delete_session` inside the caller's transaction (which deletes what else
        belongs to the session with it); returns 1 if the session existed, else 0."""
        params = {
            "app": check_app_name(app_name),
            "user": check_user_id(user_id),
            "sid": check_session_id(session_id),
        }
        # Explicit, so a caller's engine without foreign keys on still cleans up.
        await tx.execute(
            f"DELETE FROM yx_events WHERE sid IN (SELECT sid FROM yx_sessions WHERE {KEY})",
            params,
        )
        return await tx.execute(f"DELETE FROM yx_sessions WHERE {KEY}", params)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        params = {"app": check_app_name(app_name), "user": check_user_id(user_id)}
        async with self._store.read() as tx:
            row = await tx.fetchone(
                "SELECT state FROM yx_user_states WHERE app_name = :app AND user_id = :user",
                params,
            )
        return js.loads(row[0]) if row else {}

    # --- append ---------------------------------------------------------------

    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        async with self._object_locks.lock_for(session):
            return await self._append(session, event)

    async def _append(self, session: Session, event: Event) -> Event:
        params: dict[str, Any] = {
            "app": check_app_name(session.app_name),
            "user": check_user_id(session.user_id),
            "sid": check_session_id(session.id),
        }
        apply_temp_state(self, session, event)
        event = trim_temp_delta_state(self, event)
        delta = event.actions.state_delta if event.actions else None
        expected = parse_marker(storage_marker(session))
        if expected is None:
            expected = (*await adopt_revision(self._store, session, params), None)
        row_id, revision, first = expected
        patch = js.plain_session_patch(delta) if delta and self._sqlite else None
        if patch is not None:
            app_delta, user_delta, session_delta = {}, {}, delta or {}
        else:
            texts: dict[str, str] = {}
            parts = js.split_state(delta, texts)
            app_delta, user_delta, session_delta = parts
            patch = js.state_patch(self._store.backend, parts, texts)
        event_id = check_text(event.id, "event id")
        invocation_id = check_text(event.invocation_id or "", "invocation id")
        data = encode_event(event)
        params.update(
            row=row_id,
            rev=revision,
            event_id=event_id,
            invocation_id=invocation_id,
            ts=event.timestamp,
            data=data,
            floor=stored_floor(session, event, revision, first),
            patch=patch,
        )
        try:
            if patch is not None or not (app_delta or user_delta or session_delta):
                # The common cases: one autocommitted statement (see INSERT_EVENT; a
                # session-state patch is applied by the insert trigger).
                if await self._store.write_one(INSERT_EVENT, params) != 1:
                    raise NotAppended
            else:
                await self._append_with_state(params, app_delta, user_delta, session_delta)
        except (NotAppended, IntegrityViolation) as exc:
            raise await rejection(self._store, params, revision) from exc
        set_storage_marker(session, marker(row_id, revision + 1, first))
        session.last_update_time = event.timestamp
        return commit_event_to_session(self, session, event)

    async def _append_with_state(
        self,
        params: dict[str, Any],
        app_delta: dict[str, Any],
        user_delta: dict[str, Any],
        session_delta: dict[str, Any],
    ) -> None:
        """The event insert plus its state merges, in one transaction."""
        async with self._store.write() as tx:
            if await tx.execute(INSERT_EVENT, params) != 1:
                raise NotAppended
            now = params["ts"]
            await js.merge_session_state(tx, "sid = :row", {"row": params["row"]}, session_delta)
            await js.upsert_scoped_state(
                tx, "yx_app_states", {"app_name": params["app"]}, app_delta, now
            )
            await js.upsert_scoped_state(
                tx,
                "yx_user_states",
                {"app_name": params["app"], "user_id": params["user"]},
                user_delta,
                now,
            )


def _unfiltered(config: GetSessionConfig | None) -> bool:
    """Whether the config asks for every event, or every event of the window (then
    one statement reads the session and its events)."""
    return config is None or (config.num_recent_events is None and config.after_timestamp is None)
