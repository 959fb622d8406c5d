"""The `mcp` SDK's own client over streamable HTTP, with a bearer token or without."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def mcp_session(
    url: str, token: str | None = None, headers: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    headers = {**({"Authorization": f"Bearer {token}"} if token else {}), **(headers or {})}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session
