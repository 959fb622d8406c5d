"""Two knowledge stores on one engine (a server's reader and a writer beside it): a
loop of queries waiting for the other's write must let that write run. SQLite reads run
inline on the event loop, so a query on a cached index once never suspended, and a
task polling for a file starved the ingest it waited for: the process hung."""

from __future__ import annotations

import asyncio

from adk_yuxi.knowledge import KnowledgeStore

from .conftest import Platform

_POLLS = 3000  # far more than the ingest needs when the loop lets it run


async def test_a_query_loop_lets_another_stores_ingest_finish(platform: Platform) -> None:
    reader = platform.store
    await reader.create_kb("KB", creator_id="admin", kb_id="kb")
    await reader.ingest("kb", b"the lighthouse keeper logs the weather", name="log.md")
    assert await reader.query("kb", "lighthouse")  # the index is loaded and cached
    writer = KnowledgeStore(reader.store.engine)
    ingest = asyncio.ensure_future(
        writer.ingest("kb", b"the zebrafinch gateway listens on 9443", name="gw.md")
    )
    try:
        polls = 0
        while polls < _POLLS and not await reader.query("kb", "zebrafinch"):
            polls += 1  # no sleep: the query itself must give the loop a turn
        assert ingest.done(), f"the ingest never ran during {polls} queries"
        await ingest
        assert [h.file_name for h in await reader.query("kb", "zebrafinch")] == ["gw.md"]
    finally:
        if not ingest.done():
            ingest.cancel()
        await asyncio.gather(ingest, return_exceptions=True)
        await writer.close()
