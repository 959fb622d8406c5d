"""Failures of an OpenAI-compatible host end the turn with one error event that names
the model, the base URL and what to check; `ping_model` reports the same outcome."""

from __future__ import annotations

import socket

from google.adk.agents import LlmAgent
from google.adk.events.event import Event

from adk_yuxi.models import (
    MODEL_REJECTED,
    MODEL_UNREACHABLE,
    DemoLlm,
    OpenAICompatibleLlm,
    ping_model,
)
from adk_yuxi.testing import OpenAIScriptServer
from tests.conftest import final_texts, run_turn


def unused_base_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def error_event(events: list[Event]) -> Event:
    errors = [e for e in events if e.error_code]
    assert len(errors) == 1, events
    return errors[0]


async def test_a_host_that_is_down_is_named_with_a_hint() -> None:
    base_url = unused_base_url()
    llm = OpenAICompatibleLlm(model="qwen-plus", api_key="k", base_url=base_url)
    events = await run_turn(LlmAgent(name="a", model=llm), "hello")
    event = error_event(events)
    assert event.error_code == MODEL_UNREACHABLE
    message = event.error_message or ""
    assert f"The model 'qwen-plus' at {base_url} failed: Connection error." in message
    assert "Is the server at OPENAI_BASE_URL running" in message
    assert final_texts(events)[-1] == f"[{MODEL_UNREACHABLE}] {message}"


async def test_a_refused_key_points_at_the_key() -> None:
    with OpenAIScriptServer(["never"], api_key="right") as server:
        llm = OpenAICompatibleLlm(model="m", api_key="wrong", base_url=server.base_url)
        events = await run_turn(LlmAgent(name="a", model=llm), "hello")
    event = error_event(events)
    assert event.error_code == MODEL_REJECTED
    assert "HTTP 401" in (event.error_message or "")
    assert "check OPENAI_API_KEY" in (event.error_message or "")
    assert server.requests == []


async def test_a_working_host_is_untouched() -> None:
    with OpenAIScriptServer(["pong"], api_key="k") as server:
        llm = OpenAICompatibleLlm(model="m", api_key="k", base_url=server.base_url)
        events = await run_turn(LlmAgent(name="a", model=llm), "hello")
    assert not any(e.error_code for e in events)
    assert final_texts(events)[-1] == "pong"


async def test_ping_reports_answer_and_failure() -> None:
    with OpenAIScriptServer(["pong"], api_key="k") as server:
        llm = OpenAICompatibleLlm(model="m", api_key="k", base_url=server.base_url)
        answered = await ping_model(llm)
    assert answered.ok and answered.detail == "pong"
    [request] = server.requests
    assert request["model"] == "m" and request["max_tokens"] <= 8

    down = OpenAICompatibleLlm(model="m", api_key="k", base_url=unused_base_url())
    failed = await ping_model(down)
    assert not failed.ok and "Connection error" in failed.detail

    assert (await ping_model(DemoLlm())).ok
