"""PostgreSQL connections in the store's pool: a connection killed while it sat idle is
replaced at checkout (pinged only after idling), and reads run without a transaction."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import asyncpg
import pytest

from adk_yuxi._sql import SqlStore
from adk_yuxi._sql._tx import IntegrityViolation
from adk_yuxi._sql.errors import DatabaseUnavailableError, UnsupportedDatabaseUrlError
from tests.sql_backends import PG_DSN, PG_URL, DatabaseLink, relayed_pg_url


def _store(schema: str, idle_seconds: float) -> SqlStore:
    # One pooled connection, so the second read gets the very connection that was killed.
    return SqlStore(
        f"{PG_URL}?schema={schema}",
        pool_size=1,
        max_overflow=0,
        pool_ping_idle_seconds=idle_seconds,
    )


async def _backend_pid(store: SqlStore) -> int:
    async with store.read() as tx:
        rows = await tx.fetchall("SELECT pg_backend_pid()")
    return int(rows[0][0])


async def _kill(pid: int) -> None:
    conn = await asyncpg.connect(PG_DSN, timeout=3)
    try:
        assert await conn.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await conn.close()


async def test_a_connection_killed_while_idle_is_replaced_at_checkout(pg_schema: str) -> None:
    store = _store(pg_schema, idle_seconds=0.0)  # every reuse counts as idle: pinged
    try:
        first = await _backend_pid(store)
        await _kill(first)
        second = await _backend_pid(store)
        assert second != first
    finally:
        await store.close()


async def test_without_the_ping_the_dead_connection_reaches_the_caller(pg_schema: str) -> None:
    """The control: what the idle ping saves a caller from (and the pool recovers)."""
    store = _store(pg_schema, idle_seconds=3600.0)
    try:
        first = await _backend_pid(store)
        await _kill(first)
        # (It surfaces as our DatabaseUnavailableError, as a mid-request disconnect does.)
        with pytest.raises(DatabaseUnavailableError):
            await _backend_pid(store)
        assert await _backend_pid(store) != first  # the pool dropped the dead one
    finally:
        await store.close()


async def test_reads_run_outside_a_transaction_and_writes_inside_one(pg_schema: str) -> None:
    store = _store(pg_schema, idle_seconds=2.0)
    try:
        # No BEGIN around a read: PostgreSQL gives each statement its own transaction.
        async with store.read() as tx:
            rows = await tx.fetchall("SELECT current_setting('transaction_isolation')")
            one = await tx.fetchall("SELECT txid_current()")
            two = await tx.fetchall("SELECT txid_current()")
        assert rows[0][0] == "read committed"
        assert one[0][0] != two[0][0]  # each statement its own transaction
        async with store.write() as tx:
            await tx.execute("CREATE TEMP TABLE IF NOT EXISTS t_probe (x int)")
            first = await tx.fetchall("SELECT txid_current()")
            second = await tx.fetchall("SELECT txid_current()")
        assert first[0][0] == second[0][0]  # one transaction for the whole write
    finally:
        await store.close()


async def test_a_single_statement_write_commits_on_its_own(pg_schema: str) -> None:
    store = _store(pg_schema, idle_seconds=2.0)
    try:
        async with store.write() as tx:
            await tx.execute("CREATE TABLE t_probe (x int PRIMARY KEY)")
        assert await store.write_one("INSERT INTO t_probe (x) VALUES (:x)", {"x": 7}) == 1
        other = await asyncpg.connect(PG_DSN, timeout=3)
        try:
            assert await other.fetchval(f"SELECT x FROM {pg_schema}.t_probe") == 7
        finally:
            await other.close()
        with pytest.raises(IntegrityViolation):  # a duplicate: refused, and nothing else changed
            await store.write_one("INSERT INTO t_probe (x) VALUES (:x)", {"x": 7})
        async with store.read() as tx:
            assert (await tx.fetchall("SELECT count(*) FROM t_probe"))[0][0] == 1
    finally:
        await store.close()


async def test_a_burst_reuses_the_pooled_connections(pg_schema: str) -> None:
    """Every connection the pool opens stays open (30 by default, none opened past them):
    a wider second burst waits for those instead of opening and closing more (with 20
    kept and 10 more in a burst, each burst past 20 forked server processes anew)."""
    store = SqlStore(f"{PG_URL}?schema={pg_schema}")

    async def burst(width: int) -> set[int]:
        async def one() -> int:
            async with store.read() as tx:
                rows = await tx.fetchall("SELECT pg_backend_pid(), pg_sleep(0.4)")
            return int(rows[0][0])

        return set(await asyncio.gather(*(one() for _ in range(width))))

    try:
        first = await burst(45)
        assert len(first) == 30  # each was held 0.4 s: all 30 were open at once
        assert await burst(45) == first
        assert store.engine.pool.checkedin() == 30  # type: ignore[attr-defined]
    finally:
        await store.close()


async def test_the_pool_size_option_caps_the_connections(pg_schema: str) -> None:
    store = SqlStore(f"{PG_URL}?schema={pg_schema}&pool_size=3")

    async def one() -> int:
        async with store.read() as tx:
            rows = await tx.fetchall("SELECT pg_backend_pid(), pg_sleep(0.02)")
        return int(rows[0][0])

    try:
        used = set(await asyncio.gather(*(one() for _ in range(9))))
        assert len(used) == 3
    finally:
        await store.close()


async def test_a_pool_that_stays_busy_is_our_error_naming_the_option(pg_schema: str) -> None:
    """A checkout that waited the pool's whole timeout is `DatabaseUnavailableError`
    saying what to change, not SQLAlchemy's own error; the held connection is unharmed."""
    store = SqlStore(f"{PG_URL}?schema={pg_schema}", pool_size=1, pool_timeout=0.2)
    try:
        async with store.read() as held:
            with pytest.raises(DatabaseUnavailableError, match="raise the pool_size option"):
                async with store.read() as tx:
                    await tx.fetchall("SELECT 1")
            assert await held.fetchall("SELECT 2") == [(2,)]
        assert await _backend_pid(store) > 0
    finally:
        await store.close()


