"""A bounded load on the host API over a real loopback socket, on SQLite and PostgreSQL:
20 users, each its own session, 3 turns each, all at once, with the demo model making
one `calculate` call per turn. Every stream must end `completed` with the whole turn,
and the database must hold every turn whole. Then a run whose model host fails after
the tool call: the stream says `failed` with the model's error code, and what is
stored is no half-turn (what that means for a failed run: see the test).

No timing is asserted; `bench.bench_host_api` measures latency against ADK's server.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import uvicorn
from google.adk.models.base_llm import BaseLlm

import adk_yuxi.tools.builtin  # noqa: F401  (registers calculate)
from adk_yuxi.host import ApiConfig, create_app
from adk_yuxi.models import MODEL_REJECTED, OpenAICompatibleLlm
from adk_yuxi.runtime import AgentConfig
from adk_yuxi.testing import OpenAIScriptServer, ToolCall
from bench._host_load import Audit, YuxiServer, audit_turns, run_load, sse_frames
from bench.bench_host_api import seed_users

pytestmark = pytest.mark.slow

CALC = AgentConfig(name="calc", description="Calculates.", tools=("calculate",))
USERS = [f"user{i:02d}" for i in range(20)]


@dataclass(frozen=True)
class Served:
    base_url: str
    target: YuxiServer


@asynccontextmanager
async def serve(
    url: str, tmp_path: Path, model: BaseLlm | str, users: list[str]
) -> AsyncIterator[Served]:
    """The app under uvicorn on a loopback socket of this event loop."""
    tokens = await seed_users(url, users)  # the benchmark's own seeding
    app = create_app(
        ApiConfig(database_url=url, agents=(CALC,), workspace_root=tmp_path / "ws", model=model)
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()  # raises what stopped it
            await asyncio.sleep(0.02)
        yield Served(f"http://127.0.0.1:{port}", YuxiServer("calc", tokens))
    finally:
        server.should_exit = True
        await task
        sock.close()


@pytest.fixture
async def loaded(db_url: str, tmp_path: Path) -> AsyncIterator[Served]:
    async with serve(db_url, tmp_path, "yuxi-demo", USERS) as served:
        yield served


async def test_concurrent_users_get_every_turn_whole_and_stored(loaded: Served) -> None:
    result = await run_load(loaded.base_url, loaded.target, USERS, turns=3)
    assert len(result.turns) == 60
    assert result.failures == {}  # every stream: the whole turn, then run_status completed
    assert result.complete == 60
    assert result.half_turns == 0


async def test_a_model_host_that_fails_after_the_tool_call_fails_the_run_cleanly(
    db_url: str, tmp_path: Path
) -> None:
    """The loopback model host answers the first call (a tool call) and refuses the
    second (HTTP 400). The stream reports the failure (run_status `failed` with the
    model's error code, never `completed`), and the turn is stored as "no half-turn"
    means for a failed run: the user's message, the tool call with its response (no
    call left without one), and one error event, last."""
    host = OpenAIScriptServer([ToolCall("calculate", {"expression": "6 * 7"})])
    host.start()
    model = OpenAICompatibleLlm(model="m", api_key=host.api_key, base_url=host.base_url)
    try:
        async with serve(db_url, tmp_path, model, ["mei"]) as served:
            target = served.target
            async with httpx.AsyncClient(base_url=served.base_url, timeout=120) as client:
                session = await target.open_session(client, "mei")
                path, body, headers = target.turn_request("mei", session)
                async with client.stream("POST", path, json=body, headers=headers) as response:
                    assert response.status_code == 200
                    frames = [f async for f in sse_frames(response.aiter_lines())]
                stored = await target.stored_events(client, "mei", session)
    finally:
        host.stop()
    name, status = frames[-1]
    assert name == "run_status"
    assert status["status"] == "failed"
    assert status["error_code"] == MODEL_REJECTED
    assert target.stream_failure(frames) is not None
    assert stored[0]["author"] == "user"
    assert any("functionResponse" in p for e in stored for p in e["content"]["parts"])
    errors = [e for e in stored if e.get("errorCode")]
    assert len(errors) == 1 and errors[0] is stored[-1]
    assert errors[0]["errorCode"] == status["error_code"]
    assert audit_turns(stored) == Audit(complete=0, failed=1, half=0)
