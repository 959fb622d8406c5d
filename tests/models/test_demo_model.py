"""The demo model goes through the Runner: real function calls, executed by ADK."""

from __future__ import annotations

import subprocess
import sys

from google.adk.agents import LlmAgent

from adk_yuxi.models import DemoLlm
from adk_yuxi.tools import ToolRegistry, default_registry, tool
from tests.conftest import final_texts, function_responses, run_turn


def agent_with_builtins() -> LlmAgent:
    import adk_yuxi.tools.builtin  # noqa: F401

    return LlmAgent(
        name="assistant",
        model=DemoLlm(),
        tools=default_registry.tools(["save_note", "list_notes", "calculate"]),
    )


async def test_arithmetic_becomes_a_calculate_call() -> None:
    events = await run_turn(agent_with_builtins(), "what is 6 * (5 + 2)?")
    [response] = function_responses(events)
    assert response.name == "calculate"
    assert response.response == {"expression": "6 * (5 + 2)", "value": 42}
    assert "42" in final_texts(events)[-1]


async def test_remember_saves_into_user_state() -> None:
    events = await run_turn(agent_with_builtins(), "remember the room is B12")
    [response] = function_responses(events)
    assert response.name == "save_note"
    deltas = [e.actions.state_delta for e in events if e.actions and e.actions.state_delta]
    assert {"user:notes": ["the room is B12"]} in deltas


async def test_explicit_call_only_for_declared_tools() -> None:
    registry = ToolRegistry()
    seen: list[int] = []

    @tool(registry=registry)
    def record(n: int) -> int:
        """Records n."""
        seen.append(n)
        return n

    agent = LlmAgent(name="a", model=DemoLlm(), tools=registry.tools())
    await run_turn(agent, '/call record {"n": 7}')
    assert seen == [7]
    events = await run_turn(agent, "/call hidden {}")
    assert function_responses(events) == []
    assert "cannot see a tool named 'hidden'" in final_texts(events)[-1]


async def test_without_matching_tool_it_explains_itself() -> None:
    events = await run_turn(LlmAgent(name="a", model=DemoLlm()), "hello")
    assert function_responses(events) == []
    assert final_texts(events)[-1].startswith("(demo model) I am the offline demo model")


def test_banner_announces_the_demo_model_once_on_stderr() -> None:
    code = (
        "import asyncio\n"
        "from tests.conftest import run_turn\n"
        "from google.adk.agents import LlmAgent\n"
        "from adk_yuxi.models import DemoLlm\n"
        "agent = LlmAgent(name='a', model=DemoLlm())\n"
        "asyncio.run(run_turn(agent, 'hi'))\n"
        "asyncio.run(run_turn(agent, 'hi again'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stderr.count("Offline demo model in use") == 1
