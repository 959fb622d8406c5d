"""A host API on a real database, reached over HTTP (ASGI transport or a real socket)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_yuxi.access import AccessRepository, ResourceKind, ResourceRecord, Role, ShareConfig, User
from adk_yuxi.apikeys import ApiKeyStore
from adk_yuxi.host import ApiConfig, create_app
from adk_yuxi.runtime import AgentConfig
from adk_yuxi.storage import YuxiServices, open_services
from adk_yuxi.testing import ScriptedLlm
from tests.sql_backends import db_url, migrate_if_pg, pg_schema

__all__ = [
    "Api",
    "db_url",
    "new_session",
    "open_api",
    "parse_sse",
    "pg_schema",
    "run",
    "share_agent",
]

PLANNER = AgentConfig(name="planner", description="Plans with the user.", tools=())
SECRET = AgentConfig(name="secret", description="Only for root.", tools=())


@dataclass
class Api:
    client: httpx.AsyncClient
    llm: ScriptedLlm
    url: str
    tokens: dict[str, str] = field(default_factory=dict)

    def auth(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}


async def share_agent(services: YuxiServices, agent_id: str, owner: str) -> None:
    """`owner` as a user, and the agent `agent_id` as theirs, shared with everyone."""
    access = AccessRepository(services.store)
    await access.save_user(User(id=owner))
    await access.save_resource(
        ResourceRecord(
            kind=ResourceKind.AGENT, id=agent_id, creator_id=owner, share=ShareConfig.public()
        )
    )


async def seed(url: str) -> dict[str, str]:
    """Users root (superadmin), mei and bo; `planner` public, `secret` root's own; one
    key per user."""
    await migrate_if_pg(url)
    services = open_services(url)
    try:
        access = AccessRepository(services.store)
        await access.save_user(User(id="root", role=Role.SUPERADMIN))
        await access.save_user(User(id="mei"))
        await access.save_user(User(id="bo"))
        await access.save_resource(
            ResourceRecord(
                kind=ResourceKind.AGENT, id="planner", creator_id="root", share=ShareConfig.public()
            )
        )
        await access.save_resource(
            ResourceRecord(kind=ResourceKind.AGENT, id="secret", creator_id="root")
        )
        keys = ApiKeyStore(services.store)
        return {
            user: (await keys.issue(user, issued_by="root")).token for user in ("root", "mei", "bo")
        }
    finally:
        await services.close()


def make_config(url: str, llm: ScriptedLlm, tmp_path: Path) -> ApiConfig:
    return ApiConfig(
        database_url=url,
        agents=(PLANNER, SECRET),
        workspace_root=tmp_path / "workspaces",
        model=llm,
        max_body_bytes=64 * 1024,
        worker="test-worker",
    )


async def open_api(url: str, tmp_path: Path) -> AsyncIterator[Api]:
    tokens = await seed(url)
    llm = ScriptedLlm([])
    app = create_app(make_config(url, llm, tmp_path))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield Api(client=client, llm=llm, url=url, tokens=tokens)


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    async for opened in open_api(f"sqlite+aiosqlite:///{tmp_path / 'api.db'}", tmp_path):
        yield opened


def parse_sse(body: str) -> list[dict[str, Any]]:
    """Frames as dicts: `event`, `id` (if any), `data` (parsed JSON); comment lines
    (heartbeats) are skipped."""
    frames = []
    for block in body.strip().split("\n\n"):
        block = "\n".join(line for line in block.split("\n") if not line.startswith(":"))
        if not block.strip():
            continue
        frame: dict[str, Any] = {}
        data = []
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            if name == "data":
                data.append(value)
            else:
                frame[name] = value
        frame["data"] = json.loads("\n".join(data))
        frames.append(frame)
    return frames


async def new_session(api: Api, user: str, agent: str = "planner") -> str:
    created = await api.client.post(f"/v1/agents/{agent}/sessions", headers=api.auth(user))
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


async def run(api: Api, user: str, session: str, text: str) -> list[dict[str, Any]]:
    response = await api.client.post(
        f"/v1/agents/planner/sessions/{session}/runs", json={"text": text}, headers=api.auth(user)
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return parse_sse(response.text)


async def answer_in_background(
    api: Api, user: str, session: str, answers: dict[str, str]
) -> tuple[str, asyncio.Task[httpx.Response]]:
    """The session's one pending waiting point and a request answering it, left
    running (its stream is the resumed run's): the caller decides when to look."""
    base = f"/v1/agents/planner/sessions/{session}"
    listed = await api.client.get(f"{base}/waitpoints", headers=api.auth(user))
    (point,) = listed.json()["waitpoints"]
    answering = asyncio.create_task(
        api.client.post(
            f"{base}/waitpoints/{point['id']}/answer",
            json={"answers": answers},
            headers=api.auth(user),
        )
    )
    return point["id"], answering
