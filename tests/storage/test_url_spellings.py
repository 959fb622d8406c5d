"""Every class that takes a database URL reads it with the one parser: each spelling
of one database reaches the same rows, whichever class opened it."""

from __future__ import annotations

import pytest

from adk_yuxi.access import AccessRepository, User
from adk_yuxi.knowledge import KnowledgeStore
from adk_yuxi.storage import database_url, open_services


def spellings(url: str) -> list[str]:
    if url.startswith("sqlite"):
        path = url.removeprefix("sqlite+aiosqlite:///")
        return [f"sqlite:///{path}", f"yuxi+sqlite:///{path}", database_url(path), url]
    rest = url.removeprefix("postgresql+asyncpg://")
    return [f"postgresql://{rest}", f"postgres://{rest}", f"yuxi+postgresql://{rest}", url]


async def test_each_spelling_reaches_the_same_rows(db_url: str) -> None:
    names = spellings(db_url)
    access = AccessRepository(names[0])
    await access.save_user(User(id="ann"))
    await access.close()
    knowledge = KnowledgeStore(names[1])
    await knowledge.create_kb("Notes", kb_id="notes", creator_id="ann")
    await knowledge.close()
    async with open_services(names[2]) as services:
        session = await services.session_service.create_session(app_name="a", user_id="ann")
        assert (await AccessRepository(services.store).get_user("ann")).id == "ann"
    again = KnowledgeStore(names[3])
    try:
        assert [kb.kb_id for kb in await again.list_kbs()] == ["notes"]
        async with open_services(names[0]) as s:
            found = await s.session_service.get_session(
                app_name="a", user_id="ann", session_id=session.id
            )
        assert found is not None
    finally:
        await again.close()


@pytest.mark.parametrize("bad", ["mysql://u@h/d", "sqlite://", "yuxi+sqlite://host/x.db"])
def test_one_refusal_for_a_bad_spelling_everywhere(bad: str) -> None:
    from adk_yuxi.storage import UnsupportedDatabaseUrlError

    for opener in (AccessRepository, KnowledgeStore, open_services, database_url):
        with pytest.raises(UnsupportedDatabaseUrlError):
            opener(bad)
