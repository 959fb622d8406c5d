"""Ingest of hostile files: a zip bomb is refused by what it inflates to, and nothing
is stored for it."""

from __future__ import annotations

import pytest

from adk_yuxi.access import AccessRepository, Role, User
from adk_yuxi.documents import DocumentTooLargeError
from adk_yuxi.knowledge import KnowledgeStore
from tests.documents.test_hostile_files import docx_bomb

from .conftest import db_url, pg_schema  # noqa: F401  (fixtures)


async def test_a_docx_bomb_is_refused_at_ingest_and_nothing_is_stored(db_url: str) -> None:  # noqa: F811
    store = KnowledgeStore(db_url, max_file_bytes=200_000)
    await store.prepare()
    await AccessRepository(store.store).save_user(User(id="admin", role=Role.SUPERADMIN))
    try:
        await store.create_kb("Docs", creator_id="admin", kb_id="docs")
        with pytest.raises(DocumentTooLargeError, match="inflates"):
            await store.ingest("docs", docx_bomb(10_000_000), name="bomb.docx")
        assert await store.list_files("docs") == []
        fine = await store.ingest("docs", docx_bomb(20_000), name="ok.docx")
        assert [f.file_id for f in await store.list_files("docs")] == [fine.file_id]
    finally:
        await store.close()
