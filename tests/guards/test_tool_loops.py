"""A model that loops on a tool is stopped: errors a tool returns count toward
`max_tool_failures`, the same failing call made three times ends the turn with a message
the user sees, and so does the same call answered with the same result five times.
Played over the loopback OpenAI-compatible server, as a real model sent it (118 calls of
`calculate(":{")` in one turn, before)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App

from adk_yuxi.errors import ToolErrorCode, tool_error
from adk_yuxi.guards import (
    REPEATED_TOOL_CALL,
    REPEATED_TOOL_FAILURE,
    RepairBudget,
    RepeatedCallPlugin,
    RepeatedToolCall,
    RepeatedToolFailure,
    ReturnedFailurePlugin,
    returned_error_code,
)
from adk_yuxi.runtime import Limits, ToolFailureLimitReached
from adk_yuxi.testing import OpenAIScriptServer, ScriptedLlm, ToolCall, call
from adk_yuxi.tools import tool
from tests.runtime._kit import Kit

from ._kit import TOOLS, app_for, guard_kit, openai_model, responses, turn


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    kit = guard_kit(tmp_path)

    @tool(registry=kit.registry)
    def evaluate(expression: str) -> dict[str, Any]:
        """Evaluates an arithmetic expression (answers an error for anything else)."""
        kit.ran["evaluate"] += 1
        if not expression.replace(" ", "").replace("+", "").isdigit():
            return {"error": {"code": "invalid_expression", "message": "not arithmetic"}}
        return {"value": sum(int(t) for t in expression.split("+"))}

    @tool(registry=kit.registry)
    def ask_someone(question: str) -> dict[str, Any]:
        """Asks a person (answers `tool_not_available` where no one can be asked, as the
        base tools do without run records)."""
        kit.ran["ask_someone"] += 1
        return tool_error(ToolErrorCode.TOOL_NOT_AVAILABLE, "ask_someone")

    return kit


def _text(event: Any) -> str:
    parts = event.content.parts if event.content and event.content.parts else []
    return "".join(p.text or "" for p in parts)


async def test_the_same_failing_call_three_times_ends_the_turn(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop = [ToolCall("evaluate", {"expression": ":{"})] * 30
    with OpenAIScriptServer([*loop, "done"], api_key="test-key") as server:
        model = openai_model(monkeypatch, server.base_url)
        events = await turn(app_for(kit, model, tools=(*TOOLS, "evaluate")), "what is :{ ?")
    assert kit.ran["evaluate"] == 3
    assert len(server.requests) == 3  # the fourth model call is never made
    last = events[-1]
    assert last.error_code == REPEATED_TOOL_FAILURE
    assert _text(last) == (
        "This run was stopped: the model called `evaluate` 3 times with the same arguments"
        " and it failed each time."
    )
    *_, (_, third) = responses(events)
    assert third["error"]["message"].endswith("The same call failed 3 times, so this run ends.")
    assert RepeatedToolFailure.from_event(last) is not None


async def test_returned_errors_count_toward_max_tool_failures(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    varied = [ToolCall("evaluate", {"expression": f":{i}"}) for i in range(30)]
    with OpenAIScriptServer([*varied, "done"], api_key="test-key") as server:
        model = openai_model(monkeypatch, server.base_url)
        app = app_for(kit, model, tools=(*TOOLS, "evaluate"), limits=Limits(max_tool_failures=3))
        events = await turn(app, "evaluate some things")
    assert kit.ran["evaluate"] == 4  # three failures absorbed, the fourth ends the run
    assert len(server.requests) == 4
    assert events[-1].error_code == ToolFailureLimitReached.CODE
    assert "too many tool calls failed" in _text(events[-1])


async def test_a_tool_that_answers_not_available_again_and_again_is_stopped(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """30 calls of `ask_user_question`, each answered `tool_not_available`, before."""
    loop = [ToolCall("ask_someone", {"question": "which?"})] * 30
    with OpenAIScriptServer([*loop, "done"], api_key="test-key") as server:
        model = openai_model(monkeypatch, server.base_url)
        events = await turn(app_for(kit, model, tools=(*TOOLS, "ask_someone")), "ask")
    assert kit.ran["ask_someone"] == 3
    assert len(server.requests) == 3
    assert events[-1].error_code == REPEATED_TOOL_FAILURE


async def test_a_failure_then_a_success_goes_on(kit: Kit, monkeypatch: pytest.MonkeyPatch) -> None:
    script = [
        ToolCall("evaluate", {"expression": ":{"}),
        ToolCall("evaluate", {"expression": ":{"}),
        ToolCall("evaluate", {"expression": "1+2"}),
        "It is 3.",
    ]
    with OpenAIScriptServer(script, api_key="test-key") as server:
        model = openai_model(monkeypatch, server.base_url)
        events = await turn(app_for(kit, model, tools=(*TOOLS, "evaluate")), "1+2?")
    assert not any(e.error_code for e in events)
    assert _text(events[-1]) == "It is 3."


def test_what_counts_as_a_returned_error() -> None:
    assert returned_error_code({"error": {"code": "invalid_expression"}}) == "invalid_expression"
    assert returned_error_code({"error": "no such city"}) == "error"
    assert returned_error_code({"isError": True, "content": []}) == "mcp_error"
    assert returned_error_code({"value": 3}) is None
    assert returned_error_code({"error": {"code": "tool_failed"}}) is None  # charged already
    marker = "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"
    repaired = {"error": {"code": "invalid_arguments"}, "response_type": marker}
    assert returned_error_code(repaired) is None


async def test_a_plain_adk_app_is_stopped_by_its_own_budget() -> None:
    """Without `build_app`: `ReturnedFailurePlugin(RepairBudget(n))` ends the run itself."""

    def lookup(city: str) -> dict[str, Any]:
        """Looks a city up (knows none)."""
        return {"error": {"code": "unknown_city", "message": f"no city {city!r}"}}

    llm = ScriptedLlm([call("lookup", city="Atlantis")] * 10)
    agent = LlmAgent(name="plain", model=llm, tools=[lookup])
    plugin = ReturnedFailurePlugin(RepairBudget(10), repeat_limit=3)
    events = await turn(App(name="plain", root_agent=agent, plugins=[plugin]), "where?")
    assert len(llm.requests) == 3
    assert events[-1].error_code == REPEATED_TOOL_FAILURE
    assert "called `lookup` 3 times" in _text(events[-1])


async def test_the_same_call_with_the_same_result_five_times_ends_the_turn(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model that does not take in an answer asks again until `max_llm_calls`."""
    loop = [ToolCall("evaluate", {"expression": "1+2"})] * 30
    with OpenAIScriptServer([*loop, "done"], api_key="test-key") as server:
        model = openai_model(monkeypatch, server.base_url)
        events = await turn(app_for(kit, model, tools=(*TOOLS, "evaluate")), "1+2?")
    assert kit.ran["evaluate"] == 5
    assert len(server.requests) == 5
    last = events[-1]
    assert last.error_code == REPEATED_TOOL_CALL
    assert _text(last) == (
        "This run was stopped: the model called `evaluate` 5 times with the same arguments"
        " and got the same result each time."
    )
    assert RepeatedToolCall.from_event(last) is not None


