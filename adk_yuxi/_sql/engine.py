"""Creation and tuning of the SQLAlchemy engine the services share.

SQLite is tuned on every new connection: WAL lets readers run beside the single
writer, ``busy_timeout`` makes a second process wait for the write lock instead of
failing, ``synchronous=NORMAL`` keeps commits cheap in WAL mode (a power cut can
lose the last commits, a crashed process cannot) and foreign keys are enforced.

PostgreSQL connections are pinged before use only after they sat idle in the pool
(``pool_ping_idle_seconds``, 2 s by default): SQLAlchemy's ``pool_pre_ping`` costs
three round trips on every checkout (BEGIN, a ping, ROLLBACK), which under load were
most of a turn's database time, while a connection returned moments ago is as
likely to be alive as one just pinged. A dead one is replaced, not reported.

The PostgreSQL pool keeps ``pool_size`` connections (URL option, 20 by default) and
opens up to 10 more under a burst: SQLAlchemy's default of 5 kept made every
checkout beyond the fifth open a new connection and close it on return, which under
50 concurrent runs was most of the database server's work (a backend process per
connection) and a tenth of ours.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from .errors import DatabaseUnavailableError
from .jsoncodec import loads_bounded
from .urls import DEFAULT_BUSY_TIMEOUT_MS, DatabaseTarget

__all__ = [
    "DEFAULT_BUSY_TIMEOUT_MS",
    "DEFAULT_PG_POOL_SIZE",
    "DEFAULT_PING_IDLE_SECONDS",
    "create_engine",
    "sqlite_pragmas",
]

DEFAULT_PING_IDLE_SECONDS = 2.0
# Every connection the pool opens stays open: a burst past a smaller kept pool opened
# and closed connections all through a load, a server process forked for each
# (`bench/README.md`). The cap per worker is what 20 kept plus 10 in a burst was.
DEFAULT_PG_POOL_SIZE = 30
DEFAULT_PG_MAX_OVERFLOW = 0
_IDLE_SINCE = "yx_idle_since"


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
    ping_idle = kwargs.pop("pool_ping_idle_seconds", DEFAULT_PING_IDLE_SECONDS)
    if target.backend == "postgresql":
        kwargs.setdefault("json_deserializer", loads_bounded)  # JSONB rows of any depth
        if "poolclass" not in kwargs:  # a caller's own pool class may take neither
            size = int(target.options.get("pool_size", DEFAULT_PG_POOL_SIZE))
            kwargs.setdefault("pool_size", size)
            kwargs.setdefault("max_overflow", DEFAULT_PG_MAX_OVERFLOW)
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
        folder = Path(target.url.database).expanduser().parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DatabaseUnavailableError(
                f"Cannot create the folder of the SQLite database {target.redacted()}:"
                f" {exc.strerror or exc}"
            ) from exc
    engine = create_async_engine(target.url, **kwargs)
    if target.backend == "postgresql" and not kwargs.get("pool_pre_ping"):
        ping_when_idle(engine, float(ping_idle))
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


def ping_when_idle(engine: AsyncEngine, idle_seconds: float) -> None:
    """Pings a pooled connection at checkout when it was idle `idle_seconds` or more;
    one that fails is discarded and the pool hands out another (a fresh one)."""
    sync = engine.sync_engine
    errors = (sync.dialect.loaded_dbapi.Error, OSError)

    def checkin(_dbapi_connection: Any, record: Any) -> None:
        record.info[_IDLE_SINCE] = time.monotonic()

    def checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.pop(_IDLE_SINCE, None)
        if since is None or time.monotonic() - since < idle_seconds:
            return  # new, or back in the pool only a moment ago
        try:
            sync.dialect.do_ping(dbapi_connection)
        except errors as exc:
            raise DisconnectionError("pooled connection failed its ping") from exc

    event.listen(sync.pool, "checkin", checkin)
    event.listen(sync.pool, "checkout", checkout)
