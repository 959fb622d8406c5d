"""`yuxi serve api` and `yuxi serve knowledge` with metrics, as an operator starts them:
real processes (a fresh global MeterProvider each), scraped over HTTP on the metrics
port and on the server's own `--metrics-path`."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from adk_yuxi.access import AccessRepository, User
from adk_yuxi.cli import main
from adk_yuxi.knowledge import DelegationKeys
from adk_yuxi.storage import open_services
from tests.e2e._cli import BIN, REPO, cli_env, free_port
from tests.host._cli_served import serve_api
from tests.host.conftest import share_agent
from tests.knowledge.mcp_client import mcp_session

from ._scrape import scrape

pytestmark = pytest.mark.slow


async def _seed(url: str) -> None:
    services = open_services(url)
    try:
        await share_agent(services, "helper", "mei")
    finally:
        await services.close()


def test_serve_api_exposes_metrics_on_a_port_and_a_path(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'platform.db'}"
    asyncio.run(_seed(url))
    issued = CliRunner().invoke(main, ["api-key", "issue", "--db", url, "--user", "mei"])
    assert issued.exit_code == 0, issued.output
    auth = {"Authorization": f"Bearer {issued.output.strip()}"}
    (tmp_path / "helper.yaml").write_text("name: helper\ndescription: Helps.\ntools: [calculate]\n")
    port = free_port()
    args = ["--agents", str(tmp_path / "helper.yaml"), "--metrics-port", str(port)]
    args += ["--metrics-path", "/metrics"]
    with serve_api(args, YUXI_DATABASE_URL=url, YUXI_MODEL="yuxi-demo") as base:
        on_port = f"http://127.0.0.1:{port}/metrics"
        before = scrape(on_port)
        assert before.value("yuxi_runs_total") == 0
        with httpx.Client(base_url=base, timeout=60) as client:
            session = client.post("/v1/agents/helper/sessions", headers=auth).json()["id"]
            ran = client.post(
                f"/v1/agents/helper/sessions/{session}/runs",
                json={"text": "what is 6 * 7?"},
                headers=auth,
            )
            assert '"completed"' in ran.text.rsplit("event: run_status", 1)[1]
        after = scrape(on_port)
        assert after.value("yuxi_runs_total", yuxi_run_outcome="completed") == 1
        assert after.value("yuxi_turn_duration_seconds_count", gen_ai_agent_name="helper") == 1
        assert after.value("yuxi_waitpoints_pending", yuxi_app_name="helper") == 0
        assert after.value("yuxi_sse_active_streams", yuxi_sse_kind="run") == 0
        assert after.has("db_client_connection_count", db_client_connection_state="idle")
        # ADK's own instruments record to the same (global) provider: model and tool
        # call latency, with the demo model and the calculate tool.
        assert after.value("gen_ai_client_operation_duration_seconds_count") >= 2
        assert (
            after.value("gen_ai_execute_tool_duration_seconds_count", gen_ai_tool_name="calculate")
            == 1
        )
        assert after.has("target_info", service_name="yuxi-api")
        # The same metrics at the server's own path, without an API key.
        on_path = scrape(f"{base}/metrics")
        assert on_path.value("yuxi_runs_total", yuxi_run_outcome="completed") == 1
        assert {"yuxi_runs", "yuxi_turn_duration_seconds"} <= on_path.families


async def _seed_user(url: str) -> None:
    services = open_services(url)
    try:
        await services.prepare()
        await AccessRepository(services.store).save_user(User(id="ann"))
    finally:
        await services.close()


async def _list_kbs(url: str, token: str | None) -> bool:
    async with mcp_session(url, token) as session:
        return bool((await session.call_tool("list_kbs", {})).is_error)


def test_serve_knowledge_exposes_its_call_latency(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'kb.db'}"
    asyncio.run(_seed_user(url))
    keys = DelegationKeys.load_or_create(tmp_path / "key.jwk")
    port, metrics_port = free_port(), free_port()
    command = [str(BIN / "yuxi"), "serve", "knowledge", "--db", url, "--port", str(port)]
    command += ["--key", str(tmp_path / "key.jwk"), "--metrics-port", str(metrics_port)]
    command += ["--metrics-path", "/metrics"]
    with open(tmp_path / "log", "wb") as log:
        server = subprocess.Popen(command, cwd=REPO, env=cli_env(), stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                first = scrape(f"http://127.0.0.1:{port}/metrics")
                break
            except httpx.TransportError:
                log_text = (tmp_path / "log").read_text()
                assert server.poll() is None and time.monotonic() < deadline, log_text
                time.sleep(0.2)
        assert first.has("target_info", service_name="yuxi-knowledge")
        mcp = f"http://127.0.0.1:{port}/mcp"
        assert asyncio.run(_list_kbs(mcp, None))  # no delegation: refused
        token = keys.signer().mint("ann", "s", ["kb-1"])
        assert not asyncio.run(_list_kbs(mcp, token))
        after = scrape(f"http://127.0.0.1:{metrics_port}/metrics")
        name = "yuxi_knowledge_call_duration_seconds_count"
        assert after.value(name, gen_ai_tool_name="list_kbs", error_type="refused") == 1
        assert after.value(name, gen_ai_tool_name="list_kbs") == 2  # one answered
        assert after.has("db_client_connection_count", db_client_connection_state="idle")
    finally:
        server.terminate()
        server.wait(timeout=20)
