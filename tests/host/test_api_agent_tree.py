"""`yuxi serve api --agents agents/team/configs`: the folder is one catalog, its root
agent (`coordinator`) the API's agent, served with its tree, gated per user as
`build_app` gates it. Two users over real HTTP (SQLite and PostgreSQL): mei (finance)
may use every agent of the team and reaches the researcher, a nested run with its own
model calls and tools; li (sales) may not use the researcher: her model is never shown
it, and a call to it anyway is refused without running it. When the researcher's model
host refuses it, the coordinator's run goes on and what it stores of the agent tool's
answer is the public sentence, not the model's URL. The model is ADK's OpenAI client
against a loopback OpenAI server playing a script."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

import adk_yuxi.tools.builtin  # noqa: F401  (the team's configs name built-in tools)
from adk_yuxi.access import (
    AccessRepository,
    ResourceKind,
    ResourceRecord,
    Role,
    Scope,
    ShareConfig,
    User,
)
from adk_yuxi.cli import main
from adk_yuxi.models import MODEL_REJECTED, model_error_text
from adk_yuxi.storage import open_services
from adk_yuxi.testing import ErrorReply, OpenAIScriptServer, ToolCall
from tests.e2e._cli import REPO

from ._cli_served import serve_api
from .conftest import parse_sse

pytestmark = pytest.mark.slow
TEAM = REPO / "agents" / "team" / "configs"
RIGHTS = {
    "coordinator": ("finance", "sales"),
    "writer": ("finance", "sales"),
    "critic": ("finance", "sales"),
    "researcher": ("finance",),
}
ASK = ToolCall("researcher", {"request": "what is 6 * 7"})


async def _seed(url: str) -> None:
    services = open_services(url)
    try:
        access = AccessRepository(services.store)
        await access.save_user(User(id="root", role=Role.SUPERADMIN))
        await access.save_user(User(id="mei", department_id="finance"))
        await access.save_user(User(id="li", department_id="sales"))
        for agent, departments in RIGHTS.items():
            share = ShareConfig(read_scope=Scope.departments(*departments))
            await access.save_resource(
                ResourceRecord(kind=ResourceKind.AGENT, id=agent, creator_id="root", share=share)
            )
    finally:
        await services.close()


def _token(url: str, user: str) -> str:
    issued = CliRunner().invoke(main, ["api-key", "issue", "--db", url, "--user", user])
    assert issued.exit_code == 0, issued.output
    return issued.output.strip()


def _tools(request: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools") or []}


def _instruction(request: dict[str, Any]) -> str:
    return " ".join(str(m.get("content")) for m in request["messages"] if m["role"] == "system")


def _responses(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        p["functionResponse"]
        for f in frames
        if f["event"] == "adk_event"
        for p in (f["data"].get("content") or {}).get("parts", [])
        if "functionResponse" in p
    ]


def _run(client: httpx.Client, token: str, text: str) -> list[dict[str, Any]]:
    auth = {"Authorization": f"Bearer {token}"}
    created = client.post("/v1/agents/coordinator/sessions", headers=auth)
    assert created.status_code == 201, created.text
    path = f"/v1/agents/coordinator/sessions/{created.json()['id']}/runs"
    ran = client.post(path, json={"text": text}, headers=auth)
    assert ran.status_code == 200, ran.text
    return parse_sse(ran.text)


def test_a_folder_of_configs_is_served_as_one_tree_per_user(db_url: str, tmp_path: Path) -> None:
    asyncio.run(_seed(db_url))
    mei, li = _token(db_url, "mei"), _token(db_url, "li")
    script = [
        ASK,  # mei's coordinator asks the researcher
        ToolCall("calculate", {"expression": "6 * 7"}),  # the researcher's own run
        "42",
        "The researcher says 42.",
        ASK,  # li's coordinator asks it too, though it was never shown it
        "I cannot reach the researcher.",
        ASK,  # mei again: the researcher's model host refuses it (403: not retried)
        ErrorReply(403, "this key may not use model scripted"),
        "The researcher is unavailable.",
    ]
    args = ["--db", db_url, "--agents", str(TEAM), "--model", "openai/scripted"]
    args += ["--workspaces", str(tmp_path / "ws")]
    with (
        OpenAIScriptServer(script, api_key="test-key") as model,
        serve_api(args, OPENAI_BASE_URL=model.base_url, OPENAI_API_KEY="test-key") as base,
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        for token in (mei, li):
            auth = {"Authorization": f"Bearer {token}"}
            listed = client.get("/v1/agents", headers=auth).json()["agents"]
            assert [a["id"] for a in listed] == ["coordinator"]  # the root only
            for inner in ("writer", "researcher"):
                refused = client.post(f"/v1/agents/{inner}/sessions", headers=auth)
                assert refused.status_code == 404
        by_mei = _run(client, mei, "ask the researcher what 6 * 7 is")
        by_li = _run(client, li, "ask the researcher what 6 * 7 is")
        failing = _run(client, mei, "ask the researcher again")

    requests = model.requests
    assert len(requests) == len(script)
    # mei: the coordinator is shown the researcher (and the writer to hand over to);
    # the researcher runs nested, with its own instruction and tools.
    assert {"researcher", "transfer_to_agent"} <= _tools(requests[0])
    assert "calculator" in _instruction(requests[1]) and "calculate" in _tools(requests[1])
    assert by_mei[-1]["data"]["status"] == "completed"
    (answer,) = [r for r in _responses(by_mei) if r["name"] == "researcher"]
    assert "42" in json.dumps(answer["response"])
    # li: never shown the researcher; the call is refused, the researcher never runs.
    assert "researcher" not in _tools(requests[4])
    assert "calculator" not in _instruction(requests[5])
    (refusal,) = [r for r in _responses(by_li) if r["name"] == "researcher"]
    assert refusal["response"]["error"]["code"] == "tool_not_available"
    assert by_li[-1]["data"]["status"] == "completed"
    # The agent tool's failed nested run: its answer is the public sentence only.
    (failed,) = [r for r in _responses(failing) if r["name"] == "researcher"]
    assert failed["response"] == {
        "result": f"[{MODEL_REJECTED}] {model_error_text(MODEL_REJECTED)}"
    }
    assert model.base_url not in json.dumps(failing) and "OPENAI_" not in json.dumps(failing)
    assert failing[-1]["data"]["status"] == "completed"
