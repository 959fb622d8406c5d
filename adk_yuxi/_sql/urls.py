"""Database URLs accepted by the services, and the options they may carry.

Callers may write the URL the way SQLAlchemy expects it (``sqlite+aiosqlite://``,
``postgresql+asyncpg://``), the way ADK's CLI writes it (``sqlite://``,
``postgresql://``) or with the platform's CLI schemes (``yuxi+sqlite://``,
``yuxi+postgresql://``, ``yuxi+postgres://``); all of them end up on the
asynchronous driver. Path rules follow SQLAlchemy: ``sqlite:///rel.db`` is
relative to the working directory and ``sqlite:////abs/path.db`` is absolute.
Every option is checked here, so a bad one fails at construction, by name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from .errors import UnsupportedDatabaseUrlError

Backend = Literal["sqlite", "postgresql"]

_DRIVERS: dict[str, tuple[Backend, str]] = {
    "yuxi+sqlite": ("sqlite", "sqlite+aiosqlite"),
    "sqlite": ("sqlite", "sqlite+aiosqlite"),
    "sqlite+aiosqlite": ("sqlite", "sqlite+aiosqlite"),
    "yuxi+postgresql": ("postgresql", "postgresql+asyncpg"),
    "yuxi+postgres": ("postgresql", "postgresql+asyncpg"),
    "postgresql": ("postgresql", "postgresql+asyncpg"),
    "postgres": ("postgresql", "postgresql+asyncpg"),
    "postgresql+asyncpg": ("postgresql", "postgresql+asyncpg"),
}

DEFAULT_BUSY_TIMEOUT_MS = 30_000
# PostgreSQL folds unquoted names to lower case; a schema name we put on the
# search_path must therefore be lower case already (and at most 63 bytes).
_PG_SCHEMA_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def _int_option(minimum: int) -> Callable[[str, str], str]:
    def check(name: str, value: str) -> str:
        try:
            number = int(value)
        except ValueError:
            number = minimum - 1
        if number < minimum:
            raise UnsupportedDatabaseUrlError(
                f"Invalid {name}={value!r}: expected a whole number of at least {minimum}."
            )
        return str(number)

    return check


def _schema_option(name: str, value: str) -> str:
    if not _PG_SCHEMA_RE.fullmatch(value):
        raise UnsupportedDatabaseUrlError(
            f"Invalid {name}={value!r}: use lower-case letters, digits and underscores,"
            " starting with a letter or underscore, at most 63 characters."
        )
    return value


def _path_option(name: str, value: str) -> str:
    if not value.strip() or "\x00" in value:
        raise UnsupportedDatabaseUrlError(f"Invalid {name}={value!r}: expected a directory path.")
    return value


# Query parameters that configure the services rather than the driver; they are
# removed before the URL reaches SQLAlchemy.
OPTION_CHECKS: dict[str, Callable[[str, str], str]] = {
    "blob_dir": _path_option,
    "max_artifact_bytes": _int_option(1),
    "schema": _schema_option,
    "busy_timeout_ms": _int_option(0),
    "pool_size": _int_option(1),
}
OPTION_KEYS = tuple(OPTION_CHECKS)


@dataclass(frozen=True)
class DatabaseTarget:
    """A normalised database URL plus the service options found in its query."""

    url: URL
    backend: Backend
    options: dict[str, str] = field(default_factory=dict)

    def redacted(self) -> str:
        """The URL with any password masked and paths as written, for messages.

        A relative SQLite path also names the file it resolves to, since that
        depends on the working directory.
        """
        shown = self.url.render_as_string(hide_password=True)
        database = self.url.database or ""
        if self.backend == "sqlite" and not database.startswith(("/", "file:")):
            return f"{shown} (file {os.path.abspath(os.path.expanduser(database))})"
        return shown


def _redact(raw: str) -> str:
    try:
        return make_url(raw).render_as_string(hide_password=True)
    except ArgumentError:
        return raw.split("@")[-1] if "@" in raw else raw


def with_options(target: DatabaseTarget, extra: Mapping[str, str] | None) -> DatabaseTarget:
    """The target with options merged in, each checked, and defaults filled."""
    merged = {**target.options, **dict(extra or {})}
    for name, value in merged.items():
        check = OPTION_CHECKS.get(name)
        if check is None:
            known = ", ".join(OPTION_KEYS)
            raise UnsupportedDatabaseUrlError(f"Unknown option {name!r}: expected one of {known}.")
        merged[name] = check(name, str(value))
    if target.backend == "sqlite":
        if "schema" in merged:
            raise UnsupportedDatabaseUrlError(
                "The schema option is for PostgreSQL; a SQLite database has no schemas."
            )
        if "pool_size" in merged:
            raise UnsupportedDatabaseUrlError(
                "The pool_size option is for PostgreSQL; SQLite uses one writer connection."
            )
        merged.setdefault("busy_timeout_ms", str(DEFAULT_BUSY_TIMEOUT_MS))
    return replace(target, options=merged)


def _check_sqlite(url: URL, shown: str) -> None:
    database = url.database or ""
    is_uri = str(url.query.get("uri", "")).lower() in ("1", "true")
    in_memory = (
        database in ("", ":memory:")
        or url.query.get("mode") == "memory"
        or (is_uri and (database.startswith("file::memory:") or "mode=memory" in database))
    )
    if url.host:
        raise UnsupportedDatabaseUrlError(
            f"SQLite URL {shown!r} has a host part ({url.host!r}): a SQLite path follows"
            " three slashes, e.g. 'yuxi+sqlite:///app.db' (relative to the working"
            " directory) or 'yuxi+sqlite:////srv/app.db' (absolute)."
        )
    if in_memory:
        raise UnsupportedDatabaseUrlError(
            "In-memory SQLite is not supported: the services use several connections"
            " and WAL mode, which need a database file. Use e.g."
            " 'sqlite+aiosqlite:///path/to/app.db' (a temporary file works for tests)."
        )


def parse_database_url(raw: str | URL) -> DatabaseTarget:
    """Normalises a URL onto an async driver, refusing anything unsupported."""
    try:
        url = raw if isinstance(raw, URL) else make_url(str(raw).strip())
    except ArgumentError as exc:
        raise UnsupportedDatabaseUrlError(
            f"Cannot parse database URL {_redact(str(raw))!r}: expected something like"
            " 'sqlite+aiosqlite:///path.db' or 'postgresql+asyncpg://user@host/db'."
        ) from exc
    shown = url.render_as_string(hide_password=True)
    driver = url.drivername.lower()
    if driver not in _DRIVERS:
        supported = ", ".join(sorted(f"{name}://" for name in _DRIVERS))
        raise UnsupportedDatabaseUrlError(
            f"Unsupported database URL scheme {driver!r} in {shown!r}."
            f" Supported schemes: {supported}."
        )
    backend, async_driver = _DRIVERS[driver]
    query = dict(url.query)
    options: dict[str, str] = {}
    for key in OPTION_KEYS:
        if key in query:
            value = query.pop(key)
            options[key] = value if isinstance(value, str) else value[-1]
    if backend == "sqlite":
        _check_sqlite(url, shown)
    url = url.set(drivername=async_driver, query=query)
    return with_options(DatabaseTarget(url=url, backend=backend, options={}), options)
