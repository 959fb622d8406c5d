"""Reads of a base's stored vectors (``yx_kb_vectors``) that the dense index is built
and brought up to date from: paged, so a base of 100,000 vectors never holds one long
statement, and yielding to the loop between pages."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import numpy as np

from .._sql.store import SqlStore

__all__ = ["rows_of", "vector_count", "vector_ids", "vector_rows"]

_LOAD_PAGE = 5000
_ID_PAGE = 50_000


async def vector_rows(store: SqlStore, kb_id: str) -> list[Any]:
    """(chunk id, vector) of every vector of the base, by chunk id (a full build)."""
    rows: list[Any] = []
    async for page in _pages(store, kb_id, "cid, vector", _LOAD_PAGE):
        rows.extend(page)
    return rows


async def _pages(store: SqlStore, kb_id: str, columns: str, size: int) -> AsyncIterator[list[Any]]:
    """The base's vector rows by chunk id, ``size`` a statement, the loop free between."""
    after = -1
    while True:
        async with store.read() as tx:
            page = await tx.fetchall(
                f"SELECT {columns} FROM yx_kb_vectors WHERE kb_id = :kb AND cid > :after"
                f" ORDER BY cid LIMIT {size}",
                {"kb": kb_id, "after": after},
            )
        yield page
        if len(page) < size:
            return
        after = int(page[-1][0])
        await asyncio.sleep(0)


async def vector_count(store: SqlStore, kb_id: str) -> int:
    """How many vectors the base holds: what a build would index, counted first."""
    async with store.read() as tx:
        row = await tx.fetchone(
            "SELECT count(*) FROM yx_kb_vectors WHERE kb_id = :kb", {"kb": kb_id}
        )
    return 0 if row is None else int(row[0])


async def vector_ids(store: SqlStore, kb_id: str) -> np.ndarray:
    """The chunk ids of the base's vectors, ascending (a page of 50,000 at a time)."""
    parts = [np.zeros(0, np.int64)]
    async for page in _pages(store, kb_id, "cid", _ID_PAGE):
        parts.append(np.fromiter((int(r[0]) for r in page), np.int64, len(page)))
    return np.concatenate(parts)


async def rows_of(store: SqlStore, cids: list[int]) -> list[Any]:
    """(chunk id, vector) of these chunks that still have one, 500 a statement."""
    rows: list[Any] = []
    for at in range(0, len(cids), 500):
        batch = {f"c{i}": c for i, c in enumerate(cids[at : at + 500])}
        async with store.read() as tx:
            rows += await tx.fetchall(
                "SELECT cid, vector FROM yx_kb_vectors"
                f" WHERE cid IN ({', '.join(':' + k for k in batch)})",
                batch,
            )
    return rows
