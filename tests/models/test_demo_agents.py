"""The demo model calls agent tools and transfers, on a plain ADK agent tree."""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool

from adk_yuxi.models import DemoLlm
from adk_yuxi.tools import default_registry
from tests.conftest import final_texts, function_responses, run_turn


def tree() -> LlmAgent:
    import adk_yuxi.tools.builtin  # noqa: F401

    researcher = LlmAgent(
        name="researcher",
        description="Does arithmetic.",
        model=DemoLlm(),
        tools=default_registry.tools(["calculate"]),
    )
    writer = LlmAgent(name="writer", description="Drafts.", model=DemoLlm())
    return LlmAgent(
        name="coordinator",
        model=DemoLlm(),
        tools=[AgentTool(researcher)],
        sub_agents=[writer],
    )


async def test_ask_calls_the_agent_tool_which_runs_its_own_tool() -> None:
    events = await run_turn(tree(), "ask researcher what is 6 * 7")
    [response] = function_responses(events)
    assert response.name == "researcher"
    assert response.response is not None and "42" in response.response["result"]


async def test_hand_over_transfers_and_the_target_answers() -> None:
    events = await run_turn(tree(), "please draft a memo, hand it to the writer")
    [response] = function_responses(events)
    assert response.name == "transfer_to_agent"
    assert events[-1].author == "writer"
    assert "writer here" in final_texts(events)[-1]


async def test_unknown_agent_names_are_not_invented() -> None:
    events = await run_turn(tree(), "ask nobody what is 1 + 1")
    assert [r.name for r in function_responses(events)] == []
