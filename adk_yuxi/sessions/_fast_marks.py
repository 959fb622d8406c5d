"""Marks event rows proven fast-readable, in the background after a read.

The mark is an optimisation for the next read, so it never delays the read that
proved it and a failed mark (database busy past its timeout) is only logged: the
row stays unmarked and is proven again next time. The store's ``close()`` waits
for pending marks, so none is cut off holding a connection.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from .._sql.store import SqlStore
from ._event_codec import FAST_CODEC

_log = logging.getLogger(__name__)
# Rows per UPDATE: well under either backend's limit of bound parameters.
_CHUNK = 500


class FastMarks:
    """Background ``UPDATE ... SET fast_codec`` for rows a read has just proven."""

    def __init__(self, store: SqlStore) -> None:
        self._store = store

    def schedule(self, row_id: int, seqs: Sequence[int]) -> None:
        if seqs:
            self._store.in_background(self._mark(row_id, list(seqs)))

    async def _mark(self, row_id: int, seqs: list[int]) -> None:
        try:
            for start in range(0, len(seqs), _CHUNK):
                chunk = seqs[start : start + _CHUNK]
                names = {f"s{i}": seq for i, seq in enumerate(chunk)}
                await self._store.write_one(
                    "UPDATE yx_events SET fast_codec = :codec WHERE sid = :row AND seq IN"
                    f" ({', '.join(':' + name for name in names)})"
                    " AND (fast_codec IS NULL OR fast_codec <> :codec)",
                    {"codec": FAST_CODEC, "row": row_id, **names},
                )
        except Exception:  # best effort: the rows are proven again on the next read
            _log.debug("Marking %d event rows fast-readable failed", len(seqs), exc_info=True)

    async def settle(self) -> None:
        """Waits for the marks scheduled so far (and any other background work)."""
        await self._store.settle()