def test_pool_size_is_an_option_of_postgresql_only() -> None:
    with pytest.raises(UnsupportedDatabaseUrlError, match="pool_size option is for PostgreSQL"):
        SqlStore("sqlite:///x.db?pool_size=3")
    with pytest.raises(UnsupportedDatabaseUrlError, match=r"Invalid pool_size='0'"):
        SqlStore(f"{PG_URL}?pool_size=0")


async def _cancelled_midway(work: Coroutine[Any, Any, None]) -> None:
    task = asyncio.create_task(work)
    await asyncio.sleep(0.2)  # well inside its pg_sleep
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_statement_cancelled_midway_never_hands_its_connection_on(pg_schema: str) -> None:
    """The cancelled statement's connection is in an unknown state: it is closed, and
    the next caller gets a fresh one that answers (not "another operation in progress")."""
    store = _store(pg_schema, idle_seconds=3600.0)
    try:
        first = await _backend_pid(store)

        async def slow() -> None:
            async with store.read() as tx:
                await tx.fetchall("SELECT pg_sleep(5)")

        await _cancelled_midway(slow())
        assert await _backend_pid(store) != first
    finally:
        await store.close()


async def test_a_write_cancelled_midway_commits_nothing(pg_schema: str) -> None:
    store = _store(pg_schema, idle_seconds=3600.0)
    try:
        async with store.write() as tx:
            await tx.execute("CREATE TABLE t_probe (x int PRIMARY KEY)")

        async def slow_write() -> None:
            async with store.write() as tx:
                await tx.execute("INSERT INTO t_probe (x) VALUES (1)")
                await tx.fetchall("SELECT pg_sleep(5)")

        await _cancelled_midway(slow_write())
        async with store.read() as tx:
            assert (await tx.fetchall("SELECT count(*) FROM t_probe"))[0][0] == 0
    finally:
        await store.close()


async def test_server_errors_are_ours_and_keep_the_connection(pg_schema: str) -> None:
    from adk_yuxi._sql.errors import DatabaseError, InvalidValueError

    store = _store(pg_schema, idle_seconds=3600.0)
    try:
        first = await _backend_pid(store)
        with pytest.raises(DatabaseError, match="does not exist") as caught:
            async with store.read() as tx:
                await tx.fetchall("SELECT * FROM no_such_table")
        assert not isinstance(caught.value, DatabaseUnavailableError)
        with pytest.raises(InvalidValueError):  # a value the column type refuses
            async with store.read() as tx:
                await tx.fetchall("SELECT CAST(:v AS int)", {"v": "seven"})
        assert await _backend_pid(store) == first  # a refused statement is no broken link
    finally:
        await store.close()


