"""The host API's metrics as Prometheus scrapes them: a real server on a socket, the
exposition on its own port, scraped over HTTP while runs go on."""

from __future__ import annotations

import asyncio
import json
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
from tests.host.conftest import make_config, seed

from ._scrape import scrape

pytestmark = pytest.mark.slow

QUESTIONS = [{"question": "Which day?", "options": [{"label": "Friday", "value": "fri"}]}]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, dict[str, str], threading.Event]]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'api.db'}"
    tokens = asyncio.run(seed(url))
    gate = threading.Event()
    script = [
        call("no_such_tool", x=1),
        "done",
        call("ask_user_question", questions=QUESTIONS),
    ]
    app = create_app(make_config(url, GatedLlm(script, gate), tmp_path))
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


def _refused(line: str) -> bool:
    """The function response event of the refused call (ADK's JSON, camelCase)."""
    if not line.startswith("data: "):
        return False
    parts = json.loads(line.removeprefix("data: ")).get("content", {}).get("parts", [])
    answers = [(p.get("functionResponse") or {}).get("response", {}) for p in parts]
    return any(a.get("error", {}).get("code") == "tool_not_available" for a in answers)


def test_runs_refusals_waiting_points_and_streams_are_scraped(
    metrics_url: str,
    server: tuple[str, dict[str, str], threading.Event],
) -> None:
    metrics = metrics_url
    base, tokens, gate = server
    auth = {"Authorization": f"Bearer {tokens['mei']}"}
    before = scrape(metrics)
    assert before.value("yuxi_sse_active_streams") == 0
    assert before.value("yuxi_runs_total") == 0
    with httpx.Client(base_url=base, timeout=30) as client:
        session = client.post("/v1/agents/planner/sessions", headers=auth).json()["id"]
        path = f"/v1/agents/planner/sessions/{session}/runs"
        statuses = []
        with client.stream("POST", path, json={"text": "go"}, headers=auth) as response:
            lines = response.iter_lines()
            for line in lines:
                if _refused(line):
                    break
            # The refused call is answered; the next model call waits at the gate.
            during = scrape(metrics)
            assert during.value("yuxi_sse_active_streams", yuxi_sse_kind="run") == 1
            assert (
                during.value(
                    "yuxi_refusals_total",
                    yuxi_refusal_code="tool_not_available",
                    gen_ai_tool_name="_unknown",  # a made-up name: one label value
                    gen_ai_agent_name="planner",
                )
                == 1
            )
            assert during.value("yuxi_runs_total") == 0
            time.sleep(0.5)  # the stream stays open at least this long
            gate.set()
            statuses = [line for line in lines if line.startswith('data: {"status"')]
        assert '"completed"' in statuses[-1]
        after = scrape(metrics)
        assert after.value("yuxi_sse_active_streams", yuxi_sse_kind="run") == 0
        assert after.value("yuxi_runs_total", yuxi_run_outcome="completed") == 1
        assert after.value("yuxi_turn_duration_seconds_count", yuxi_run_outcome="completed") == 1
        assert after.value("yuxi_waitpoints_pending", yuxi_app_name="planner") == 0

        # A run that pauses at a waiting point: counted as waiting, the point pending.
        waited = client.post(path, json={"text": "plan"}, headers=auth)
        assert '"waiting"' in waited.text.rsplit("event: run_status", 1)[1]
    paused = scrape(metrics)
    assert paused.value("yuxi_runs_total", yuxi_run_outcome="waiting") == 1
    assert paused.value("yuxi_waitpoints_pending", yuxi_app_name="planner") == 1
    assert paused.value("yuxi_waitpoints_pending", yuxi_app_name="secret") == 0
    # Requests by route template (never the ids), the streams timed to their end.
    created = {"http_request_method": "POST", "http_response_status_code": "201"}
    sessions = "/v1/agents/{agent_id}/sessions"
    assert paused.value("http_server_request_duration_seconds_count", **created) == 1
    assert paused.has("http_server_request_duration_seconds_count", http_route=sessions)
    runs = f"{sessions}/{{session_id}}/runs"
    streamed = paused.value("http_server_request_duration_seconds_sum", http_route=runs)
    assert streamed >= 0.5  # the first stream stayed open while the test scraped
    # The store's connections: the SQLite writer at least, idle between requests.
    assert paused.has("db_client_connection_count", db_client_connection_state="idle")
    assert paused.value("db_client_connection_max") >= 1
    assert paused.has("db_client_connection_pending_requests")
