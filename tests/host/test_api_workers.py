"""Two `yuxi serve api` processes on one PostgreSQL database, as two machines would run:
a run started through A is followed and answered through B, cancelled through B, and
when A is killed with SIGKILL mid-run B reports the run failed (`worker_lease_expired`)
within the lease, and nothing of it is executed again. The model is ADK's OpenAI
client against a loopback OpenAI server."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from adk_yuxi.cli import main
from adk_yuxi.storage import open_services
from adk_yuxi.testing import OpenAIScriptServer, ToolCall
from tests.e2e._cli import BIN, REPO, free_port
from tests.sql_backends import PG_URL

from .conftest import parse_sse, share_agent
from .test_api_runs import QUESTIONS

pytestmark = pytest.mark.slow
LEASE = 2.0


class Held:
    """A model turn the loopback server holds until the test releases it."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, _: dict[str, Any]) -> str:
        self.entered.set()
        self.release.wait(60)
        return self.answer


async def _seed(url: str) -> None:
    services = open_services(url)
    try:
        await share_agent(services, "helper", "mei")
    finally:
        await services.close()


def _serve(env: dict[str, str], agents: Path, tmp_path: Path) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    command = [str(BIN / "yuxi"), "serve", "api", "--agents", str(agents), "--port", str(port)]
    command += ["--model", "openai/scripted", "--workspaces", str(tmp_path / "ws")]
    command += ["--lease-seconds", str(LEASE), "--cancel-poll-seconds", "0.2"]
    server = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    return server, f"http://127.0.0.1:{port}"


def _wait_healthy(server: subprocess.Popen[str], base: str) -> None:
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"yuxi serve api did not start: {server.stderr.read()}")  # type: ignore[union-attr]
        time.sleep(0.1)


@pytest.fixture
def workers(
    pg_schema: str, tmp_path: Path
) -> Iterator[tuple[list[str], list[subprocess.Popen[str]], str, OpenAIScriptServer]]:
    url = f"{PG_URL}?schema={pg_schema}"
    asyncio.run(_seed(url))
    issued = CliRunner().invoke(main, ["api-key", "issue", "--db", url, "--user", "mei"])
    assert issued.exit_code == 0, issued.output
    (tmp_path / "helper.yaml").write_text("name: helper\ndescription: Helps.\ntools: []\n")
    model = OpenAIScriptServer(api_key="test-key")
    model.start()
    env = {
        **os.environ,
        "YUXI_DATABASE_URL": url,
        "OPENAI_BASE_URL": model.base_url,
        "OPENAI_API_KEY": "test-key",
    }
    started = [_serve(env, tmp_path / "helper.yaml", tmp_path) for _ in range(2)]
    servers = [s for s, _ in started]
    try:
        for server, base in started:
            _wait_healthy(server, base)
        yield [b for _, b in started], servers, issued.output.strip(), model
    finally:
        for server in servers:
            if server.poll() is None:
                server.terminate()
        for server in servers:
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        for turn in model.script:
            if isinstance(turn, Held):
                turn.release.set()
        model.stop()


def _post_stream(base: str, path: str, auth: dict[str, str], body: Any) -> list[dict[str, Any]]:
    """A whole event stream (what arrived, if the server died mid-stream)."""
    text = ""
    with httpx.Client(base_url=base, timeout=60) as client:
        try:
            with client.stream("POST", path, json=body, headers=auth) as response:
                assert response.status_code == 200, response.read()
                for chunk in response.iter_text():
                    text += chunk
        except httpx.TransportError:
            pass
    return parse_sse(text) if text.strip() else []


def test_two_workers_follow_answer_cancel_and_survive_a_killed_one(
    workers: tuple[list[str], list[subprocess.Popen[str]], str, OpenAIScriptServer],
) -> None:
    (a, b), (server_a, _), token, model = workers
    auth = {"Authorization": f"Bearer {token}"}
    cancelled, crashed = Held("never seen"), Held("never seen either")
    model.script.extend(
        [
            ToolCall("ask_user_question", {"questions": QUESTIONS}),
            "Friday it is.",
            cancelled,
            crashed,
            "after the crash",
        ]
    )
    client_a = httpx.Client(base_url=a, timeout=60, headers=auth)
    client_b = httpx.Client(base_url=b, timeout=60, headers=auth)
    pool = ThreadPoolExecutor(max_workers=4)
    try:
        session = client_a.post("/v1/agents/helper/sessions").json()["id"]
        base = f"/v1/agents/helper/sessions/{session}"

        # 1. Started through A, followed and answered through B.
        first = _post_stream(a, f"{base}/runs", auth, {"text": "plan the launch"})
        assert first[-1]["data"]["status"] == "waiting"
        followed = parse_sse(client_b.get(f"{base}/events").text)
        # B replays from the database what A streamed (after the stored user message).
        run_ids = [f["id"] for f in first if f["event"] == "adk_event"]
        followed_ids = [f["id"] for f in followed if f["event"] == "adk_event"]
        assert run_ids and followed_ids[-len(run_ids) :] == run_ids
        assert followed[-1]["data"]["run_id"] == first[-1]["data"]["run_id"]
        (point,) = client_b.get(f"{base}/waitpoints").json()["waitpoints"]
        answered = _post_stream(
            b, f"{base}/waitpoints/{point['id']}/answer", auth, {"answers": {"q-1": "fri"}}
        )
        assert answered[-1]["data"]["status"] == "completed"
        assert "Friday it is." in str(answered)

        # 2. A run on A: a second one through B is 409; cancelled through B.
        running: Future[list[dict[str, Any]]] = pool.submit(
            _post_stream, a, f"{base}/runs", auth, {"text": "slow one"}
        )
        assert cancelled.entered.wait(30)
        refused = client_b.post(f"{base}/runs", json={"text": "me too"})
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "run_in_progress"
        (current,) = [
            r for r in client_b.get(f"{base}/runs").json()["runs"] if r["status"] == "running"
        ]
        assert client_b.post(f"{base}/runs/{current['id']}/cancel").status_code == 202
        assert running.result(30)[-1]["data"]["status"] == "cancelled"
        cancelled.release.set()

        # 3. A is killed mid-run: B's follower ends with the failure within the lease.
        dying = pool.submit(_post_stream, a, f"{base}/runs", auth, {"text": "crash now"})
        assert crashed.entered.wait(30)
        requests_before = len(model.requests)
        follower = pool.submit(lambda: parse_sse(client_b.get(f"{base}/events").text))
        time.sleep(0.3)  # the follower is polling the running run
        server_a.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        final = follower.result(30)[-1]
        elapsed = time.monotonic() - killed_at
        assert final["event"] == "run_status"
        assert final["data"]["status"] == "failed"
        assert final["data"]["error_code"] == "worker_lease_expired"
        assert elapsed < LEASE + 1.5, f"reported {elapsed:.2f}s after the kill"
        dying.result(30)
        crashed.release.set()
        time.sleep(LEASE)  # long enough for anything to be retried, were it retried
        assert len(model.requests) == requests_before  # the model call was not repeated

        # The session is free again, through B.
        after = _post_stream(b, f"{base}/runs", auth, {"text": "still there?"})
        assert after[-1]["data"]["status"] == "completed"
        statuses = [r["status"] for r in client_b.get(f"{base}/runs").json()["runs"]]
        assert statuses == ["completed", "failed", "cancelled", "completed"]
    finally:
        client_a.close()
        client_b.close()
        pool.shutdown(wait=False)
