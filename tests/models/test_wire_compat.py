"""What an OpenAI-compatible host is sent: an assistant message that only called tools
carries empty content (llama-cpp-python answered `null` with HTTP 500), and string bounds
of 1,000 characters or more are left out of tool schemas (its grammar for a bound of
2,000 crashed the server) while smaller bounds stay."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from google.adk.agents import LlmAgent
from pydantic import Field

from adk_yuxi.models import resolve_model
from adk_yuxi.testing import OpenAIScriptServer, ToolCall
from adk_yuxi.tools import ToolRegistry, tool
from tests.conftest import final_texts, run_turn


def _registry() -> ToolRegistry:
    registry = ToolRegistry()

    @tool(registry=registry)
    def keep(
        text: Annotated[str, Field(max_length=2000)],
        label: Annotated[str, Field(max_length=40)],
    ) -> dict[str, Any]:
        """Keeps a labelled text."""
        return {"kept": len(text), "label": label}

    return registry


def _schema(body: dict[str, Any]) -> dict[str, Any]:
    [declared] = body["tools"]
    parameters: dict[str, Any] = declared["function"]["parameters"]
    return parameters


async def test_local_hosts_get_what_they_can_take(monkeypatch: pytest.MonkeyPatch) -> None:
    script = [ToolCall("keep", {"text": "hello", "label": "greeting"}), "kept"]
    with OpenAIScriptServer(script, api_key="k") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        agent = LlmAgent(name="a", model=resolve_model("openai/m"), tools=_registry().tools())
        events = await run_turn(agent, "keep hello")
    assert final_texts(events)[-1] == "kept"
    properties = _schema(server.requests[0])["properties"]
    assert "maxLength" not in properties["text"]
    assert properties["label"]["maxLength"] == 40
    called = [m for m in server.requests[1]["messages"] if m.get("tool_calls")]
    assert [m["content"] for m in called] == [""]
