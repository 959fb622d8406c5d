"""Marks event rows proven fast-readable, in the background after a read.

The mark is an optimisation for the next read, so it never delays the read that
proved it and a failed mark (database busy past its timeout) is only logged: the
row stays unmarked and is proven again next time. Marks wait a moment and go out
together, so a busy server marks many sessions' rows in one statement instead of
one per read (a session's next read comes a turn later). The store's ``close()``
waits for pending marks, so none is cut off holding a connection.

Until a mark is written, reads in this process take the row as marked
(``pending_codecs``): the proof is already made. Reads back to back never yield
to the loop long enough for the marks to go out (an inline SQLite read does not
yield at all), so without this a busy host re-proved every row on every read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

from .._sql.store import SqlStore
from ._event_codec import FAST_CODEC

_log = logging.getLogger(__name__)
# Bound parameters per UPDATE (at most about twice this): under either backend's limit.
_CHUNK = 500
# How long marks gather before they are written.
GATHER_SECONDS = 0.1


class FastMarks:
    """Background ``UPDATE ... SET fast_codec`` for rows a read has just proven."""

    def __init__(self, store: SqlStore, gather_seconds: float = GATHER_SECONDS) -> None:
        self._store = store
        self._gather_seconds = gather_seconds
        self._pending: dict[int, set[int]] = {}
        self._writing: dict[int, set[int]] = {}  # the batch being written
        self._wake: asyncio.Future[None] | None = None  # settle() ends the gathering

    def pending_codecs(
        self, row_id: int, seqs: Sequence[int], codecs: Sequence[str | None]
    ) -> Sequence[str | None]:
        """`codecs` of these rows, with the marks proven but not yet written filled in."""
        waiting, writing = self._pending.get(row_id), self._writing.get(row_id)
        if not (waiting or writing):
            return codecs
        pending = (waiting or set()) | (writing or set())
        return [
            FAST_CODEC if codec != FAST_CODEC and seq in pending else codec
            for seq, codec in zip(seqs, codecs, strict=True)
        ]

    def schedule(self, row_id: int, seqs: Sequence[int]) -> None:
        if not seqs:
            return
        if not self._pending:  # the first of a batch: its flush starts now
            wake = asyncio.get_running_loop().create_future()
            self._store.in_background(self._flush_soon(wake))
            self._wake = wake
        self._pending.setdefault(row_id, set()).update(seqs)

    async def _flush_soon(self, wake: asyncio.Future[None]) -> None:
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake, self._gather_seconds)
        finally:  # whatever happened, the next schedule() starts a new batch
            pending, self._pending = self._pending, {}
            self._writing = pending
        try:
            await self._write(pending)
        finally:
            if self._writing is pending:
                self._writing = {}

    async def _write(self, pending: dict[int, set[int]]) -> None:
        terms: list[str] = []
        params: dict[str, object] = {"codec": FAST_CODEC}
        runs = [
            (row, ordered[at : at + _CHUNK])
            for row, seqs in pending.items()
            for ordered in [sorted(seqs)]
            for at in range(0, len(ordered), _CHUNK)
        ]
        for row, seqs in runs:
            names = [f"s{len(params) + j}" for j in range(len(seqs))]
            params[f"r{len(terms)}"] = row
            params.update(zip(names, seqs, strict=True))
            terms.append(f"(sid = :r{len(terms)} AND seq IN ({', '.join(':' + n for n in names)}))")
            if len(params) >= _CHUNK:
                await self._mark(terms, params)
                terms, params = [], {"codec": FAST_CODEC}
        if terms:
            await self._mark(terms, params)

    async def _mark(self, terms: list[str], params: dict[str, object]) -> None:
        try:
            await self._store.write_one(
                f"UPDATE yx_events SET fast_codec = :codec WHERE ({' OR '.join(terms)})"
                " AND (fast_codec IS NULL OR fast_codec <> :codec)",
                params,
            )
        except Exception:  # best effort: the rows are proven again on the next read
            _log.debug("Marking the rows of %d sessions failed", len(terms), exc_info=True)

    async def settle(self) -> None:
        """Writes the marks scheduled so far now, and waits for them (and any other
        background work of the store)."""
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)
        await self._store.settle()
