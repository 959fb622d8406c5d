"""`adk web agents` on a free loopback port: the app is listed and a /run completes."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e._cli import BIN, REPO, cli_env, free_port

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def web() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [
            str(BIN / "adk"),
            "web",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-reload",
            "--session_service_uri",
            "memory://",
            "agents",
        ],
        cwd=REPO,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise AssertionError(f"adk web exited: {process.stdout.read()[-2000:]}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{base}/list-apps", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("adk web did not answer within 60 s")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


def test_list_apps_lists_the_assistant(web: str) -> None:
    apps = httpx.get(f"{web}/list-apps", timeout=10).json()
    assert "assistant" in apps


def test_run_completes_a_tool_call(web: str) -> None:
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    session = httpx.post(
        f"{web}/apps/assistant/users/alice/sessions/{session_id}", json={}, timeout=10
    )
    assert session.status_code == 200, session.text
    body = {
        "appName": "assistant",
        "userId": "alice",
        "sessionId": session_id,
        "newMessage": {"role": "user", "parts": [{"text": "what is 19 + 23?"}]},
    }
    events = httpx.post(f"{web}/run", json=body, timeout=60).json()
    responses = [
        part["functionResponse"]
        for event in events
        for part in event.get("content", {}).get("parts", [])
        if "functionResponse" in part
    ]
    assert responses and responses[0]["name"] == "calculate"
    assert responses[0]["response"]["value"] == 42
    texts = [p.get("text", "") for e in events for p in e.get("content", {}).get("parts", [])]
    assert any("42" in t for t in texts)
