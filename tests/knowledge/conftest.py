"""Knowledge fixtures: a store and an access repository sharing one real database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from adk_yuxi.access import AccessRepository, Role, User
from adk_yuxi.knowledge import KnowledgeStore
from adk_yuxi.testing import EmbeddingServer
from tests.sql_backends import db_url, migrated_store, pg_schema

__all__ = [
    "Platform",
    "db_url",
    "migrated_store",
    "pg_schema",
    "platform",
    "server",
    "sqlite_platform",
]


@dataclass
class Platform:
    store: KnowledgeStore
    access: AccessRepository


async def _open(url: str) -> Platform:
    store = KnowledgeStore(url)
    access = AccessRepository(store.store)
    await store.prepare()
    for user in (
        User(id="admin", role=Role.SUPERADMIN),
        User(id="alice", department_id="eng"),
        User(id="bob", department_id="sales"),
    ):
        await access.save_user(user)
    return Platform(store, access)


@pytest.fixture
async def platform(db_url: str) -> AsyncIterator[Platform]:
    opened = await _open(db_url)
    try:
        yield opened
    finally:
        await opened.store.close()


@pytest.fixture
async def sqlite_platform(tmp_path: Path) -> AsyncIterator[Platform]:
    opened = await _open(f"sqlite+aiosqlite:///{tmp_path / 'kb.db'}")
    try:
        yield opened
    finally:
        await opened.store.close()


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    """The loopback OpenAI-compatible embeddings endpoint (`_three_docs` embeds with it)."""
    with EmbeddingServer() as running:
        yield running
