"""`Limits` are enforced per run through the real Runner: model calls (of every agent in
the run) with both stopping modes, and tool calls per turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent, SequentialAgent
from google.adk.apps import App
from google.adk.sessions import InMemorySessionService

from adk_yuxi.access import Role
from adk_yuxi.models._request import system_instruction_text
from adk_yuxi.runtime import (
    FINAL_ANSWER_INSTRUCTION,
    AgentConfig,
    LlmCallLimitReached,
    Toolbox,
    ToolCallLimitReached,
    build_app,
)
from adk_yuxi.testing import ScriptedLlm, call

from ._kit import Kit, function_responses, run_turn


def _app(kit: Kit, llm: ScriptedLlm, **limits: Any) -> App:
    config = AgentConfig(name="a", tools=("echo",), limits=limits)
    return build_app(
        config, kit.principal(role=Role.ADMIN), model=llm, toolbox=Toolbox(registry=kit.registry)
    )


async def test_generate_makes_a_last_call_without_tools_and_ends_normally(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    llm = ScriptedLlm([call("echo", text="1"), "Best answer from what I have."] + ["x"] * 5)
    events = await run_turn(_app(kit, llm, max_llm_calls=2), InMemorySessionService(), "s", "go")
    assert len(llm.requests) == 2
    assert "echo" in llm.tool_names(0) and llm.tool_names(1) == []
    assert FINAL_ANSWER_INSTRUCTION.strip() in system_instruction_text(llm.requests[1])
    assert events[-1].error_code is None
    assert events[-1].content.parts[0].text == "Best answer from what I have."  # type: ignore[union-attr, index]


async def test_generate_ends_with_an_error_when_the_last_call_still_asks_for_tools(
    tmp_path: Path,
) -> None:
    kit = Kit(tmp_path)
    llm = ScriptedLlm([call("echo", text="1"), call("echo", text="2"), "never"])
    events = await run_turn(_app(kit, llm, max_llm_calls=2), InMemorySessionService(), "s", "go")
    assert LlmCallLimitReached.from_event(events[-1]) is not None
    assert kit.ran["echo"] == 1 and len(llm.requests) == 2


async def test_force_ends_the_run_instead_of_calling_the_model_again(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    llm = ScriptedLlm([call("echo", text=str(i)) for i in range(7)])
    app = _app(kit, llm, max_llm_calls=2, early_stopping="force")
    events = await run_turn(app, InMemorySessionService(), "s", "go")
    assert LlmCallLimitReached.from_event(events[-1]) is not None
    assert len(llm.requests) == 2 and kit.ran["echo"] == 2
    assert "echo" in llm.tool_names(1)  # "force" does not take the tools away


async def test_model_calls_of_every_agent_in_the_run_count(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    first = ScriptedLlm(["first agent's answer"])
    second = ScriptedLlm(["second agent's answer"])
    app = _app(kit, first, max_llm_calls=1, early_stopping="force")
    pipeline = SequentialAgent(
        name="pipeline", sub_agents=[app.root_agent, LlmAgent(name="second", model=second)]
    )
    app = App(name=app.name, root_agent=pipeline, plugins=app.plugins)
    events = await run_turn(app, InMemorySessionService(), "s", "go")
    assert len(first.requests) == 1 and second.requests == []
    assert LlmCallLimitReached.from_event(events[-1]) is not None


async def test_tool_calls_past_the_turn_limit_end_the_run(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    llm = ScriptedLlm([call("echo", text="1"), call("echo", text="2"), "never"])
    app = _app(kit, llm, max_tool_calls_per_turn=1)
    events = await run_turn(app, InMemorySessionService(), "s", "go")
    ok, refused = function_responses(events)["echo"]
    assert ok == {"echo": "1"} and refused["error"]["code"] == "limit_reached"
    assert ToolCallLimitReached.from_event(events[-1]) is not None
    assert kit.ran["echo"] == 1 and len(llm.requests) == 2
