"""What the operator's commands share: the one database, paging, errors as one line."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from adk_yuxi._sql.store import SqlStore

__all__ = ["LIMIT_OPTION", "PAGE_TOKEN_OPTION", "on_database"]

T = TypeVar("T")

LIMIT_OPTION = click.option(
    "--limit",
    type=click.IntRange(1, 500),
    default=50,
    show_default=True,
    help="At most this many rows (a next page token follows when there are more).",
)
PAGE_TOKEN_OPTION = click.option(
    "--page-token", default=None, help="Continue after the page that printed this token."
)


def on_database(db: str, work: Callable[[SqlStore], Awaitable[T]]) -> T:
    """Runs `work(store)` on the one database `db`; a library error (a refused take-over,
    an unknown run, a bad page token) becomes a one-line error and exit status 1."""
    from adk_yuxi.errors import YuxiError
    from adk_yuxi.storage import open_services

    async def main() -> T:
        services = open_services(db)
        try:
            return await work(services.store)
        finally:
            await services.close()

    try:
        return asyncio.run(main())
    except (YuxiError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
