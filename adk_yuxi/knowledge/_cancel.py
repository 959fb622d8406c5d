"""Where a cancelled ingest stops: between statements, inside its transaction.

A cancellation (Ctrl-C in `yuxi kb ingest`) must land while the write transaction is
open, so it rolls back and the previous version stays, and never in the middle of a
statement the database driver cannot abandon cleanly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

__all__ = ["checkpoint", "whole"]


async def whole(statement: Awaitable[None]) -> None:
    """Runs one bounded batch to its end even when cancelled, then delivers the
    cancellation: asyncpg's `executemany` cancelled mid-payload can hang (and hold the
    base's row lock) instead of stopping, so a batch is never cut; the transaction
    then rolls back at once."""
    task = asyncio.ensure_future(statement)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait([task])
        raise


async def checkpoint() -> None:
    """Yields to the event loop so a pending cancellation is raised here. The database
    layers finish a statement they were cancelled in (a SQLite call cannot be stopped
    mid-way) and so can swallow the cancellation; here it is delivered again."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
    await asyncio.sleep(0)
