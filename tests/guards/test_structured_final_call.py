"""Structured output to the end, over the loopback OpenAI server and the real Runner: the
last model call (`early_stopping="generate"`) keeps `set_model_response` alone, so the
final answer is validated whatever the model answers with, streamed or not; an answer
that fails there ends the run with its own code, naming the schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.adk.events import Event
from pydantic import BaseModel

from adk_yuxi.guards import DRAFT_METADATA_KEY, StructuredAnswerInvalid
from adk_yuxi.runtime import Limits
from adk_yuxi.testing import OpenAIScriptServer, ToolCall
from tests.runtime._kit import Kit

from ._kit import app_for, guard_kit, openai_model, responses, turn


class Forecast(BaseModel):
    city: str
    weather: str
    temperature_c: int


GOOD = {"city": "杭州", "weather": "sunny", "temperature_c": 21}
ANSWERS: dict[str, Any] = {
    "text": json.dumps(GOOD, ensure_ascii=False),
    "call": ToolCall("set_model_response", GOOD),
    "bad-text": "It is sunny in 杭州, about 21 degrees.",
    "bad-call": ToolCall("set_model_response", {"city": "杭州"}),
}


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    return guard_kit(tmp_path)


def _declared(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


def _system(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


def _texts(events: list[Event], *, partial: bool) -> list[Event]:
    return [
        e
        for e in events
        if bool(e.partial) is partial and e.content and any(p.text for p in e.content.parts or [])
    ]


@pytest.mark.parametrize("streaming", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("max_llm_calls", [1, 2, 3])
@pytest.mark.parametrize("answer", list(ANSWERS))
async def test_the_last_model_call_answers_through_the_schema(
    kit: Kit,
    monkeypatch: pytest.MonkeyPatch,
    answer: str,
    max_llm_calls: int,
    streaming: bool,
) -> None:
    script = [ToolCall("get_weather", {"city": "杭州"})] * (max_llm_calls - 1)
    script.append(ANSWERS[answer])
    with OpenAIScriptServer(script) as server:
        model = openai_model(monkeypatch, server.base_url)
        limits = Limits(max_llm_calls=max_llm_calls)
        app = app_for(kit, model, output_schema=Forecast, limits=limits)
        events = await turn(app, "杭州天气？", streaming=streaming)
    assert len(server.requests) == max_llm_calls  # no call past the limit, ever
    assert kit.ran["get_weather"] == max_llm_calls - 1
    last_call = server.requests[-1]
    assert _declared(last_call) == ["set_model_response"]  # kept alone
    assert "set_model_response" in _system(last_call)
    if max_llm_calls > 1:
        assert "get_weather" in _declared(server.requests[0])
    final = events[-1]
    if answer.startswith("bad"):
        assert final.error_code == StructuredAnswerInvalid.CODE
        assert final.error_message == StructuredAnswerInvalid.public_text("Forecast")
        repair = responses(events)[-1][1]["error"]
        assert repair["code"] in {"invalid_final_answer", "malformed_arguments"}
        assert "last model call of this run" in repair["message"]
    else:
        assert final.error_code is None and not final.partial
        assert final.content is not None and final.content.parts
        assert json.loads(final.content.parts[0].text or "") == GOOD
    # A client tells drafts from the answer: every streamed text of the structured
    # step is marked a draft, the answer (or the error) is not.
    drafts = _texts(events, partial=True)
    assert all((e.custom_metadata or {}).get(DRAFT_METADATA_KEY) is True for e in drafts)
    assert not (final.custom_metadata or {}).get(DRAFT_METADATA_KEY)
    if streaming and answer.endswith("text"):
        assert drafts, "the streamed text reaches the client as drafts"
    if not streaming:
        assert drafts == []
