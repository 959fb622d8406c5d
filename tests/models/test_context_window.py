"""The compaction budget follows the model's context window (configured, reported by the
server, or named by a refusal); a context-length refusal compacts the session and retries
the call once; the refusal that cannot be helped names the context size; an empty reply
is said to be one. All played over the loopback OpenAI-compatible server with the bodies
llama.cpp, llama-cpp-python, vLLM and OpenAI send."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.apps import App
from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_yuxi.access import Role
from adk_yuxi.models import (
    MODEL_CONTEXT_EXCEEDED,
    MODEL_EMPTY_REPLY,
    ModelConfigError,
    OpenAICompatibleLlm,
    resolve_model,
)
from adk_yuxi.runtime import AgentConfig, ContextPolicy, Toolbox, build_app
from adk_yuxi.testing import EmptyReply, ErrorReply, OpenAIScriptServer
from tests.conftest import final_texts, run_turn, user_message
from tests.runtime._kit import USER, Kit

LLAMA_CPP_PYTHON = "Requested tokens (9120) exceed context window of 8192"
LLAMA_CPP = ErrorReply(
    400,
    "the request exceeds the available context size, try increasing it",
    "exceed_context_size_error",
    400,
    {"n_prompt_tokens": 5000, "n_ctx": 4096},
)


def _model(server: OpenAIScriptServer, **extra: Any) -> OpenAICompatibleLlm:
    return OpenAICompatibleLlm(model="m", api_key="k", base_url=server.base_url, **extra)


def _app(kit: Kit, model: OpenAICompatibleLlm, policy: ContextPolicy | None = None) -> App:
    config = AgentConfig(name="a", tools=("echo",), context=policy or ContextPolicy())
    return build_app(
        config, kit.principal(role=Role.ADMIN), model=model, toolbox=Toolbox(registry=kit.registry)
    )


async def _talk(app: App, messages: list[str]) -> tuple[list[list[Event]], list[Event]]:
    sessions = InMemorySessionService()
    runner = Runner(app=app, session_service=sessions)
    await sessions.create_session(app_name=app.name, user_id=USER, session_id="s")
    turns = []
    try:
        for message in messages:
            content = types.Content(role="user", parts=[types.Part(text=message)])
            turns.append(
                [
                    e
                    async for e in runner.run_async(
                        user_id=USER, session_id="s", new_message=content
                    )
                ]
            )
    finally:
        await runner.close()
    session = await sessions.get_session(app_name=app.name, user_id=USER, session_id="s")
    assert session is not None
    return turns, session.events


def test_the_context_setting_is_read_beside_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("YUXI_MODEL_CONTEXT", "8k")
    model = resolve_model("openai/m")
    assert isinstance(model, OpenAICompatibleLlm) and model.context_window == 8192
    monkeypatch.setenv("YUXI_MODEL_CONTEXT", "lots")
    with pytest.raises(ModelConfigError, match="YUXI_MODEL_CONTEXT='lots' is not a context size"):
        resolve_model("openai/m")


def test_the_budget_follows_a_configured_window(tmp_path: Path) -> None:
    """32,000 tokens of budget above an 8,192-token model never triggered, before."""
    with OpenAIScriptServer([]) as server:
        app = _app(Kit(tmp_path), _model(server, context_window=8192))
    config = app.events_compaction_config
    assert config is not None
    # 8,192 less the reply's share (4,096 max_tokens), three quarters of that.
    assert config.token_threshold == 3072


@pytest.mark.parametrize(
    ("report", "window"),
    [
        ({"props": {"default_generation_settings": {"n_ctx": 4096}}}, 4096),  # llama.cpp
        ({"models": [{"id": "m", "object": "model", "max_model_len": 2048}]}, 2048),  # vLLM
    ],
    ids=["llama.cpp-props", "vllm-models"],
)
async def test_the_budget_follows_the_window_the_server_reports(
    report: dict[str, Any], window: int, tmp_path: Path
) -> None:
    with OpenAIScriptServer(["hello"], api_key="k", **report) as server:
        model = _model(server)
        app = _app(Kit(tmp_path), model)
        await _talk(app, ["hi"])
    assert model.context_window == window
    assert app.events_compaction_config is not None
    assert app.events_compaction_config.token_threshold == (window - window // 2) * 3 // 4


async def test_a_context_refusal_compacts_and_retries_the_call(tmp_path: Path) -> None:
    chatter = [f"Tell me about room {i}: " + "it has chairs and a window. " * 12 for i in range(6)]
    script: list[Any] = [f"Room {i} noted." for i in range(6)]
    script += [
        ErrorReply(400, LLAMA_CPP_PYTHON, "invalid_request_error"),  # the turn's call
        "The user described six rooms.",  # the summary
        "Room 6 noted too.",  # the retried call
    ]
    with OpenAIScriptServer(script, api_key="k") as server:
        model = _model(server)
        policy = ContextPolicy(keep_recent_events=2)
        turns, events = await _talk(_app(Kit(tmp_path), model, policy), [*chatter, "and room 6?"])
    last = turns[-1]
    assert not any(e.error_code for e in last)
    assert final_texts(last)[-1] == "Room 6 noted too."
    assert [e for e in events if e.actions.compaction is not None]
    refused, retried = server.requests[6], server.requests[8]
    assert len(retried["messages"]) < len(refused["messages"])
    assert model.context_window == 8192  # learned from the refusal


async def test_a_refusal_that_cannot_be_helped_names_the_context_size(tmp_path: Path) -> None:
    with OpenAIScriptServer([LLAMA_CPP], api_key="k") as server:
        turns, _ = await _talk(_app(Kit(tmp_path), _model(server)), ["hello"])
    [error] = [e for e in turns[0] if e.error_code]
    assert error.error_code == MODEL_CONTEXT_EXCEEDED
    text = final_texts([error])[-1]
    assert "the conversation no longer fits the model's context window of 4,096 tokens" in text
    assert "see the host's message above" not in text


async def test_an_empty_reply_is_said_to_be_one() -> None:
    with OpenAIScriptServer([EmptyReply()], api_key="k") as server:
        events = await run_turn(LlmAgent(name="a", model=_model(server)), "hello")
    [error] = [e for e in events if e.error_code]
    assert error.error_code == MODEL_EMPTY_REPLY
    assert (
        "it sent an empty reply (finish reason: stop); ask again or rephrase"
        in (final_texts(events)[-1])
    )


async def test_a_refusal_reply_is_not_silent_either() -> None:
    with OpenAIScriptServer([EmptyReply(refusal="I can't help with that.")], api_key="k") as s:
        events = await run_turn(LlmAgent(name="a", model=_model(s)), "hello")
    assert [e.error_code for e in events if e.error_code] == [MODEL_EMPTY_REPLY]


@pytest.mark.parametrize(("reply", "empty"), [("pong", False), (EmptyReply(), True)])
async def test_streamed_replies_are_judged_whole(reply: Any, empty: bool) -> None:
    """`adk web` streams: a streamed answer is not empty, a streamed nothing is."""
    with OpenAIScriptServer([reply], api_key="k") as server:
        agent = LlmAgent(name="a", model=_model(server))
        sessions = InMemorySessionService()
        runner = Runner(app_name="t", agent=agent, session_service=sessions)
        session = await sessions.create_session(app_name="t", user_id="u")
        events = [
            e
            async for e in runner.run_async(
                user_id="u",
                session_id=session.id,
                new_message=user_message("hello"),
                run_config=RunConfig(streaming_mode=StreamingMode.SSE),
            )
        ]
        await runner.close()
    codes = [e.error_code for e in events if e.error_code]
    assert codes == ([MODEL_EMPTY_REPLY] if empty else [])
    assert final_texts(events)[-1] == "pong" or empty
