"""The host API served by uvicorn on a loopback socket, for tests that need real HTTP
(streamed downloads, header limits, chunked bodies); artifact payloads in tmp_path.

A test module imports `served_fixture` / `served_on_fixture` to use `served` / `served_on`."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from adk_yuxi.host import create_app
from adk_yuxi.storage import YuxiServices, open_services
from adk_yuxi.testing import ScriptedLlm

from .conftest import Api, make_config, seed

__all__ = ["BLOBS", "open_served", "served_fixture", "served_on_fixture", "services_of"]

BLOBS = "blobs"


async def open_served(url: str, tmp_path: Path, **overrides: Any) -> AsyncIterator[Api]:
    """Seeds `url`, serves the API on 127.0.0.1 from a thread, yields a client of it;
    `overrides` replace fields of the test configuration."""
    tokens = await seed(url)
    llm = ScriptedLlm([])
    config = dataclasses.replace(
        make_config(url, llm, tmp_path), blob_dir=tmp_path / BLOBS, **overrides
    )
    app = create_app(config)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    try:
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "the API did not start"
            await asyncio.sleep(0.01)
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            yield Api(client=client, llm=llm, url=url, tokens=tokens)
    finally:
        server.should_exit = True
        await asyncio.to_thread(thread.join, 30)
        sock.close()


def services_of(api: Api, tmp_path: Path) -> YuxiServices:
    """The same database and blob directory as the served API (close it after use)."""
    return open_services(api.url, blob_dir=tmp_path / BLOBS)


@pytest.fixture(name="served")
async def served_fixture(tmp_path: Path) -> AsyncIterator[Api]:
    async for opened in open_served(f"sqlite+aiosqlite:///{tmp_path / 'api.db'}", tmp_path):
        yield opened


@pytest.fixture(name="served_on")
async def served_on_fixture(db_url: str, tmp_path: Path) -> AsyncIterator[Api]:
    """As `served`, on SQLite and on the test PostgreSQL."""
    async for opened in open_served(db_url, tmp_path):
        yield opened
