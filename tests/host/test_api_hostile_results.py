"""Through the host API on a loopback socket: a tool's result of any shape (deep, cyclic,
huge integers, NaN, lone surrogates, bytes) completes its run, and afterwards the
session reads (GET session, GET events), answers the next message and deletes (204),
on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from adk_yuxi.host import ApiConfig, create_app
from adk_yuxi.runtime import AgentConfig, Toolbox
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import ToolRegistry, tool
from tests.sessions.test_hostile_results import VALUES, Huge, shaped

from .conftest import parse_sse, seed

AGENT = "planner"
SESSIONS = f"/v1/agents/{AGENT}/sessions"


class Served:
    """The host API served by uvicorn from a thread; a blocking client of it."""

    def __init__(self, url: str, tmp_path: Path) -> None:
        self.tokens = asyncio.run(seed(url))
        self.value: Any = None
        registry = ToolRegistry()

        @tool(registry=registry)
        def hostile() -> Any:
            """Returns whatever the test drew."""
            return self.value

        self.llm = ScriptedLlm([])
        config = ApiConfig(
            database_url=url,
            agents=(AgentConfig(name=AGENT, tools=("hostile",)),),
            workspace_root=tmp_path / "workspaces",
            model=self.llm,
            blob_dir=tmp_path / "blobs",
            toolbox=Toolbox(registry=registry),
            worker="test-worker",
        )
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.server = uvicorn.Server(uvicorn.Config(create_app(config), log_level="warning"))
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "no API"
            time.sleep(0.01)
        port = self.sock.getsockname()[1]
        self.client = httpx.Client(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {self.tokens['mei']}"},
            timeout=30,
        )

    def run(self, sid: str, text: str) -> list[dict[str, Any]]:
        answer = self.client.post(f"{SESSIONS}/{sid}/runs", json={"text": text})
        assert answer.status_code == 200, answer.text
        frames = parse_sse(answer.text)
        assert frames[-1]["data"].get("status") == "completed", frames[-1]
        return frames

    def round_trip(self, value: Any) -> None:
        self.value = value
        created = self.client.post(SESSIONS)
        assert created.status_code == 201, created.text
        sid = created.json()["id"]
        self.llm.extend([call("hostile"), "seen", "again"])
        self.run(sid, "go")
        detail = self.client.get(f"{SESSIONS}/{sid}")
        assert detail.status_code == 200, detail.text
        events = self.client.get(f"{SESSIONS}/{sid}/events")
        assert events.status_code == 200, events.text
        self.run(sid, "and now?")
        assert self.client.delete(f"{SESSIONS}/{sid}").status_code == 204
        assert self.client.get(f"{SESSIONS}/{sid}").status_code == 404

    def close(self) -> None:
        self.client.close()
        self.server.should_exit = True
        self.thread.join(30)
        self.sock.close()


@pytest.fixture
def served(db_url: str, tmp_path: Path) -> Iterator[Served]:
    opened = Served(db_url, tmp_path)
    try:
        yield opened
    finally:
        opened.close()


@given(VALUES, st.integers(0, 300), st.booleans())
@example([], 200, False)  # json.loads("[" * 200 + "]" * 200): once a 500 on every read
@example({}, 0, True)
@example(Huge(5000), 0, False)
@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_any_tool_result_leaves_the_session_readable_and_deletable(
    served: Served, base: Any, depth: int, cyclic: bool
) -> None:
    served.round_trip(shaped(base, depth, cyclic))
