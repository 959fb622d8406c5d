"""Session state: splitting deltas by scope and merging them inside the database.

State deltas are merged key by key in SQL (``dict.update`` semantics), never by
rewriting the whole object from a copy the writer read earlier, so two writers
changing different ``app:`` or ``user:`` keys of the same app or user at the same
time both keep their keys. One merge object per backend:

* PostgreSQL: ``state || delta`` on JSONB is exactly a top-level ``dict.update``.
* SQLite: ``json_set(state, '$."k1"', json(v1), ...)`` with paths and values bound
  as parameters (``json_set`` keeps number literals as written, so floats and big
  integers round-trip). SQLite caps a function at 127 arguments, so larger
  deltas nest calls of at most 63 keys each. A key holding a double quote cannot
  be written as a JSON path, and a very large delta would exceed the statement's
  parameter limit; those fall back to read-merge-write, which is safe because it
  runs inside the write transaction (SQLite has one writer).

The usual delta (session keys only, no null and no object among its values) is the
case where RFC 7396's merge patch is exactly a top-level ``dict.update``: on SQLite
it travels with the event row (``state_patch``) and the row's insert trigger applies
it with ``json_patch`` (number literals kept as written), so such an append is one
autocommitted INSERT (``state_patch``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.adk.sessions.state import State

from .._sql.errors import InvalidValueError
from .._sql.jsonbounds import MAX_INT_DIGITS
from .._sql.jsoncodec import check_text, dumps, dumps_checked, json_safe, loads
from .._sql.store import Tx
from .._sql.urls import Backend

# Key/value pairs per json_set() call: 1 + 2 * 63 = 127 arguments, SQLite's cap.
_PAIRS_PER_CALL = 63
# Beyond this many keys one statement would near SQLite's 32,766 parameters.
_MAX_INLINE_KEYS = 4096


def _checked(
    part: dict[str, Any], prefix: str, texts: dict[str, str] | None = None
) -> dict[str, Any]:
    for key in part:
        if not key.isascii() or "\x00" in key:  # the error message only when needed
            check_text(key, f"state key {prefix + key!r}")
    text = dumps_checked(part, "state value under " + (prefix or "session") + " keys")
    if texts is not None:
        texts[prefix] = text
    return part


def split_state(
    state: Mapping[str, Any] | None, texts: dict[str, str] | None = None
) -> tuple[dict[str, Any], ...]:
    """Splits a delta into (app, user, session) parts; ``temp:`` keys are dropped.

    Keys and values every backend cannot store are refused here, before any SQL.
    The JSON text of each non-empty part goes into `texts` under its prefix
    (``""`` for the session's own keys), if given.
    """
    if not state:
        return {}, {}, {}
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    session: dict[str, Any] = {}
    for key, value in state.items():
        if type(key) is str and ":" not in key:  # the usual session key
            session[key] = value
            continue
        if not isinstance(key, str):
            raise InvalidValueError(f"Invalid state key {key!r}: state keys are strings.")
        if key.startswith(State.APP_PREFIX):
            app[key.removeprefix(State.APP_PREFIX)] = value
        elif key.startswith(State.USER_PREFIX):
            user[key.removeprefix(State.USER_PREFIX)] = value
        elif not key.startswith(State.TEMP_PREFIX):
            session[key] = value
    return (
        _checked(json_safe(app), State.APP_PREFIX, texts) if app else app,
        _checked(json_safe(user), State.USER_PREFIX, texts) if user else user,
        _checked(json_safe(session), "", texts) if session else session,
    )


_PATCHABLE = frozenset({str, int, bool})
_INT_BOUND = 10**MAX_INT_DIGITS


def plain_session_patch(delta: Mapping[str, Any]) -> str | None:
    """The usual delta in one pass: if every key is a plain session key (ASCII, no
    scope prefix) and every value a string, number or boolean, its JSON (which the
    insert trigger applies as a merge patch); else None, and `split_state` decides."""
    for key, value in delta.items():
        if type(key) is not str or ":" in key or not key.isascii() or "\x00" in key:
            return None
        kind = type(value)
        if kind not in _PATCHABLE and not (kind is float and value - value == 0.0):
            return None
        if kind is int and not -_INT_BOUND < value < _INT_BOUND:
            return None  # too long to read back: `json_safe` bounds it
    return dumps_checked(delta, "state value under session keys")


def state_patch(
    backend: Backend, parts: tuple[dict[str, Any], ...], texts: Mapping[str, str]
) -> str | None:
    """The session part's JSON if the event row can carry it as ``state_patch``
    (SQLite, session keys only, a merge patch equal to ``dict.update``), else None."""
    app, user, session = parts
    if backend != "sqlite" or app or user or not session:
        return None
    if any(value is None or type(value) is dict for value in session.values()):
        return None
    return texts[""]


def merged_state(
    app: Mapping[str, Any], user: Mapping[str, Any], session: Mapping[str, Any]
) -> dict[str, Any]:
    """The state a Session exposes: its own keys plus prefixed app and user keys."""
    result = dict(session)
    for key, value in app.items():
        result[State.APP_PREFIX + key] = value
    for key, value in user.items():
        result[State.USER_PREFIX + key] = value
    return result


class _JsonMerge:
    """How one backend binds a JSON object and merges a delta into a column."""

    def param(self, name: str) -> str:
        raise NotImplementedError

    def merge_expr(self, column: str, delta: Mapping[str, Any], params: dict[str, Any]) -> str:
        """SQL for ``column`` updated with ``delta``, or "" if it must be done in Python."""
        raise NotImplementedError


class _PgMerge(_JsonMerge):
    def param(self, name: str) -> str:
        return f"CAST(:{name} AS JSONB)"

    def merge_expr(self, column: str, delta: Mapping[str, Any], params: dict[str, Any]) -> str:
        params["delta_all"] = dumps(delta)
        return f"{column} || CAST(:delta_all AS JSONB)"


class _SqliteMerge(_JsonMerge):
    def param(self, name: str) -> str:
        return f":{name}"

    def merge_expr(self, column: str, delta: Mapping[str, Any], params: dict[str, Any]) -> str:
        if len(delta) > _MAX_INLINE_KEYS or any('"' in key for key in delta):
            return ""
        expr = column
        pieces: list[str] = []
        for index, (key, value) in enumerate(delta.items()):
            params[f"dp{index}"] = f'$."{key}"'
            params[f"dv{index}"] = dumps(value)
            pieces.append(f":dp{index}, json(:dv{index})")
            if len(pieces) == _PAIRS_PER_CALL:
                expr = f"json_set({expr}, {', '.join(pieces)})"
                pieces = []
        if pieces:
            expr = f"json_set({expr}, {', '.join(pieces)})"
        return expr


_MERGE: dict[Backend, _JsonMerge] = {"postgresql": _PgMerge(), "sqlite": _SqliteMerge()}


def json_param(tx: Tx, name: str) -> str:
    """The placeholder for a JSON object parameter bound as text."""
    return _MERGE[tx.backend].param(name)


async def merge_session_state(
    tx: Tx, where_sql: str, where_params: Mapping[str, Any], delta: Mapping[str, Any]
) -> None:
    """Merges delta into the state of the one yx_sessions row matching where_sql."""
    if not delta:
        return
    params = dict(where_params)
    expr = _MERGE[tx.backend].merge_expr("state", delta, params)
    if not expr:
        row = await tx.fetchone(f"SELECT state FROM yx_sessions WHERE {where_sql}", params)
        current = loads(row[0]) if row else {}
        current.update(delta)
        params = {**where_params, "new_state": dumps(current)}
        expr = ":new_state"
    await tx.execute(f"UPDATE yx_sessions SET state = {expr} WHERE {where_sql}", params)


async def upsert_scoped_state(
    tx: Tx, table: str, keys: Mapping[str, str], delta: Mapping[str, Any], now: float
) -> None:
    """Merges delta into the app or user state row, creating the row if needed."""
    if not delta:
        return
    merge = _MERGE[tx.backend]
    columns = ", ".join(keys)
    key_params = {f"k_{name}": value for name, value in keys.items()}
    placeholders = ", ".join(f":k_{name}" for name in keys)
    where = " AND ".join(f"{name} = :k_{name}" for name in keys)
    params: dict[str, Any] = {**key_params, "now": now, "full": dumps(delta)}
    expr = merge.merge_expr(f"{table}.state", delta, params)
    if not expr:
        row = await tx.fetchone(f"SELECT state FROM {table} WHERE {where}", key_params)
        current = loads(row[0]) if row else {}
        current.update(delta)
        params = {**key_params, "now": now, "full": dumps(current)}
        expr = "excluded.state"
    await tx.execute(
        f"INSERT INTO {table} ({columns}, state, update_time) VALUES ({placeholders},"
        f" {merge.param('full')}, :now) ON CONFLICT ({columns}) DO UPDATE SET"
        f" state = {expr}, update_time = excluded.update_time",
        params,
    )
