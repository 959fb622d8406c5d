"""An agent on ADK's own OpenAI-compatible adapter, over real HTTP to a loopback server."""

from __future__ import annotations

import json

import openai
import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService

from adk_yuxi.models import resolve_model
from adk_yuxi.testing import OpenAIScriptServer, ToolCall
from adk_yuxi.tools import ToolRegistry, tool
from tests.conftest import final_texts, function_responses, user_message


def registry_with_lookup(calls: list[str]) -> ToolRegistry:
    registry = ToolRegistry()

    @tool(registry=registry, display_name="Look up a city")
    def lookup_city(city: str) -> dict[str, str]:
        """Returns facts about a city."""
        calls.append(city)
        return {"city": city, "country": "China" if city == "杭州" else "unknown"}

    return registry


@pytest.mark.parametrize("streaming", [False, True], ids=["json", "sse"])
async def test_tool_call_round_trip_through_openai_adapter(
    monkeypatch: pytest.MonkeyPatch, streaming: bool
) -> None:
    calls: list[str] = []
    script = [ToolCall("lookup_city", {"city": "杭州"}), "杭州 is in China."]
    with OpenAIScriptServer(script, api_key="sk-loopback") as server:
        monkeypatch.setenv("YUXI_MODEL", "openai/qwen-plus")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
        agent = LlmAgent(
            name="geo", model=resolve_model(), tools=registry_with_lookup(calls).tools()
        )
        service = InMemorySessionService()
        runner = Runner(app_name="geo", agent=agent, session_service=service)
        session = await service.create_session(app_name="geo", user_id="u")
        mode = StreamingMode.SSE if streaming else StreamingMode.NONE
        events = [
            e
            async for e in runner.run_async(
                user_id="u",
                session_id=session.id,
                new_message=user_message("Where is 杭州?"),
                run_config=RunConfig(streaming_mode=mode),
            )
        ]
        await runner.close()

    assert calls == ["杭州"]
    [response] = function_responses(events)
    assert response.response == {"city": "杭州", "country": "China"}
    assert final_texts([e for e in events if not e.partial])[-1] == "杭州 is in China."

    first, second = server.requests
    assert first["model"] == "qwen-plus"
    assert bool(first.get("stream")) is streaming
    declared = [t["function"]["name"] for t in first["tools"]]
    assert declared == ["lookup_city"]
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert json.loads(tool_messages[0]["content"]) == {"city": "杭州", "country": "China"}


async def test_wrong_key_is_an_error_not_a_hang() -> None:
    with OpenAIScriptServer(["never"], api_key="right") as server:
        from google.adk.integrations.openai import OpenAILlm

        agent = LlmAgent(
            name="a", model=OpenAILlm(model="m", base_url=server.base_url, api_key="wrong")
        )
        service = InMemorySessionService()
        runner = Runner(app_name="a", agent=agent, session_service=service)
        session = await service.create_session(app_name="a", user_id="u")
        with pytest.raises(openai.AuthenticationError):
            async for _ in runner.run_async(
                user_id="u", session_id=session.id, new_message=user_message("hi")
            ):
                pass
        await runner.close()
    assert server.requests == []
