"""A dropped stream over a real socket: the run goes on, and `Last-Event-ID` gets the
rest and the final status."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from adk_yuxi.host import create_app
from adk_yuxi.testing import GatedLlm, call

from .conftest import make_config, parse_sse, seed


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, dict[str, str], threading.Event]]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'api.db'}"
    tokens = asyncio.run(seed(url))
    gate = threading.Event()
    llm = GatedLlm([call("mark_for_improvement", reason="slow step"), "done at last"], gate)
    app = create_app(make_config(url, llm, tmp_path))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the API did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}", tokens, gate
    finally:
        gate.set()
        uv.should_exit = True
        thread.join(timeout=30)


def test_dropped_stream_is_resumed_with_last_event_id(
    server: tuple[str, dict[str, str], threading.Event],
) -> None:
    base, tokens, gate = server
    auth = {"Authorization": f"Bearer {tokens['mei']}"}
    with httpx.Client(base_url=base, timeout=30) as client:
        session = client.post("/v1/agents/planner/sessions", headers=auth).json()["id"]
        with client.stream(
            "POST",
            f"/v1/agents/planner/sessions/{session}/runs",
            json={"text": "go"},
            headers=auth,
        ) as response:
            first_id = None
            for line in response.iter_lines():
                if line.startswith("id: "):
                    first_id = line.removeprefix("id: ")
                    break
        # The client dropped the connection after one event; the run waits on the model.
        assert first_id is not None
        gate.set()
        resumed = client.get(
            f"/v1/agents/planner/sessions/{session}/events",
            headers={**auth, "Last-Event-ID": first_id},
        )
    frames = parse_sse(resumed.text)
    texts = [
        p.get("text")
        for f in frames
        if f["event"] == "adk_event"
        for p in f["data"].get("content", {}).get("parts", [])
    ]
    assert first_id not in [f.get("id") for f in frames]
    assert "done at last" in texts
    assert frames[-1]["event"] == "run_status"
    assert frames[-1]["data"]["status"] == "completed"
