"""The demo model goes through the Runner: real function calls, executed by ADK."""

from __future__ import annotations

import subprocess
import sys

from google.adk.agents import LlmAgent
from google.adk.memory import InMemoryMemoryService
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.preload_memory_tool import PreloadMemoryTool

from adk_yuxi.models import DemoLlm
from adk_yuxi.tools import ToolRegistry, default_registry, tool
from tests.conftest import final_texts, function_responses, run_turn, user_message


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


async def test_preloaded_memory_after_a_tool_result_does_not_hide_it() -> None:
    """ADK inserts past conversations after the function response when the model goes
    on with a tool call: the demo model still answers from the result."""
    import adk_yuxi.tools.builtin  # noqa: F401

    agent = LlmAgent(
        name="assistant",
        model=DemoLlm(),
        tools=[*default_registry.tools(["calculate"]), PreloadMemoryTool()],
    )
    sessions, memory = InMemorySessionService(), InMemoryMemoryService()
    runner = Runner(app_name="t", agent=agent, session_service=sessions, memory_service=memory)
    seen: list[list[str]] = []
    for session_id in ("past", "now"):
        await sessions.create_session(app_name="t", user_id="u", session_id=session_id)
        events = [
            e
            async for e in runner.run_async(
                user_id="u", session_id=session_id, new_message=user_message("what is 6 * 7")
            )
        ]
        seen.append(final_texts(events))
        past = await sessions.get_session(app_name="t", user_id="u", session_id=session_id)
        assert past is not None
        await memory.add_session_to_memory(past)
    await runner.close()
    assert "42" in seen[1][-1], seen
    assert "previous conversations" not in seen[1][-1]
