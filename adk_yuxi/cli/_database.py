"""The `--db` option every `yuxi` command shares: one default, one variable, one parser."""

from __future__ import annotations

import click

__all__ = ["DB_HELP", "DB_OPTION", "resolve_db"]

DB_HELP = (
    "The database: a URL (sqlite:///rel.db, sqlite:////abs.db, postgresql://user@host/db;"
    " the driver forms sqlite+aiosqlite:// and postgresql+asyncpg://, and yuxi+sqlite://,"
    " yuxi+postgresql://, are accepted too) or an SQLite file path."
)


def resolve_db(
    _ctx: click.Context | None, _param: click.Parameter | None, value: str | None
) -> str:
    """`--db`, else `$YUXI_DATABASE_URL`, else `.yuxi/yuxi.db`, checked by the services'
    own URL parser: a misspelt URL is a usage error naming it, and nothing is created."""
    from adk_yuxi.errors import YuxiError
    from adk_yuxi.storage import database_url

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