async def test_a_missing_parameter_is_named_and_nothing_is_sent(pg_schema: str) -> None:
    store = _store(pg_schema, idle_seconds=3600.0)
    try:
        with pytest.raises(ValueError, match=":who"):
            async with store.read() as tx:
                await tx.fetchall("SELECT :who, :what", {"what": 1})
        async with store.read() as tx:  # one value, used twice
            assert await tx.fetchall("SELECT CAST(:a AS int) + CAST(:a AS int)", {"a": 1}) == [(2,)]
    finally:
        await store.close()


async def _relayed(
    pg_schema: str, pool_size: int, **engine_kwargs: Any
) -> tuple[DatabaseLink, SqlStore]:
    """A started relay in front of the test database and a store that goes through it."""
    link, url = await relayed_pg_url(pg_schema)
    return link, SqlStore(url, pool_size=pool_size, max_overflow=0, **engine_kwargs)


async def test_a_lost_database_is_our_error_and_the_store_recovers(pg_schema: str) -> None:
    link, store = await _relayed(pg_schema, 1, pool_ping_idle_seconds=3600.0)
    try:
        await _backend_pid(store)
        await link.stop()
        # The pooled connection breaks mid-statement, then no new one can be opened:
        # both are ours, neither a driver's or SQLAlchemy's type.
        with pytest.raises(DatabaseUnavailableError, match="connection failed"):
            await _backend_pid(store)
        with pytest.raises(DatabaseUnavailableError, match="cannot be reached"):
            await _backend_pid(store)
        await link.start()  # the same port again
        assert await _backend_pid(store) > 0
    finally:
        await store.close()
        await link.stop()


async def _backends() -> set[int]:
    conn = await asyncpg.connect(PG_DSN, timeout=3)
    try:
        rows = await conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid()"
        )
    finally:
        await conn.close()
    return {int(row[0]) for row in rows}


async def test_warm_opens_the_pool_before_the_first_burst(pg_schema: str) -> None:
    store = SqlStore(f"{PG_URL}?schema={pg_schema}", pool_size=4, max_overflow=0)

    async def one() -> int:
        async with store.read() as tx:
            rows = await tx.fetchall("SELECT pg_backend_pid(), pg_sleep(0.05)")
        return int(rows[0][0])

    try:
        assert await store.warm() == 4
        assert store.engine.pool.checkedin() == 4  # type: ignore[attr-defined]
        opened = await _backends()
        used = set(await asyncio.gather(*(one() for _ in range(4))))
        assert len(used) == 4 and used <= opened  # no request opened a connection
    finally:
        await store.close()


async def test_warm_leaves_the_server_room_when_pool_size_is_past_it(
    pg_schema: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A `pool_size` beyond the server's `max_connections`: warming opens at most half
    the free slots and says so, so other clients (here a new one) still get in."""
    store = SqlStore(f"{PG_URL}?schema={pg_schema}&pool_size=1000")
    try:
        await store.ready()
        with caplog.at_level("WARNING", logger="adk_yuxi._sql._pg_backend"):
            opened = await store.warm()
        assert 0 < opened < 1000
        assert "pool_size is 1000, but the database has" in caplog.text
        other = await asyncpg.connect(PG_DSN, timeout=3)
        await other.close()
    finally:
        await store.close()


async def test_warm_on_a_lost_database_opens_nothing_and_says_so(
    pg_schema: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Warming is best effort: the pool still opens connections on demand later."""
    link, store = await _relayed(pg_schema, 2)
    try:
        await store.ready()  # the schema exists: what fails next is warm's own connect
        await link.stop()
        with caplog.at_level("WARNING", logger="adk_yuxi._sql._pg_backend"):
            assert await store.warm() == 0
        assert "opened 0 of 2 pooled connections" in caplog.text
        await link.start()
        assert await store.warm() == 2
        assert await _backend_pid(store) > 0
    finally:
        await store.close()
        await link.stop()


async def test_warm_opens_nothing_on_sqlite(tmp_path: Any) -> None:
    store = SqlStore(f"sqlite+aiosqlite:///{tmp_path / 'w.db'}")
    try:
        assert await store.warm() == 0
        async with store.read() as tx:  # and the schema is there
            assert await tx.fetchall("SELECT version FROM yx_access_version") == [(0,)]
    finally:
        await store.close()
