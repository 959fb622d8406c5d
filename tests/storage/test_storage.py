"""open_services, URL handling, schema versioning and the CLI URI schemes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from google.adk.cli.service_registry import get_service_registry
from google.genai import types

from adk_yuxi._sql.urls import parse_database_url
from adk_yuxi.artifacts import SqlArtifactService
from adk_yuxi.memory import SqlMemoryService
from adk_yuxi.sessions import SqlSessionService
from adk_yuxi.storage import (
    SCHEMA_VERSION,
    SchemaVersionError,
    UnsupportedDatabaseUrlError,
    open_services,
    register_service_schemes,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("yuxi+sqlite:///rel/app.db", "sqlite+aiosqlite:///rel/app.db"),
        ("yuxi+sqlite:////abs/app.db", "sqlite+aiosqlite:////abs/app.db"),
        ("sqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("yuxi+postgresql://u@h:5432/db", "postgresql+asyncpg://u@h:5432/db"),
        ("postgresql://u@h/db?schema=s1", "postgresql+asyncpg://u@h/db"),
    ],
)
def test_urls_map_onto_async_drivers(raw: str, expected: str) -> None:
    assert parse_database_url(raw).url.render_as_string() == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("mysql://u@h/db", "Unsupported database URL scheme 'mysql'"),
        ("yuxi+oracle://h/db", r"Unsupported database URL scheme .yuxi\+oracle."),
        ("sqlite://", "In-memory SQLite is not supported"),
        ("sqlite:///:memory:", "In-memory SQLite is not supported"),
        ("not a url", "Cannot parse database URL"),
    ],
)
def test_unsupported_urls_are_clear_errors(raw: str, message: str) -> None:
    with pytest.raises(UnsupportedDatabaseUrlError, match=message):
        SqlSessionService(raw)


def test_passwords_are_not_echoed() -> None:
    with pytest.raises(UnsupportedDatabaseUrlError) as info:
        parse_database_url("mysql://user:s3cret@h/db")
    assert "s3cret" not in str(info.value)


async def test_open_services_share_one_database(tmp_path: Path) -> None:
    async with open_services(f"sqlite+aiosqlite:///{tmp_path / 'one.db'}") as services:
        session = await services.session_service.create_session(app_name="app", user_id="u")
        await services.artifact_service.save_artifact(
            app_name="app",
            user_id="u",
            session_id=session.id,
            filename="f",
            artifact=types.Part(text="hello"),
        )
        assert services.memory_service._store is services.session_service._store
    # The default blob directory sits beside the database file.
    assert (tmp_path / "one.db.blobs").is_dir()


async def test_schema_version_mismatch_is_reported(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'v.db'}"
    async with open_services(url) as services:
        await services.prepare()
    with sqlite3.connect(tmp_path / "v.db") as conn:
        conn.execute("UPDATE yx_schema_version SET version = 99 WHERE name = 'platform'")
    async with open_services(url) as services:
        with pytest.raises(
            SchemaVersionError,
            match=f"up to version {SCHEMA_VERSION}, the database has version 99",
        ):
            await services.session_service.list_sessions(app_name="app")
    # A database at the current version opens again without recreating anything.
    with sqlite3.connect(tmp_path / "v.db") as conn:
        conn.execute(
            "UPDATE yx_schema_version SET version = ? WHERE name = 'platform'", (SCHEMA_VERSION,)
        )
    async with open_services(url) as services:
        assert (await services.session_service.list_sessions(app_name="app")).sessions == []


async def test_registered_schemes_build_services_sharing_a_store(tmp_path: Path) -> None:
    register_service_schemes()
    register_service_schemes()  # idempotent
    registry = get_service_registry()
    uri = f"yuxi+sqlite:///{tmp_path / 'cli.db'}"
    session_service = registry.create_session_service(uri, agents_dir=str(tmp_path))
    memory_service = registry.create_memory_service(uri, agents_dir=str(tmp_path))
    artifact_service = registry.create_artifact_service(uri, agents_dir=str(tmp_path))
    assert isinstance(session_service, SqlSessionService)
    assert isinstance(memory_service, SqlMemoryService)
    assert isinstance(artifact_service, SqlArtifactService)
    assert session_service._store is artifact_service._store
    created = await session_service.create_session(app_name="app", user_id="u")
    assert created.id
    await session_service._store.close()
    assert (tmp_path / "cli.db").exists()


async def test_sqlite_parent_directory_is_created(tmp_path: Path) -> None:
    db = tmp_path / "not" / "there" / "yet.db"
    async with open_services(f"sqlite+aiosqlite:///{db}") as services:
        session = await services.session_service.create_session(app_name="app", user_id="u")
    assert db.exists()
    assert session.id
