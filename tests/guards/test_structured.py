"""Structured output with tools on the OpenAI-compatible path, over the loopback server:
tools first, then a final answer validated on the schema, repaired when invalid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from adk_yuxi.guards import StructuredAnswerInvalid
from adk_yuxi.runtime import ToolFailureLimitReached
from adk_yuxi.testing import OpenAIScriptServer, ToolCall
from adk_yuxi.tools import tool
from tests.runtime._kit import Kit

from ._kit import app_for, guard_kit, openai_model, responses, turn


class Forecast(BaseModel):
    city: str
    weather: str
    temperature_c: int


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    return guard_kit(tmp_path)


def final_json(events: list) -> dict:  # type: ignore[type-arg]
    texts = [
        p.text
        for e in events
        if not e.partial and e.content and e.author == "guarded"
        for p in e.content.parts or []
        if p.text and not p.thought
    ]
    return json.loads(texts[-1])


@pytest.mark.parametrize("streaming", [False, True], ids=["json", "sse"])
async def test_tools_then_an_invalid_then_a_valid_final_answer(
    kit: Kit, monkeypatch: pytest.MonkeyPatch, streaming: bool
) -> None:
    script = [
        ToolCall("get_weather", {"city": "杭州"}),
        ToolCall("set_model_response", {"city": "杭州", "weather": "sunny"}),
        ToolCall("set_model_response", {"city": "杭州", "weather": "sunny", "temperature_c": 25}),
    ]
    with OpenAIScriptServer(script) as server:
        model = openai_model(monkeypatch, server.base_url)
        app = app_for(kit, model, output_schema=Forecast)
        events = await turn(app, "杭州天气？", streaming=streaming)
    assert kit.ran["get_weather"] == 1
    names = [name for name, _ in responses(events)]
    assert names == ["get_weather", "set_model_response", "set_model_response"]
    repair = responses(events)[1][1]
    assert repair["error"]["code"] == "invalid_final_answer"
    assert "temperature_c" in repair["error"]["problem"]
    assert repair["error"]["expected"]["required"] == ["city", "weather", "temperature_c"]
    assert final_json(events) == {"city": "杭州", "weather": "sunny", "temperature_c": 25}
    declared = [t["function"]["name"] for t in server.requests[0]["tools"]]
    assert "set_model_response" in declared and "get_weather" in declared


@pytest.mark.parametrize("streaming", [False, True], ids=["json", "sse"])
async def test_a_plain_text_final_answer_is_validated_too(
    kit: Kit, monkeypatch: pytest.MonkeyPatch, streaming: bool
) -> None:
    script = [
        "It is sunny in 杭州.",  # not JSON: sent back for repair
        '```json\n{"city": "杭州", "weather": "sunny", "temperature_c": 21}\n```',
    ]
    with OpenAIScriptServer(script) as server:
        app = app_for(kit, openai_model(monkeypatch, server.base_url), output_schema=Forecast)
        events = await turn(app, "杭州天气？", streaming=streaming)
    first = responses(events)[0][1]
    assert first["error"]["code"] == "malformed_arguments"
    assert "not JSON" in first["error"]["problem"]
    assert final_json(events) == {"city": "杭州", "weather": "sunny", "temperature_c": 21}
    assert len(server.requests) == 2


async def test_an_answer_that_stays_invalid_ends_the_run_with_an_error_event(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = ToolCall("set_model_response", {"city": "杭州"})
    with OpenAIScriptServer([bad] * 4) as server:
        model = openai_model(monkeypatch, server.base_url)
        events = await turn(app_for(kit, model, output_schema=Forecast), "杭州天气？")
    codes = [r[1]["error"]["code"] for r in responses(events)]
    assert codes == ["invalid_final_answer"] * 4
    assert "budget of this run is used up" in responses(events)[-1][1]["error"]["message"]
    # Its own code, not "too many tool calls failed", and a text naming the schema.
    assert events[-1].error_code == StructuredAnswerInvalid.CODE
    assert events[-1].error_message == (
        "the final answer did not match the required output schema 'Forecast'"
    )
    assert StructuredAnswerInvalid.from_event(events[-1]) is not None
    assert len(server.requests) == 4


async def test_a_tool_failure_last_still_ends_with_tool_failures(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The budget spent by an invalid answer, then a tool that raised: the run ends on
    the tool's failure, and the tool is told it ran and failed."""

    @tool(registry=kit.registry)
    def fail() -> dict[str, Any]:
        """Always raises."""
        raise RuntimeError("backend down")

    bad = ToolCall("set_model_response", {"city": "杭州"})
    broken = ToolCall("fail", {})
    with OpenAIScriptServer([bad, bad, bad, broken]) as server:
        model = openai_model(monkeypatch, server.base_url)
        app = app_for(kit, model, output_schema=Forecast, tools=("fail", "get_weather"))
        events = await turn(app, "杭州天气？")
    last = responses(events)[-1][1]["error"]
    assert last["code"] == "run_ending" and "ran and failed" in last["message"]
    assert "did not run" not in last["message"]
    assert events[-1].error_code == ToolFailureLimitReached.CODE
