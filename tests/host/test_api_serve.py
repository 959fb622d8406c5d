"""`yuxi serve api` as an operator runs it: a real process on a loopback socket, the
demo model, a key issued with `yuxi api-key issue`, a run streamed over TCP."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from google.genai.types import Part

from adk_yuxi.cli import main
from adk_yuxi.storage import open_services
from tests.e2e._cli import BIN, REPO, free_port

from .conftest import share_agent

pytestmark = pytest.mark.slow


async def _seed(url: str, blobs: Path) -> None:
    services = open_services(url, blob_dir=blobs)
    try:
        await services.artifact_service.save_artifact(
            app_name="helper", user_id="mei", filename="user:hello.txt", artifact=Part(text="hi")
        )
        await share_agent(services, "helper", "mei")
    finally:
        await services.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'platform.db'}"
    asyncio.run(_seed(url, tmp_path / "blobs"))
    env = {**os.environ, "YUXI_DATABASE_URL": url, "YUXI_MODEL": "yuxi-demo"}
    # The key comes from the operator command (in process: one interpreter start less).
    issued = CliRunner().invoke(main, ["api-key", "issue", "--db", url, "--user", "mei"])
    assert issued.exit_code == 0, issued.output
    token = issued.output.strip()
    # A built-in tool by name: `yuxi serve api` registers them before reading configs.
    (tmp_path / "helper.yaml").write_text("name: helper\ndescription: Helps.\ntools: [calculate]\n")
    port = free_port()
    server = subprocess.Popen(
        [
            str(BIN / "yuxi"),
            "serve",
            "api",
            "--agents",
            str(tmp_path / "helper.yaml"),
            "--port",
            str(port),
            "--workspaces",
            str(tmp_path / "ws"),
            "--blobs",
            str(tmp_path / "blobs"),
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"yuxi serve api did not start: {server.stderr.read()}")
            time.sleep(0.1)
        yield base, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_served_api_streams_a_run_over_tcp(served: tuple[str, str]) -> None:
    base, token = served
    assert token.startswith("yxk_")
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base, timeout=60) as client:
        assert client.get("/v1/agents").status_code == 401
        assert [a["id"] for a in client.get("/v1/agents", headers=auth).json()["agents"]] == [
            "helper"
        ]
        session = client.post("/v1/agents/helper/sessions", headers=auth).json()["id"]
        kinds: list[str] = []
        last: dict[str, object] = {}
        calls: list[str] = []
        with client.stream(
            "POST",
            f"/v1/agents/helper/sessions/{session}/runs",
            json={"text": "what is 6 * 7?"},
            headers=auth,
        ) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            for line in response.iter_lines():
                if line.startswith("event: "):
                    kinds.append(line.removeprefix("event: "))
                elif line.startswith("data: ") and kinds[-1] == "run_status":
                    last = json.loads(line.removeprefix("data: "))
                elif line.startswith("data: "):
                    parts = json.loads(line.removeprefix("data: "))["content"]["parts"]
                    calls += [p["functionCall"]["name"] for p in parts if "functionCall" in p]
        assert kinds[0] == "adk_event" and kinds[-1] == "run_status"
        assert last["status"] == "completed"
        assert calls == ["calculate"]  # the demo model saw the tool and called it
        openapi = client.get("/openapi.json").json()
        assert "/v1/agents/{agent_id}/sessions/{session_id}/runs" in openapi["paths"]


def test_served_api_reads_artifacts_from_its_blob_dir(served: tuple[str, str]) -> None:
    base, token = served
    auth = {"Authorization": f"Bearer {token}"}
    got = httpx.get(f"{base}/v1/agents/helper/artifacts/user:hello.txt", headers=auth, timeout=30)
    assert got.status_code == 200 and got.content == b"hi"
