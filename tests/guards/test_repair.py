"""Repair of malformed calls through the real Runner: each goes back to the model as a
structured error with guidance, the tool never runs, and past the budget the run ends
with a clear error event."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App

from adk_yuxi.guards import (
    REPAIR_BUDGET_EXHAUSTED,
    CallRepairPlugin,
    RepairBudget,
    RepairBudgetExhausted,
)
from adk_yuxi.models import MALFORMED_ARGUMENTS_KEY
from adk_yuxi.runtime import ToolFailureLimitReached
from adk_yuxi.testing import OpenAIScriptServer, ScriptedLlm, ToolCall, call
from adk_yuxi.tools import ToolRegistry, tool
from tests.runtime._kit import Kit

from ._kit import TOOLS, app_for, guard_kit, openai_model, responses, turn


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    return guard_kit(tmp_path)


async def test_invalid_arguments_come_back_with_the_expected_schema(kit: Kit) -> None:
    llm = ScriptedLlm(
        [
            call("convert_currency", amount="ten", source="USD"),
            call("convert_currency", amount=10.0, source="USD", target="EUR"),
            "20 EUR",
        ]
    )
    events = await turn(app_for(kit, llm), "convert 10 USD to EUR")
    (_, first), (_, second) = responses(events)
    error = first["error"]
    assert error["code"] == "invalid_arguments"
    assert {p["field"] for p in error["problems"]} == {"amount", "target"}
    assert error["expected"]["required"] == ["amount", "source", "target"]
    assert error["expected"]["parameters"]["amount"] == "number"
    assert first["repair"] == {"attempt": 1, "budget": 3}
    assert second == {"amount": 20.0, "currency": "EUR"}
    assert kit.ran["convert_currency"] == 1


async def test_unknown_tool_gets_the_declared_names(kit: Kit) -> None:
    llm = ScriptedLlm([call("get_wether", city="x"), call("get_weather", city="x"), "sunny"])
    events = await turn(app_for(kit, llm), "weather?")
    (name, first), _ = responses(events)
    assert name == "get_wether"
    assert first["error"]["code"] == "tool_not_available"
    assert "get_weather" in first["error"]["available"]
    assert set(first["error"]["available"]) == set(llm.tool_names(0))
    assert kit.ran["get_weather"] == 1


async def test_a_hidden_tool_is_refused_without_naming_hidden_tools(kit: Kit) -> None:
    llm = ScriptedLlm([call("make_report", title="x"), "ok"])
    events = await turn(app_for(kit, llm), "report")
    [(_, result)] = responses(events)
    assert result["error"]["code"] == "tool_not_available"
    assert "make_report" not in result["error"]["available"]
    assert kit.ran["make_report"] == 0


async def test_past_the_budget_the_run_ends_with_an_error_event(kit: Kit) -> None:
    """The budget is the run's one failure budget (`Limits.max_tool_failures`, 3)."""
    bad = call("convert_currency", amount="x")
    llm = ScriptedLlm([bad] * 4)  # a fifth model call would exhaust the script
    events = await turn(app_for(kit, llm), "convert")
    assert [r[1]["repair"]["attempt"] for r in responses(events)] == [1, 2, 3, 4]
    last = events[-1]
    assert last.error_code == ToolFailureLimitReached.CODE
    assert ToolFailureLimitReached.from_event(last) is not None
    assert "used up" in responses(events)[-1][1]["error"]["message"]
    assert kit.ran["convert_currency"] == 0
    assert len(llm.requests) == 4


async def test_repairs_and_tool_failures_share_one_budget(kit: Kit) -> None:
    @tool(registry=kit.registry)
    def flaky() -> dict[str, Any]:
        """Always fails."""
        raise RuntimeError("backend down")

    bad = call("convert_currency", amount="x")
    llm = ScriptedLlm([bad, call("flaky"), bad, call("flaky")])
    events = await turn(app_for(kit, llm, tools=(*TOOLS, "flaky")), "go")
    codes = [r[1]["error"]["code"] for r in responses(events)]
    assert codes == ["invalid_arguments", "tool_failed", "invalid_arguments", "run_ending"]
    assert events[-1].error_code == ToolFailureLimitReached.CODE


async def test_a_plain_adk_app_can_use_the_stand_alone_budget() -> None:
    registry = ToolRegistry()

    @tool(registry=registry)
    def add(a: int, b: int) -> int:
        """Adds two numbers."""
        return a + b

    bad = call("add", a="1", b=2)
    llm = ScriptedLlm([bad, bad, bad])
    agent = LlmAgent(name="plain", model=llm, tools=registry.tools())
    app = App(name="plain", root_agent=agent, plugins=[CallRepairPlugin(RepairBudget(1))])
    events = await turn(app, "add")
    assert len(responses(events)) == 2
    assert events[-1].error_code == REPAIR_BUDGET_EXHAUSTED
    assert RepairBudgetExhausted.from_event(events[-1]) is not None


async def test_a_marker_sent_by_a_model_is_answered_and_runs_nothing(kit: Kit) -> None:
    llm = ScriptedLlm([call("ping", **{MALFORMED_ARGUMENTS_KEY: "x"}), "ok"])
    events = await turn(app_for(kit, llm), "ping")
    [(_, result)] = responses(events)
    assert result["error"]["code"] == "malformed_arguments"
    assert kit.ran["ping"] == 0


@pytest.mark.parametrize("streaming", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize(
    "raw", ['{"to": "bob", "subject": ', "[1, 2]", "'to': 'bob'"], ids=["cut", "list", "quotes"]
)
async def test_openai_arguments_that_are_not_a_json_object_are_repaired(
    kit: Kit, monkeypatch: pytest.MonkeyPatch, streaming: bool, raw: str
) -> None:
    script = [
        ToolCall("ping", raw),
        ToolCall("send_email", {"to": "bob", "subject": "hi"}),
        "sent",
    ]
    with OpenAIScriptServer(script) as server:
        app = app_for(kit, openai_model(monkeypatch, server.base_url))
        events = await turn(app, "ping then mail bob", streaming=streaming)
    (name, first), (_, second) = responses(events)
    assert name == "ping"
    assert kit.ran["ping"] == 0  # ADK alone would have run it with {}
    error = first["error"]
    assert error["code"] == "malformed_arguments"
    assert error["problem"].startswith(("not valid JSON", "a JSON list"))
    assert error["expected"] == {"parameters": {}, "required": []}
    assert second == {"sent": True}
    # The repair went back to the model as the tool result of that call.
    tool_messages = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert "malformed_arguments" in tool_messages[0]["content"]


@pytest.mark.parametrize(
    "name", ["get_weath\u0435r", "get_weather\x00", " get_weather", "ｇｅｔ_weather"]
)
async def test_look_alike_and_odd_names_never_reach_the_tool(kit: Kit, name: str) -> None:
    llm = ScriptedLlm([call(name, city="x"), "ok"])
    events = await turn(app_for(kit, llm), "weather")
    [(called, result)] = responses(events)
    assert called == name
    assert result["error"]["code"] == "tool_not_available"
    assert "get_weather" in result["error"]["available"]
    assert kit.ran["get_weather"] == 0