async def test_a_call_whose_result_changes_is_not_a_loop(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Polling that makes progress goes on; the limit is the deployer's to set."""
    polls = {"n": 0}

    @tool(registry=kit.registry)
    def job_status() -> dict[str, Any]:
        """The state of the running job."""
        polls["n"] += 1
        return {"done": polls["n"] >= 6, "progress": polls["n"]}

    script = [*[ToolCall("job_status", {})] * 6, "The job is done."]
    with OpenAIScriptServer(script, api_key="test-key") as server:
        model = openai_model(monkeypatch, server.base_url)
        app = app_for(kit, model, tools=(*TOOLS, "job_status"))
        events = await turn(app, "wait for the job")
    assert not any(e.error_code for e in events)
    assert _text(events[-1]) == "The job is done."
    with OpenAIScriptServer([*[ToolCall("evaluate", {"expression": "1+2"})] * 3, "3."]) as s2:
        model = openai_model(monkeypatch, s2.base_url)
        app = app_for(kit, model, tools=(*TOOLS, "evaluate"), limits=Limits(stop_after_same_call=3))
        events = await turn(app, "1+2?")
    assert events[-1].error_code == REPEATED_TOOL_CALL


async def test_a_plain_adk_app_stops_a_repeated_call_too() -> None:
    def lookup(city: str) -> dict[str, Any]:
        """Looks a city up."""
        return {"city": city, "population": 1}

    llm = ScriptedLlm([call("lookup", city="Paris")] * 10)
    agent = LlmAgent(name="plain", model=llm, tools=[lookup])
    plugin = RepeatedCallPlugin(RepairBudget(10), repeat_limit=4)
    events = await turn(App(name="plain", root_agent=agent, plugins=[plugin]), "where?")
    assert len(llm.requests) == 4
    assert events[-1].error_code == REPEATED_TOOL_CALL
