"""Heartbeats through a long model call, from `yuxi serve api` as an operator starts
it (`--heartbeat-seconds`, `--follow-seconds`): the run's own stream (`POST …/runs`)
and a follower (`GET …/events`) both send `: heartbeat` comments while the model is
held, so a proxy's idle timeout does not cut either; the follower ends at the follow
limit with the run still `running`, the run's stream with its outcome. The model is
ADK's OpenAI client against a loopback OpenAI server that holds its answer."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from adk_yuxi.cli import main
from adk_yuxi.storage import open_services
from adk_yuxi.testing import OpenAIScriptServer

from ._cli_served import read_stream, serve_api
from .conftest import parse_sse, share_agent
from .test_api_workers import Held

pytestmark = pytest.mark.slow
HEARTBEAT = ": heartbeat"


async def _seed(url: str) -> None:
    services = open_services(url)
    try:
        await share_agent(services, "helper", "mei")
    finally:
        await services.close()


def test_both_streams_send_heartbeats_through_a_long_model_call(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'platform.db'}"
    asyncio.run(_seed(url))
    issued = CliRunner().invoke(main, ["api-key", "issue", "--db", url, "--user", "mei"])
    assert issued.exit_code == 0, issued.output
    auth = {"Authorization": f"Bearer {issued.output.strip()}"}
    (tmp_path / "helper.yaml").write_text("name: helper\ndescription: Helps.\ntools: []\n")
    held = Held("done at last")
    args = ["--db", url, "--agents", str(tmp_path / "helper.yaml"), "--model", "openai/scripted"]
    args += ["--heartbeat-seconds", "0.1", "--follow-seconds", "2"]
    with (
        OpenAIScriptServer([held], api_key="test-key") as model,
        serve_api(args, OPENAI_BASE_URL=model.base_url, OPENAI_API_KEY="test-key") as base,
        httpx.Client(base_url=base, timeout=60, headers=auth) as runs,
        httpx.Client(base_url=base, timeout=60, headers=auth) as follows,
        ThreadPoolExecutor(max_workers=1) as pool,
    ):
        session = runs.post("/v1/agents/helper/sessions").json()["id"]
        path = f"/v1/agents/helper/sessions/{session}"
        posted: list[str] = []
        run = pool.submit(read_stream, runs, "POST", f"{path}/runs", posted, json={"text": "go"})
        try:
            assert held.entered.wait(30)
            followed: list[str] = []
            # Ends by itself at the follow limit: the model is held until after it.
            assert read_stream(follows, "GET", f"{path}/events", followed) == 200
            assert followed.count(HEARTBEAT) >= 2
            assert parse_sse("\n".join(followed))[-1]["data"]["status"] == "running"
            # The run's own stream was as quiet, and kept alive the same way.
            assert posted.count(HEARTBEAT) >= 2
            assert not any(line == "event: run_status" for line in posted)
        finally:
            held.release.set()
        assert run.result(60) == 200
    final = parse_sse("\n".join(posted))[-1]
    assert final["event"] == "run_status" and final["data"]["status"] == "completed"


@pytest.mark.parametrize("option", ["--heartbeat-seconds", "--follow-seconds"])
def test_intervals_must_be_positive(option: str, tmp_path: Path) -> None:
    (tmp_path / "helper.yaml").write_text("name: helper\ndescription: Helps.\ntools: []\n")
    refused = CliRunner().invoke(
        main, ["serve", "api", "--agents", str(tmp_path / "helper.yaml"), option, "0"]
    )
    assert refused.exit_code == 2
    assert option in refused.output
