"""Creation and tuning of the SQLAlchemy engine the services share.

SQLite is tuned on every new connection: WAL lets readers run beside the single
writer, ``busy_timeout`` makes a second process wait for the write lock instead of
failing, ``synchronous=NORMAL`` keeps commits cheap in WAL mode (a power cut can
lose the last commits, a crashed process cannot) and foreign keys are enforced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from .urls import DEFAULT_BUSY_TIMEOUT_MS, DatabaseTarget

__all__ = ["DEFAULT_BUSY_TIMEOUT_MS", "create_engine", "sqlite_pragmas"]


def sqlite_pragmas(busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> list[str]:
    """The PRAGMA statements every SQLite connection of the services runs."""
    return [
        f"PRAGMA busy_timeout={int(busy_timeout_ms)}",
        "PRAGMA journal_mode=WAL",
        "PRAGMA synchronous=NORMAL",
        "PRAGMA foreign_keys=ON",
    ]


def create_engine(target: DatabaseTarget, **engine_kwargs: Any) -> AsyncEngine:
    """Creates an engine for a normalised target, tuned for its backend."""
    kwargs = dict(engine_kwargs)
    if target.backend == "postgresql":
        kwargs.setdefault("pool_pre_ping", True)
        schema = target.options.get("schema")
        if schema:
            connect_args = dict(kwargs.get("connect_args", {}))
            settings = dict(connect_args.get("server_settings", {}))
            settings.setdefault("search_path", schema)
            connect_args["server_settings"] = settings
            kwargs["connect_args"] = connect_args
    if target.backend == "sqlite" and target.url.database:
        # A new deployment's data directory may not exist yet; SQLite would only say
        # "unable to open database file".
        Path(target.url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_async_engine(target.url, **kwargs)
    if target.backend == "sqlite":
        timeout = int(target.options.get("busy_timeout_ms", DEFAULT_BUSY_TIMEOUT_MS))
        pragmas = sqlite_pragmas(timeout)

        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            try:
                for pragma in pragmas:
                    cursor.execute(pragma)
            finally:
                cursor.close()

        event.listen(engine.sync_engine, "connect", _on_connect)
    return engine
