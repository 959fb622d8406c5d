"""A skill's MCP server connects only once the skill is active (real stdio server)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions import InMemorySessionService

from adk_yuxi.mcp import McpServerConfig
from adk_yuxi.models import declared_tool_names
from adk_yuxi.runtime import AgentConfig, Toolbox, build_app
from adk_yuxi.testing import ScriptedLlm, call

from ._kit import Kit, function_responses, run_turn

SERVER = Path(__file__).with_name("_mcp_server.py")


@pytest.mark.slow
async def test_skill_mcp_server_connects_on_activation(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    kit = Kit(tmp_path)
    kit.mcp.register(
        McpServerConfig(
            name="glossary",
            transport="stdio",
            command=sys.executable,
            args=(str(SERVER),),
            env={"YUXI_TEST_MARKER": str(marker)},
            timeout=30,
        )
    )
    kit.skill("terms", body="Use lookup_term.", mcp_dependencies=["glossary"])
    kit.load_skills()
    seen: list[tuple[list[str], bool]] = []

    def observe(turn: Any) -> Any:
        def play(request: LlmRequest) -> Any:
            seen.append((declared_tool_names(request), marker.exists()))
            return turn

        return play

    llm = ScriptedLlm(
        [
            observe(call("load_skill", skill_name="terms")),
            observe(call("lookup_term", term="gating")),
            observe("done"),
        ]
    )
    # No MCP server configured on the agent itself: only the skill brings one.
    config = AgentConfig(name="reader", tools=("echo",), mcps=(), skills=("terms",))
    principal = kit.principal(mcps=("glossary",))
    app = build_app(
        config,
        principal,
        model=llm,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog, mcp_servers=kit.mcp),
    )
    events = await run_turn(app, InMemorySessionService(), "s", "what is gating?")

    (names0, started0), (names1, started1), _ = seen
    assert "lookup_term" not in names0 and not started0  # not connected before activation
    assert "lookup_term" in names1 and started1
    result = function_responses(events)["lookup_term"][0]
    assert "a word in the glossary" in str(result)


async def test_mcp_server_the_user_may_not_use_drops_the_skill(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    kit.mcp.register(
        McpServerConfig(name="glossary", transport="streamable_http", url="http://127.0.0.1:9/mcp")
    )
    kit.skill("terms", mcp_dependencies=["glossary"])
    kit.load_skills()
    llm = ScriptedLlm(["no skills here"])
    config = AgentConfig(name="reader", tools=("echo",), skills=("terms",))
    app = build_app(
        config,
        kit.principal(mcps=()),
        model=llm,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog, mcp_servers=kit.mcp),
    )
    await run_turn(app, InMemorySessionService(), "s", "hi")
    assert llm.tool_names(0) == ["read_tool_result", "echo"]  # the offload's base tool


async def test_unreachable_server_loses_only_its_own_tools(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    kit.mcp.register(
        McpServerConfig(
            name="broken",
            transport="stdio",
            command=sys.executable,
            args=("-c", "pass"),
            timeout=5,
        )
    )
    llm = ScriptedLlm(["fine"])
    config = AgentConfig(name="reader", tools=("echo",), mcps=("broken",))
    app = build_app(
        config,
        kit.principal(mcps=("broken",)),
        model=llm,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog, mcp_servers=kit.mcp),
    )
    await run_turn(app, InMemorySessionService(), "s", "hi")
    assert llm.tool_names(0) == ["read_tool_result", "echo"]  # the offload's base tool
