"""The one database every `yuxi` command, shipped agent and host uses unless told otherwise.

Sessions, knowledge bases, users, API keys and the run ledger live side by side (each
component migrates its own tables), so `yuxi kb ingest` fills the base the knowledge
agent reads and `yuxi access user add` makes the user `yuxi serve api` serves. One
variable, `YUXI_DATABASE_URL`, or a command's `--db`, moves all of it.
"""

from __future__ import annotations

import os
from pathlib import Path

from .._sql.urls import parse_database_url

__all__ = [
    "DATABASE_URL_ENV",
    "DEFAULT_DATABASE_URL",
    "database_url",
]

DATABASE_URL_ENV = "YUXI_DATABASE_URL"
DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///.yuxi/yuxi.db"


def database_url(value: str | None = None) -> str:
    """The database to use: `value`, else `$YUXI_DATABASE_URL`, else `.yuxi/yuxi.db`.

    A value without ``://`` is an SQLite file path. The result is checked by the one URL
    parser the services use, so a misspelt URL fails here, by name
    (`UnsupportedDatabaseUrlError`), before anything is opened or created.
    """
    raw = (value if value is not None else os.environ.get(DATABASE_URL_ENV, "")).strip()
    if not raw:
        raw = DEFAULT_DATABASE_URL
    elif "://" not in raw:
        raw = f"sqlite+aiosqlite:///{Path(raw).expanduser()}"
    parse_database_url(raw)
    return raw
