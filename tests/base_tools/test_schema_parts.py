"""The base tools' tables are schema parts of their own: a database made before they
existed gains them at the next open, and a fresh one has them from the start."""

from __future__ import annotations

from adk_yuxi._sql import SqlStore
from adk_yuxi.ledger import RunLedger
from adk_yuxi.marks import MarkStore
from adk_yuxi.waitpoints import WaitpointStore

PARTS = {"waitpoints": "yx_waitpoints", "ledger": "yx_runs", "marks": "yx_marks"}
VERSIONS = {"waitpoints": 1, "ledger": 2, "marks": 1}


async def parts(store: SqlStore) -> dict[str, int]:
    async with store.engine.connect() as conn:
        rows = (await conn.exec_driver_sql("SELECT name, version FROM yx_schema_version")).all()
    return {name: int(version) for name, version in rows if name in PARTS}


async def test_an_older_database_gains_the_tables(db_url: str) -> None:
    store = SqlStore(db_url)
    await store.ready()
    assert await parts(store) == VERSIONS
    # As a database from before the base tools: their tables and version rows absent.
    async with store.write() as tx:
        for name, table in PARTS.items():
            await tx.execute(f"DROP TABLE {table}")
            await tx.execute("DELETE FROM yx_schema_version WHERE name = :n", {"n": name})
    await store.close()

    store = SqlStore(db_url)
    try:
        page = await WaitpointStore(store).list_pending(app_name="a", user_id="u")
        assert page.items == []
        assert await RunLedger(store).list_expired() == []
        marks = await MarkStore(store).list_marks(viewer_id="u", viewer_is_admin=False)
        assert marks.items == []
        assert await parts(store) == VERSIONS
    finally:
        await store.close()
