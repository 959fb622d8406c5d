"""Scoped state: splitting deltas by prefix and merging them inside the database.

State deltas are merged key by key in SQL (``dict.update`` semantics), never by
rewriting the whole object from a copy the writer read earlier, so two writers
changing different ``app:`` or ``user:`` keys of the same app or user at the same
time both keep their keys.

* PostgreSQL: ``state || delta`` on JSONB is exactly a top-level ``dict.update``.
* SQLite: ``json_set(state, '$."k1"', json(v1), ...)`` with paths and values bound
  as parameters; ``json_set`` keeps number literals as written, so floats and big
  integers round-trip. A key containing a double quote cannot be written as a
  SQLite JSON path, so such a delta falls back to read-merge-write, which is
  safe because it runs inside the write transaction (SQLite has one writer).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from google.adk.sessions.state import State
from pydantic_core import to_jsonable_python

from .store import Tx

EMPTY = "{}"


def json_safe(value: Mapping[str, Any]) -> dict[str, Any]:
    """Converts state values to JSON data, as ADK's SQL services do.

    Values with no JSON form (a callable, say) are stored as their ``repr`` rather
    than failing the whole write; NaN and infinities become null because neither
    SQLite's nor PostgreSQL's JSON accepts them.
    """
    try:
        converted = to_jsonable_python(dict(value), inf_nan_mode="null")
    except Exception:
        converted = {}
        for key, item in value.items():
            try:
                converted[key] = to_jsonable_python(item, inf_nan_mode="null")
            except Exception:
                converted[key] = repr(item)
    return dict(converted)


def split_state(state: Mapping[str, Any] | None) -> tuple[dict[str, Any], ...]:
    """Splits a delta into (app, user, session) parts; ``temp:`` keys are dropped."""
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    session: dict[str, Any] = {}
    for key, value in (state or {}).items():
        if key.startswith(State.APP_PREFIX):
            app[key.removeprefix(State.APP_PREFIX)] = value
        elif key.startswith(State.USER_PREFIX):
            user[key.removeprefix(State.USER_PREFIX)] = value
        elif not key.startswith(State.TEMP_PREFIX):
            session[key] = value
    return json_safe(app), json_safe(user), json_safe(session)


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


def dumps(value: Any) -> str:
    """Compact JSON text; ``ensure_ascii=False`` keeps CJK readable and short."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def loads(value: Any) -> dict[str, Any]:
    """Decodes a JSON object column (text on SQLite, JSONB on PostgreSQL)."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    decoded = json.loads(value)
    if not isinstance(decoded, dict):
        raise ValueError("Stored state is not a JSON object.")
    return decoded


def json_param(tx: Tx, name: str) -> str:
    """The placeholder for a JSON object parameter bound as text."""
    return f"CAST(:{name} AS JSONB)" if tx.backend == "postgresql" else f":{name}"


def _sqlite_paths_ok(delta: Mapping[str, Any]) -> bool:
    return all('"' not in key for key in delta)


def _merge_expr(tx: Tx, column: str, delta: Mapping[str, Any], params: dict[str, Any]) -> str:
    """SQL for ``column`` updated with ``delta``; binds what it needs into params."""
    if tx.backend == "postgresql":
        params["delta_all"] = dumps(delta)
        return f"{column} || CAST(:delta_all AS JSONB)"
    pieces = []
    for index, (key, value) in enumerate(delta.items()):
        params[f"dp{index}"] = f'$."{key}"'
        params[f"dv{index}"] = dumps(value)
        pieces.append(f":dp{index}, json(:dv{index})")
    return f"json_set({column}, {', '.join(pieces)})"


async def merge_session_state(
    tx: Tx, where_sql: str, where_params: Mapping[str, Any], delta: Mapping[str, Any]
) -> None:
    """Merges delta into the state of the one yx_sessions row matching where_sql."""
    if not delta:
        return
    params = dict(where_params)
    if tx.backend == "sqlite" and not _sqlite_paths_ok(delta):
        row = await tx.fetchone(f"SELECT state FROM yx_sessions WHERE {where_sql}", params)
        current = loads(row[0]) if row else {}
        current.update(delta)
        params["new_state"] = dumps(current)
        await tx.execute(f"UPDATE yx_sessions SET state = :new_state WHERE {where_sql}", params)
        return
    expr = _merge_expr(tx, "state", delta, params)
    await tx.execute(f"UPDATE yx_sessions SET state = {expr} WHERE {where_sql}", params)


async def upsert_scoped_state(
    tx: Tx, table: str, keys: Mapping[str, str], delta: Mapping[str, Any], now: float
) -> None:
    """Merges delta into the app or user state row, creating the row if needed."""
    if not delta:
        return
    columns = ", ".join(keys)
    key_params = {f"k_{name}": value for name, value in keys.items()}
    placeholders = ", ".join(f":k_{name}" for name in keys)
    where = " AND ".join(f"{name} = :k_{name}" for name in keys)
    params: dict[str, Any] = {**key_params, "now": now}
    if tx.backend == "sqlite" and not _sqlite_paths_ok(delta):
        row = await tx.fetchone(f"SELECT state FROM {table} WHERE {where}", key_params)
        current = loads(row[0]) if row else {}
        current.update(delta)
        params["full"] = dumps(current)
        await tx.execute(
            f"INSERT INTO {table} ({columns}, state, update_time) VALUES ({placeholders},"
            f" :full, :now) ON CONFLICT ({columns}) DO UPDATE SET state = excluded.state,"
            " update_time = excluded.update_time",
            params,
        )
        return
    params["full"] = dumps(delta)
    expr = _merge_expr(tx, f"{table}.state", delta, params)
    await tx.execute(
        f"INSERT INTO {table} ({columns}, state, update_time) VALUES ({placeholders},"
        f" {json_param(tx, 'full')}, :now) ON CONFLICT ({columns}) DO UPDATE SET"
        f" state = {expr}, update_time = excluded.update_time",
        params,
    )
