"""The `--db` option every `yuxi` command shares: one default, one variable, one parser."""

from __future__ import annotations

import os

import click

__all__ = ["DB_HELP", "DB_OPTION", "resolve_db"]

DB_HELP = (
    "The database: a URL (sqlite:///rel.db, sqlite:////abs.db, postgresql://user@host/db;"
    " the driver forms sqlite+aiosqlite:// and postgresql+asyncpg://, and yuxi+sqlite://,"
    " yuxi+postgresql://, are accepted too) or an SQLite file path."
)


# Variables of the four databases there were before the one; set, they are a likely
# reason for "my data is gone", so they are named rather than silently ignored.
_RETIRED = ("YUXI_API_DB", "YUXI_KNOWLEDGE_DB", "YUXI_RECORDS_DB")


def resolve_db(
    _ctx: click.Context | None, _param: click.Parameter | None, value: str | None
) -> str:
    """`--db`, else `$YUXI_DATABASE_URL`, else `.yuxi/yuxi.db`, checked by the services'
    own URL parser: a misspelt URL is a usage error naming it, and nothing is created."""
    from adk_yuxi.errors import YuxiError
    from adk_yuxi.storage import DATABASE_URL_ENV, database_url

    if value is None and not os.environ.get(DATABASE_URL_ENV, "").strip():
        for name in _RETIRED:
            if os.environ.get(name, "").strip():
                click.echo(
                    f"note: {name} is no longer read; every command uses {DATABASE_URL_ENV}"
                    " (or --db), else .yuxi/yuxi.db",
                    err=True,
                )
    try:
        return database_url(value)
    except YuxiError as exc:
        source = "--db" if value is not None else "$YUXI_DATABASE_URL"
        raise click.BadParameter(str(exc), param_hint=source) from None


DB_OPTION = click.option(
    "--db",
    default=None,
    callback=resolve_db,
    metavar="URL|FILE",
    show_default="$YUXI_DATABASE_URL, else .yuxi/yuxi.db",
    help=DB_HELP,
)
