"""Database URLs accepted by the services, and the options they may carry.

Callers may write the URL the way SQLAlchemy expects it (``sqlite+aiosqlite://``,
``postgresql+asyncpg://``), the way ADK's CLI writes it (``sqlite://``,
``postgresql://``) or with the platform's CLI schemes (``yuxi+sqlite://``,
``yuxi+postgresql://``); all of them end up on the asynchronous driver. Path rules
follow SQLAlchemy: ``sqlite:///rel.db`` is relative to the working directory and
``sqlite:////abs/path.db`` is absolute.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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

# Query parameters that configure the services rather than the driver; they are
# removed before the URL reaches SQLAlchemy.
OPTION_KEYS = ("blob_dir", "max_artifact_bytes", "schema", "busy_timeout_ms")


@dataclass(frozen=True)
class DatabaseTarget:
    """A normalised database URL plus the service options found in its query."""

    url: URL
    backend: Backend
    options: dict[str, str] = field(default_factory=dict)

    def redacted(self) -> str:
        """The URL with any password masked, for messages and logs."""
        return self.url.render_as_string(hide_password=True)


def _redact(raw: str) -> str:
    try:
        return make_url(raw).render_as_string(hide_password=True)
    except ArgumentError:
        return raw.split("@")[-1] if "@" in raw else raw


def parse_database_url(raw: str | URL) -> DatabaseTarget:
    """Normalises a URL onto an async driver, refusing anything unsupported."""
    try:
        url = raw if isinstance(raw, URL) else make_url(str(raw).strip())
    except ArgumentError as exc:
        raise UnsupportedDatabaseUrlError(
            f"Cannot parse database URL {_redact(str(raw))!r}: expected something like"
            " 'sqlite+aiosqlite:///path.db' or 'postgresql+asyncpg://user@host/db'."
        ) from exc
    driver = url.drivername.lower()
    if driver not in _DRIVERS:
        supported = ", ".join(sorted(f"{name}://" for name in _DRIVERS))
        raise UnsupportedDatabaseUrlError(
            f"Unsupported database URL scheme {driver!r} in"
            f" {url.render_as_string(hide_password=True)!r}. Supported schemes: {supported}."
        )
    backend, async_driver = _DRIVERS[driver]
    query = dict(url.query)
    options: dict[str, str] = {}
    for key in OPTION_KEYS:
        if key in query:
            value = query.pop(key)
            options[key] = value if isinstance(value, str) else value[-1]
    url = url.set(drivername=async_driver, query=query)
    if backend == "sqlite":
        database = url.database or ""
        if database in ("", ":memory:") or query.get("mode") == "memory":
            raise UnsupportedDatabaseUrlError(
                "In-memory SQLite is not supported: the services use several connections"
                " and WAL mode, which need a database file. Use e.g."
                " 'sqlite+aiosqlite:///path/to/app.db' (a temporary file works for tests)."
            )
    elif "schema" in options and not options["schema"].replace("_", "").isalnum():
        raise UnsupportedDatabaseUrlError(
            f"Invalid schema option {options['schema']!r}: use letters, digits and underscores."
        )
    return DatabaseTarget(url=url, backend=backend, options=options)
