"""The inline SQLite writer: one stdlib connection used on the event loop's thread.

A hop to aiosqlite's worker thread costs far more than the statement (numbers in
``docs/design/sqlite-writer.md``, so the store writes on its own thread. It
may only do work inline that never waits for another connection:

* Every statement first runs with ``busy_timeout=0``. If SQLite answers
  ``SQLITE_BUSY`` (another connection or process holds the write lock, or is
  recovering the WAL), nothing was written, and the *wait* moves to a worker
  thread: ``BEGIN IMMEDIATE`` with the configured busy timeout. Once that holds
  the write lock the statements run inline again; in WAL mode a connection that
  holds the write lock never waits on anyone, so they cannot block.
* A task cancelled while the worker thread waits cannot stop that thread. The
  store then queues a rollback behind it on the same single-thread executor and
  records it; whoever takes the writer next (or ``close``) awaits that rollback
  first, so a lock won after the cancellation is released and never leaks into
  the next writer's transaction. A cancelled ``write_one`` therefore never
  commits on the contended path: its statement only runs after the wait.
* Automatic checkpoints are off on this connection (``wal_autocheckpoint=0``):
  they fsync and would run inline inside a commit. Every ``CHECKPOINT_EVERY``
  commits a background task checkpoints on a separate connection in its own
  thread (one at a time): first ``PRAGMA wal_checkpoint(PASSIVE)`` while writes
  go on, which copies the bulk, then a second PASSIVE pass holding the store's
  write lock, which copies the few frames written meanwhile. Only a fully
  copied WAL is restarted from its beginning by the next write, and under a
  steady stream of appends the unlocked pass alone never catches up, so the
  locked tail is what keeps the file bounded; writers wait for it
  asynchronously (the loop runs on), for about one fsync. If a task appends
  in a tight loop that never yields, the background task cannot run; after
  four times ``CHECKPOINT_EVERY`` commits the next writer then checkpoints
  first (in the thread, before its statement). ``flush`` and ``close`` run a
  ``TRUNCATE`` checkpoint; ``journal_size_limit`` cuts a WAL that grew behind a
  long reader back to ``WAL_SIZE_LIMIT`` once it restarts. Other processes keep
  SQLite's default autocheckpoint.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from ._sqlite_tx import InlineTx, is_busy
from ._tx import Params
from .engine import sqlite_pragmas

_log = logging.getLogger(__name__)
T = TypeVar("T")

# Commits between two background PASSIVE checkpoints. An append writes a few
# pages, so this keeps the WAL under SQLite's default of 1000 pages (4 MiB).
CHECKPOINT_EVERY = 128
# Commits (in multiples of CHECKPOINT_EVERY) after which the next writer runs the
# checkpoint itself, waiting for it in the thread, instead of leaving it to the
# background task.
_BACKLOG_FACTOR = 4
# The size a WAL file is cut back to once it restarts (bytes).
WAL_SIZE_LIMIT = 4 * 1024 * 1024
# How long a final TRUNCATE checkpoint waits for other connections' readers.
_TRUNCATE_WAIT_S = 1.0


def open_inline(database: str, *, uri: bool, busy_timeout_ms: int) -> sqlite3.Connection:
    """A stdlib connection with the services' pragmas, then ``busy_timeout=0``.

    Opening may wait (setting WAL mode), so callers run this in a thread.
    """
    conn = sqlite3.connect(
        database,
        uri=uri,
        timeout=busy_timeout_ms / 1000,
        isolation_level=None,  # autocommit; transactions are explicit
        check_same_thread=False,  # opened in a thread, used on the loop's
        cached_statements=256,
    )
    try:
        for pragma in sqlite_pragmas(busy_timeout_ms):
            conn.execute(pragma)
        conn.execute("PRAGMA busy_timeout=0")
    except BaseException:
        conn.close()
        raise
    return conn


class InlineWriter:
    """The store's one SQLite write connection; callers hold ``lock`` to use it."""

    def __init__(
        self,
        database: str,
        *,
        uri: bool,
        busy_timeout_ms: int,
        checkpoint_every: int | None = None,
    ) -> None:
        self.lock = asyncio.Lock()
        self._database = database
        self._uri = uri
        self._timeout_ms = busy_timeout_ms
        every = CHECKPOINT_EVERY if checkpoint_every is None else checkpoint_every
        self._checkpoint_every = max(1, every)
        self._conn: sqlite3.Connection | None = None
        self._ckpt_conn: sqlite3.Connection | None = None
        # One thread each, so queued work on a connection stays in order.
        self._waiter = ThreadPoolExecutor(1, thread_name_prefix="yuxi-sqlite-wait")
        self._checkpointer = ThreadPoolExecutor(1, thread_name_prefix="yuxi-sqlite-ckpt")
        self._settling: asyncio.Future[None] | None = None
        self._checkpoint: asyncio.Task[None] | None = None
        self._commits = 0
        self._closing = False
        # The loop the writer's tasks and futures belong to (set on first use).
        self.loop: asyncio.AbstractEventLoop | None = None

    # --- thread work ------------------------------------------------------------

    def _open(self) -> None:
        conn = open_inline(self._database, uri=self._uri, busy_timeout_ms=self._timeout_ms)
        conn.execute("PRAGMA wal_autocheckpoint=0")
        # When this connection restarts a fully checkpointed WAL it cuts the file
        # back to this size, so a WAL grown behind a long reader shrinks again.
        conn.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
        self._conn = conn

    def _wait_for(self, sql: str) -> None:
        """Runs ``sql`` allowing SQLite's busy handler to wait (worker thread)."""
        conn = self._require()
        conn.execute(f"PRAGMA busy_timeout={self._timeout_ms}")
        try:
            conn.execute(sql)
        finally:
            conn.execute("PRAGMA busy_timeout=0")

    def _abandon(self) -> None:
        """Rolls back whatever an abandoned wait left open (worker thread)."""
        conn = self._conn
        if conn is None or not conn.in_transaction:
            return
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            _log.warning("Rollback after a cancelled SQLite wait failed; reopening", exc_info=True)
            self._conn = None
            conn.close()  # closing rolls back and releases the lock

    def _run_checkpoint(self, mode: str = "PASSIVE") -> None:
        try:
            if self._ckpt_conn is None:
                self._ckpt_conn = sqlite3.connect(
                    self._database,
                    uri=self._uri,
                    isolation_level=None,
                    check_same_thread=False,
                    timeout=_TRUNCATE_WAIT_S,
                )
            self._ckpt_conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()
        except sqlite3.Error:
            # A skipped checkpoint is retried after the next batch of commits.
            _log.warning("SQLite WAL checkpoint (%s) failed", mode, exc_info=True)

    def truncate_wal(self) -> None:
        """Copies the whole WAL into the database and empties the file (any thread).

        Waits up to a second for readers of other connections; if they stay,
        the WAL is left for the next checkpoint.
        """
        self._run_checkpoint("TRUNCATE")

    def _close_connections(self) -> None:
        for conn in (self._conn, self._ckpt_conn):
            if conn is not None:
                conn.close()
        self._conn = self._ckpt_conn = None

    # --- helpers for the lock holder ----------------------------------------------

    def _require(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("The SQLite writer connection is not open.")
        return self._conn

    async def _in_thread(self, fn: Callable[[], T]) -> T:
        """Runs a waiting call on the wait thread; cancellation queues a rollback."""
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._waiter, fn)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            # The thread cannot be stopped: undo what it may still win, after it.
            self._settling = loop.run_in_executor(self._waiter, self._abandon)
            raise

    async def connection(self) -> sqlite3.Connection:
        """The connection, once any abandoned wait has been undone."""
        if self._closing:
            raise RuntimeError("The SQL store has been closed.")
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        settling = self._settling
        if settling is not None:
            await asyncio.shield(settling)
            if self._settling is settling:
                self._settling = None
        if self._conn is None:
            await self._in_thread(self._open)
        if self._commits >= _BACKLOG_FACTOR * self._checkpoint_every:
            # Background cycles fell behind (a task appending without yielding to
            # the loop starves them): checkpoint now, before writing, off the loop.
            self._commits = 0
            loop = asyncio.get_running_loop()
            await asyncio.shield(loop.run_in_executor(self._checkpointer, self._run_checkpoint))
        return self._require()

    async def begin(self) -> sqlite3.Connection:
        """``BEGIN IMMEDIATE``: inline if the lock is free, else waited for in the thread."""
        conn = await self.connection()
        try:
            conn.execute("BEGIN IMMEDIATE")
            return conn
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
        await self._in_thread(lambda: self._wait_for("BEGIN IMMEDIATE"))
        return self._require()

    async def commit(self) -> None:
        """Commits the open transaction (a WAL commit holding the lock never waits)."""
        conn = self._require()
        try:
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            # Only outside WAL mode can a commit wait for readers.
            if not (is_busy(exc) and conn.in_transaction):
                raise
            await self._in_thread(lambda: self._wait_for("COMMIT"))
        self.committed()

    def rollback(self) -> None:
        """Rolls back inline, unless an abandoned wait still owns the connection."""
        if self._settling is not None or self._conn is None:
            return  # the queued rollback runs after the wait thread lets go
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def committed(self) -> None:
        """Counts a commit and starts a background checkpoint every so many."""
        self._commits += 1
        if self._commits < self._checkpoint_every or self._closing:
            return
        if self._checkpoint is not None and not self._checkpoint.done():
            return
        self._checkpoint = asyncio.get_running_loop().create_task(self._checkpoint_cycle())

    async def _checkpoint_cycle(self) -> None:
        """The bulk of a checkpoint beside the writers, then its tail under the lock."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._checkpointer, self._run_checkpoint)
        async with self.lock:
            if not self._closing:
                self._commits = 0
                await loop.run_in_executor(self._checkpointer, self._run_checkpoint)

    async def write_one(self, sql: str, params: Params | None) -> int:
        """One autocommitted statement; the caller holds ``lock``."""
        tx = InlineTx(await self.connection())
        try:
            changed = await tx.execute(sql, params)
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            self.rollback()  # a busy autocommit statement wrote nothing; be sure
        else:
            self.committed()
            return changed
        tx = InlineTx(await self.begin())
        try:
            changed = await tx.execute(sql, params)
            await self.commit()
        except BaseException:
            self.rollback()
            raise
        return changed

    async def close(self) -> None:
        """Undoes abandoned waits, checkpoints once more and closes (in threads)."""
        loop = asyncio.get_running_loop()
        self._closing = True
        if self._checkpoint is not None:
            await asyncio.shield(self._checkpoint)  # it takes the lock for its tail
        async with self.lock:
            if self._settling is not None:
                await asyncio.shield(self._settling)
                self._settling = None
            if self._conn is not None:
                await loop.run_in_executor(self._checkpointer, self.truncate_wal)
            await loop.run_in_executor(self._checkpointer, self._close_connections)
        self._waiter.shutdown(wait=False)
        self._checkpointer.shutdown(wait=False)

    @property
    def closing(self) -> bool:
        return self._closing

    async def flush(self) -> None:
        """Truncates the WAL now, holding the write lock so no commit lands meanwhile."""
        if self._closing:
            return
        async with self.lock:
            if self._conn is not None and not self._closing:
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(self._checkpointer, self.truncate_wal)

    def abandon(self) -> None:
        """Closes without awaiting: for a loop that is gone or not the one we ran on.

        An abandoned wait may still own the connection in the wait thread; that
        thread finishes its statement first (``shutdown(wait=True)``), and closing
        the connection rolls back whatever it left open.
        """
        self._closing = True
        self._waiter.shutdown(wait=True)
        self._checkpointer.shutdown(wait=True)
        if self._conn is not None and not self._conn.in_transaction:
            self.truncate_wal()
        self._close_connections()
