"""Closing from any loop, refusing use after close, URL options checked at construction,
and a WAL that shrinks again once readers are gone."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest
from google.adk.cli.service_registry import get_service_registry
from google.adk.events.event import Event
from google.genai import types

from adk_yuxi._sql import SqlStore
from adk_yuxi._sql._sqlite import WAL_SIZE_LIMIT
from adk_yuxi.sessions import SqlSessionService
from adk_yuxi.storage import (
    StoreClosedError,
    UnsupportedDatabaseUrlError,
    open_services,
    register_service_schemes,
)

APP = "chat"


def text_event(text: str) -> Event:
    return Event(
        author="user",
        invocation_id="inv",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )


def our_threads(before: frozenset[threading.Thread] = frozenset()) -> list[str]:
    """The store threads alive now that were not alive `before` (another test's store
    left open is not this test's)."""
    return [
        t.name
        for t in threading.enumerate()
        if t.name.startswith("yuxi-sqlite") and t not in before
    ]


@pytest.mark.parametrize("appends", [5, 300])
def test_close_on_another_event_loop_releases_everything(
    db_url: str, tmp_path: Path, appends: int
) -> None:
    before = frozenset(threading.enumerate())
    services = open_services(db_url, blob_dir=tmp_path / "blobs")

    async def use() -> str:
        session = await services.session_service.create_session(app_name=APP, user_id="u")
        for i in range(appends):  # 300: background checkpoints of that loop
            await services.session_service.append_event(session, text_event(f"e{i}"))
        return session.id

    session_id = asyncio.run(use())  # that loop is gone now
    asyncio.run(services.close())  # must not raise, whatever the backend
    assert our_threads(before) == []

    async def use_again() -> None:
        with pytest.raises(StoreClosedError):
            await services.session_service.get_session(
                app_name=APP, user_id="u", session_id=session_id
            )
        with pytest.raises(StoreClosedError):
            await services.session_service.create_session(app_name=APP, user_id="u")

    asyncio.run(use_again())

    async def reopen() -> int:
        async with open_services(db_url, blob_dir=tmp_path / "blobs") as again:
            loaded = await again.session_service.get_session(
                app_name=APP, user_id="u", session_id=session_id
            )
            assert loaded is not None
            return len(loaded.events)

    assert asyncio.run(reopen()) == appends


async def test_every_backend_refuses_use_after_close(db_url: str, tmp_path: Path) -> None:
    services = open_services(db_url, blob_dir=tmp_path / "blobs")
    await services.session_service.create_session(app_name=APP, user_id="u")
    await services.close()
    await services.close()  # twice is fine
    with pytest.raises(StoreClosedError, match="closed"):
        await services.session_service.list_sessions(app_name=APP)
    with pytest.raises(StoreClosedError):
        await services.memory_service.search_memory(app_name=APP, user_id="u", query="x")
    with pytest.raises(StoreClosedError):
        await services.artifact_service.list_artifact_keys(app_name=APP, user_id="u")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("sqlite+aiosqlite:///file::memory:?uri=true", "In-memory SQLite is not supported"),
        ("sqlite:///file::memory:?cache=shared&uri=true", "In-memory SQLite is not supported"),
        ("sqlite:///file:x.db?mode=memory&uri=true", "In-memory SQLite is not supported"),
        ("postgresql://u@h/db?schema=Tenant", r"Invalid schema='Tenant'"),
        ("postgresql://u@h/db?schema=a-b", r"Invalid schema='a-b'"),
        ("sqlite:///x.db?busy_timeout_ms=abc", r"Invalid busy_timeout_ms='abc'"),
        ("sqlite:///x.db?busy_timeout_ms=-1", r"Invalid busy_timeout_ms='-1'"),
        ("sqlite:///x.db?max_artifact_bytes=0", r"Invalid max_artifact_bytes='0'"),
        ("sqlite:///x.db?schema=s", "schema option is for PostgreSQL"),
        ("yuxi+sqlite://app.db", "has a host part .'app.db'.*three slashes"),
    ],
)
def test_bad_urls_fail_at_construction_naming_the_option(raw: str, message: str) -> None:
    with pytest.raises(UnsupportedDatabaseUrlError, match=message):
        SqlSessionService(raw)


async def test_sqlite_uri_file_forms_work(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///file:{tmp_path / 'u.db'}?uri=true"
    async with open_services(url, blob_dir=tmp_path / "b") as services:
        made = await services.session_service.create_session(app_name=APP, user_id="u")
        await services.session_service.append_event(made, text_event("hi"))
    assert (tmp_path / "u.db").exists()


def test_relative_paths_stay_relative_in_our_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = SqlStore("yuxi+sqlite:///.yuxi/cli.db")
    try:
        assert store.description == (
            f"sqlite+aiosqlite:///.yuxi/cli.db (file {tmp_path / '.yuxi' / 'cli.db'})"
        )
        assert store.default_blob_dir() == Path(".yuxi/cli.db.blobs")
    finally:
        asyncio.run(store.close())


def test_yuxi_postgres_is_registered_for_the_cli() -> None:
    register_service_schemes()
    registry = get_service_registry()
    for scheme in ("yuxi+sqlite", "yuxi+postgresql", "yuxi+postgres"):
        service = registry.create_session_service(
            f"{scheme}:///x.db" if "sqlite" in scheme else f"{scheme}://u@127.0.0.1/db"
        )
        assert isinstance(service, SqlSessionService)


def wal(db: Path) -> Path:
    return db.with_name(db.name + "-wal")


async def test_wal_shrinks_after_a_long_reader_and_is_empty_after_flush(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    async with open_services(f"sqlite+aiosqlite:///{db}", blob_dir=tmp_path / "b") as services:
        sessions = services.session_service
        session = await sessions.create_session(app_name=APP, user_id="u")
        reader = sqlite3.connect(db, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM yx_events").fetchall()  # holds a snapshot
        payload = "x" * 2000
        for i in range(3000):
            await sessions.append_event(session, text_event(f"{i} {payload}"))
            if i % 100 == 0:
                await asyncio.sleep(0.01)  # let background checkpoints run
        grown = wal(db).stat().st_size
        assert grown > 2 * WAL_SIZE_LIMIT  # the reader pinned the WAL
        reader.execute("COMMIT")
        reader.close()
        for i in range(600):
            await sessions.append_event(session, text_event(f"after {i}"))
            if i % 50 == 0:
                await asyncio.sleep(0.02)
        assert wal(db).stat().st_size <= WAL_SIZE_LIMIT

        await sessions.flush()  # what Runner.close() calls
        assert wal(db).stat().st_size == 0
        size_with_data = db.stat().st_size
        assert size_with_data > 3000 * 2000
    assert not wal(db).exists() or wal(db).stat().st_size == 0
