"""Fixtures that run a test against SQLite and against the real PostgreSQL.

PostgreSQL tests get a fresh schema each (named in the URL's ``schema`` option,
dropped afterwards), so parallel runs and leftovers never collide. When the
server is unreachable they are skipped, unless ``CI`` is set: then they fail.

``services`` gets its PostgreSQL schema already migrated: a template schema is migrated
once per process and set of registered schema parts, dumped with ``pg_dump`` and
dropped, and each test replays that dump into its own schema (a few milliseconds where
the migration takes most of a second). Without ``pg_dump``, or with
``YUXI_TEST_PG_TEMPLATE=0``, every test migrates.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from adk_yuxi._sql import SqlStore, schema_parts
from adk_yuxi.storage import YuxiServices, open_services

PG_DSN = os.environ.get("YUXI_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/test")
PG_URL = PG_DSN.replace("postgresql://", "postgresql+asyncpg://", 1)
_reachable: list[bool] = []


class DatabaseLink:
    """A TCP relay on loopback in front of the database: stopping it cuts every live
    connection and refuses new ones, as a network failure would."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in self._writers:
            writer.transport.abort()
        self._writers.clear()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self._writers += [writer, up_writer]

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except OSError:
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))


async def relayed_pg_url(schema: str) -> tuple[DatabaseLink, str]:
    """A started relay in front of the test database and a URL (with ``schema``) through it."""
    from urllib.parse import urlsplit

    parts = urlsplit(PG_DSN)
    link = DatabaseLink((parts.hostname or "127.0.0.1", parts.port or 5432))
    await link.start()
    url = PG_URL.replace(f"{parts.hostname}:{parts.port or 5432}", f"127.0.0.1:{link.port}", 1)
    assert str(link.port) in url
    return link, f"{url}?schema={schema}"


async def _pg_execute(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(PG_DSN, timeout=3)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def pg_available() -> bool:
    """Whether the test PostgreSQL answers (checked once per test session)."""
    if not _reachable:
        try:
            asyncio.run(_pg_execute("SELECT 1"))
            _reachable.append(True)
        except Exception as exc:  # any failure to connect: refused, timeout, auth, driver
            _reachable.append(False)
            if os.environ.get("CI"):
                raise RuntimeError(f"CI is set but PostgreSQL is unreachable: {exc}") from exc
    return _reachable[0]


def require_pg() -> None:
    """Skips (or, under CI, fails) when PostgreSQL is unreachable."""
    if not pg_available():
        pytest.skip(f"PostgreSQL at {PG_DSN} is unreachable (set CI=1 to make this fail)")


@pytest.fixture
def pg_schema() -> Iterator[str]:
    """A fresh PostgreSQL schema for one test, dropped afterwards."""
    require_pg()
    name = f"yx_test_{uuid.uuid4().hex[:12]}"
    asyncio.run(_pg_execute(f"CREATE SCHEMA {name}"))
    try:
        yield name
    finally:
        asyncio.run(_pg_execute(f"DROP SCHEMA IF EXISTS {name} CASCADE"))


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL for an empty database on each backend."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'yuxi.db'}"
    schema = request.getfixturevalue("pg_schema")
    return f"{PG_URL}?schema={schema}"


_TEMPLATE = "yx_template_schema"
"""Stands for the schema name in a cached dump."""
_dumps: dict[tuple[tuple[str, int], ...], str | None] = {}


async def _migrated_dump() -> str | None:
    """The DDL (and rows) of a freshly migrated schema for the parts registered now, with
    the schema's name replaced by ``_TEMPLATE``; ``None`` without ``pg_dump``."""
    key = tuple((part.name, part.version) for part in schema_parts())
    if key not in _dumps:
        wanted = os.environ.get("YUXI_TEST_PG_TEMPLATE", "1") != "0"
        _dumps[key] = await _dump_migrated() if wanted and shutil.which("pg_dump") else None
    return _dumps[key]


async def _dump_migrated() -> str:
    name = f"yx_tmpl_{uuid.uuid4().hex[:12]}"
    await _pg_execute(f"CREATE SCHEMA {name}")
    try:
        with tempfile.TemporaryDirectory() as blobs:
            opened = open_services(f"{PG_URL}?schema={name}", blob_dir=blobs)
            try:
                await opened.prepare()
            finally:
                await opened.close()
        args = ["pg_dump", "--dbname", PG_DSN, "--schema", name, "--no-owner",
                "--no-privileges", "--inserts"]  # fmt: skip
        dump = await asyncio.to_thread(
            subprocess.run, args, capture_output=True, text=True, check=True, timeout=120
        )
    finally:
        await _pg_execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
    lines = [
        line
        for line in dump.stdout.splitlines()
        if not line.startswith("\\") and not line.startswith(f"CREATE SCHEMA {name};")
    ]
    return "\n".join(lines).replace(name, _TEMPLATE)


async def migrate_pg_schema(schema: str) -> None:
    """Fills ``schema``, when it holds no table yet, as the stores' migration would (from
    the cached dump); a schema already in use is left to the stores."""
    import asyncpg

    dump = await _migrated_dump()
    if dump is None:
        return
    conn = await asyncpg.connect(PG_DSN, timeout=3)
    try:
        found = await conn.fetchval(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1", schema
        )
        if found == 0:
            await conn.execute(dump.replace(_TEMPLATE, schema))
    finally:
        await conn.close()


async def migrate_if_pg(url: str) -> None:
    """`migrate_pg_schema` for a test database URL of PostgreSQL; nothing for SQLite."""
    if url.startswith(PG_URL) and "schema=" in url:
        await migrate_pg_schema(url.rsplit("schema=", 1)[1])


@pytest.fixture
async def migrated_store(db_url: str) -> AsyncIterator[SqlStore]:
    """One store on the test database (its schema migrated), closed afterwards: the
    services a test builds on it share it and do not close it."""
    await migrate_if_pg(db_url)
    store = SqlStore(db_url)
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
async def services(db_url: str, tmp_path: Path) -> AsyncIterator[YuxiServices]:
    """All three services on the test database (its schema migrated), closed afterwards."""
    await migrate_if_pg(db_url)
    opened = open_services(db_url, blob_dir=tmp_path / "blobs")
    try:
        yield opened
    finally:
        await opened.close()
