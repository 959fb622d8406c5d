"""The demo model calls agent tools and transfers, on a plain ADK agent tree."""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.agent_tool import AgentTool

from adk_yuxi.models import DemoLlm
from adk_yuxi.tools import default_registry
from tests.conftest import final_texts, function_responses, run_turn, user_message


def tree() -> LlmAgent:
    import adk_yuxi.tools.builtin  # noqa: F401

    researcher = LlmAgent(
        name="researcher",
        description="Does arithmetic.",
        model=DemoLlm(),
        tools=default_registry.tools(["calculate"]),
    )
    writer = LlmAgent(
        name="writer",
        description="Drafts.",
        model=DemoLlm(),
        # As build_app makes it: the next message goes back to the coordinator.
        disallow_transfer_to_parent=True,
        disallow_transfer_to_peers=True,
    )
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


async def test_a_new_message_after_a_handoff_is_answered_for_itself() -> None:
    """The coordinator's request ends with its transfer, the writer's reply quoted as
    context, then the new message: the old transfer result is not what it answers."""
    service = InMemorySessionService()
    runner = Runner(app_name="test", agent=tree(), session_service=service)
    session = await service.create_session(app_name="test", user_id="u1")
    turns = []
    for message in ("please draft a memo, hand it to the writer", "what is 6 * 7"):
        turns.append(
            [
                e
                async for e in runner.run_async(
                    user_id="u1", session_id=session.id, new_message=user_message(message)
                )
            ]
        )
    await runner.close()
    assert "writer here" in final_texts(turns[0])[-1]
    answer = final_texts(turns[1])[-1]
    assert "returned" not in answer and "null" not in answer, answer
    assert "'calculate'" in answer, answer  # the arithmetic intent, for this message
