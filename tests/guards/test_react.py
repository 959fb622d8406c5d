"""The ReAct wrapper for text-only models: end to end against the loopback Chat
Completions server, whose script only ever writes text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adk_yuxi.models import REACT_PARSE_FAILED, ModelConfigError, ReactLlm, resolve_model
from adk_yuxi.models._react_format import ReactParseError, parse_reply
from adk_yuxi.models._request import system_instruction_text
from adk_yuxi.runtime import ToolRetrieval
from adk_yuxi.testing import OpenAIScriptServer, ScriptedLlm
from tests.runtime._kit import Kit

from ._kit import app_for, guard_kit, openai_model, responses, turn


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    return guard_kit(tmp_path)


def test_parse_action_answer_and_plain_text() -> None:
    reply = parse_reply(
        'Thought: need weather\nAction: get_weather\nAction Input: {"city": "杭州"}'
    )
    assert (reply.thought, reply.action, reply.arguments) == (
        "need weather",
        "get_weather",
        {"city": "杭州"},
    )
    assert parse_reply("Thought: done\nAnswer: 晴天").answer == "晴天"
    assert parse_reply("just words").answer == "just words"
    for broken in (
        "Action: get_weather\nAction Input: {city: 杭州}",
        "Action: get_weather",
        "Action: get weather now\nAction Input: {}",
        "Action: get_weather\nAction Input: [1]",
    ):
        with pytest.raises(ReactParseError):
            parse_reply(broken)


def test_react_prefix_wraps_any_other_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    model = resolve_model("react/openai/qwen")
    assert isinstance(model, ReactLlm)
    assert model.model == "react/qwen"
    assert isinstance(resolve_model("react/yuxi-demo"), ReactLlm)
    for bad in ("react/", "react/react/openai/x"):
        with pytest.raises(ModelConfigError, match="react/"):
            resolve_model(bad)


def _no_tools_declared(bodies: list[dict[str, Any]]) -> bool:
    return all(not body.get("tools") for body in bodies)


@pytest.mark.parametrize("streaming", [False, True], ids=["json", "sse"])
async def test_text_only_model_calls_tools_and_repairs_a_malformed_action(
    kit: Kit, monkeypatch: pytest.MonkeyPatch, streaming: bool
) -> None:
    script = [
        "Thought: I need the weather.\nAction: get_weather\nAction Input: {city: 杭州}",
        'Thought: fixed.\nAction: get_weather\nAction Input: {"city": "杭州"}',
        "Thought: I know now.\nAnswer: 杭州今天晴。",
    ]
    with OpenAIScriptServer(script) as server:
        model = openai_model(monkeypatch, server.base_url, prefix="react/")
        events = await turn(app_for(kit, model), "杭州天气？", streaming=streaming)
    assert kit.ran["get_weather"] == 1
    assert responses(events) == [("get_weather", {"city": "杭州", "weather": "sunny"})]
    finals = [
        p.text
        for e in events
        if not e.partial and e.content
        for p in e.content.parts or []
        if p.text and not p.thought
    ]
    assert finals[-1] == "杭州今天晴。"

    first, repair, last = server.requests
    assert _no_tools_declared(server.requests)
    # The model stops where it would invent the tool's result.
    assert all(r["stop"] == ["\nObservation"] for r in server.requests)
    system = first["messages"][0]
    assert system["role"] == "system" and "- get_weather(city: string)" in system["content"]
    # Gated: never described; at most named as what loading its skill would open.
    assert "make_report(" not in system["content"]
    assert "could not be used" in repair["messages"][-1]["content"]
    assert "not valid JSON" in repair["messages"][-1]["content"]
    observation = last["messages"][-1]
    assert observation["role"] == "user" and observation["content"].startswith("Observation")
    assert "sunny" in observation["content"]


async def test_actions_still_pass_the_gates_and_strict_arguments(kit: Kit) -> None:
    inner = ScriptedLlm(
        [
            'Action: make_report\nAction Input: {"title": "x"}',
            'Action: get_weather\nAction Input: {"city": 1}',
            "Answer: done",
        ]
    )
    events = await turn(app_for(kit, ReactLlm(inner=inner)), "report")
    (hidden, refused), (_, invalid) = responses(events)
    assert hidden == "make_report" and refused["error"]["code"] == "tool_not_available"
    assert invalid["error"]["code"] == "invalid_arguments"
    assert kit.ran["make_report"] == 0 and kit.ran["get_weather"] == 0
    assert all(not r.config.tools for r in inner.requests)


async def test_replies_that_never_parse_end_the_step_with_an_error(kit: Kit) -> None:
    bad = "Action: get_weather\nAction Input: nope"
    inner = ScriptedLlm([bad, bad, bad])
    events = await turn(app_for(kit, ReactLlm(inner=inner, format_retries=2)), "weather")
    assert events[-1].error_code == REACT_PARSE_FAILED
    assert len(inner.requests) == 3
    assert kit.ran["get_weather"] == 0


async def test_the_prompt_describes_only_the_tools_retrieved_this_step(kit: Kit) -> None:
    inner = ScriptedLlm(["Answer: 晴"])
    retrieval = ToolRetrieval(top_k=1)
    await turn(app_for(kit, ReactLlm(inner=inner), tool_retrieval=retrieval), "杭州天气怎么样")
    [request] = inner.requests
    prompt = system_instruction_text(request)
    assert "- get_weather(" in prompt
    assert "- send_email(" not in prompt and "- make_report(" not in prompt
