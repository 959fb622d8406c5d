"""ScriptedLlm: plays turns in order, records requests, fails loudly past the script."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest

from adk_yuxi.testing import ScriptedLlm, ScriptExhaustedError, call
from adk_yuxi.tools import ToolRegistry, tool
from tests.conftest import final_texts, function_responses, run_turn


def registry_with_add() -> ToolRegistry:
    registry = ToolRegistry()

    @tool(registry=registry)
    def add(a: int, b: int) -> int:
        """Adds two integers."""
        return a + b

    return registry


async def test_records_each_request_with_declared_tools_and_contents() -> None:
    model = ScriptedLlm([call("add", a=2, b=3), "five"])
    agent = LlmAgent(
        name="a", model=model, instruction="Be exact.", tools=registry_with_add().tools()
    )
    events = await run_turn(agent, "add 2 and 3")

    assert [r.response for r in function_responses(events)] == [{"result": 5}]
    assert final_texts(events)[-1] == "five"
    assert len(model.requests) == 2
    assert model.tool_names(0) == ["add"]
    first_user = model.requests[0].contents[-1].parts[0].text
    assert first_user == "add 2 and 3"
    assert model.requests[1].contents[-1].parts[0].function_response.response == {"result": 5}
    assert model.remaining == 0


async def test_callable_turn_sees_the_request() -> None:
    def echo_tools(request: LlmRequest) -> str:
        return ",".join(sorted(request.tools_dict))

    model = ScriptedLlm([echo_tools])
    agent = LlmAgent(name="a", model=model, tools=registry_with_add().tools())
    events = await run_turn(agent, "which tools?")
    assert final_texts(events)[-1] == "add"


async def test_running_out_of_script_fails_loudly() -> None:
    model = ScriptedLlm([call("add", a=1, b=1)])
    agent = LlmAgent(name="a", model=model, tools=registry_with_add().tools())
    with pytest.raises(ScriptExhaustedError, match="ran out of turns after 1"):
        await run_turn(agent, "loop")


async def test_recorded_requests_are_copies() -> None:
    model = ScriptedLlm(["a", "b"])
    agent = LlmAgent(name="a", model=model)
    await run_turn(agent, "one")
    snapshot = len(model.requests[0].contents)
    model.requests.clear()
    await run_turn(agent, "two")
    assert len(model.requests) == 2
    assert len(model.requests[0].contents) == snapshot
