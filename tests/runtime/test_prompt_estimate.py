"""Compaction's per-call check is O(1) for a model that reports no prompt size: the
model event carries an estimate, so ADK never rebuilds the whole history's contents to
estimate it. Counted with a profiler hook on ADK's estimator (nothing patched)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.apps import compaction as adk_compaction
from google.adk.events import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.genai import types

from adk_yuxi.access import Role
from adk_yuxi.runtime import (
    AgentConfig,
    Compaction,
    ContextPolicy,
    Toolbox,
    build_app,
    compaction_config,
)
from adk_yuxi.runtime.assembly._prompt_estimate import (
    ESTIMATED_KEY,
    PromptEstimatePlugin,
    estimate_prompt_tokens,
)
from adk_yuxi.sessions import SqlSessionService
from adk_yuxi.testing import ScriptedLlm

from ._kit import USER, Kit

# ADK's fallback that builds the contents of the whole history (apps/compaction.py).
ESTIMATOR = adk_compaction._estimate_prompt_token_count.__code__


def silent(reply: str) -> LlmResponse:
    """A reply without any usage metadata, as several OpenAI-compatible servers send."""
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=reply)]))


@contextmanager
def estimator_calls() -> Iterator[list[int]]:
    count = [0]

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code is ESTIMATOR:
            count[0] += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield count
    finally:
        sys.setprofile(previous)


async def turns(runner: Runner, session_id: str, count: int) -> list[Event]:
    events: list[Event] = []
    for index in range(count):
        message = types.Content(role="user", parts=[types.Part(text=f"message {index}")])
        async for event in runner.run_async(
            user_id=USER, session_id=session_id, new_message=message
        ):
            events.append(event)
    return events


def yuxi_app(tmp_path: Path, model: Any, policy: ContextPolicy | None = None, **extra: Any) -> App:
    kit = Kit(tmp_path)
    config = AgentConfig(name="a", tools=("echo",), context=policy or ContextPolicy())
    return build_app(
        config,
        kit.principal(role=Role.ADMIN),
        model=model,
        toolbox=Toolbox(registry=kit.registry),
        **extra,
    )


async def test_a_silent_model_gets_an_estimate_and_no_history_build(tmp_path: Path) -> None:
    sessions = SqlSessionService(f"sqlite+aiosqlite:///{tmp_path / 's.db'}")
    model = ScriptedLlm([silent(f"answer {i}") for i in range(6)])
    runner = Runner(app=yuxi_app(tmp_path, model), session_service=sessions)
    await sessions.create_session(app_name="a", user_id=USER, session_id="s")
    await turns(runner, "s", 1)  # a new session: nothing reported yet, ADK estimates once
    with estimator_calls() as calls:
        events = await turns(runner, "s", 5)
    assert calls[0] == 0
    answers = [e for e in events if e.author == "a" and e.content]
    assert len(answers) == 5
    for answer, request in zip(answers, model.requests[1:], strict=True):
        assert answer.usage_metadata is not None
        assert answer.usage_metadata.prompt_token_count == estimate_prompt_tokens(request) > 0
        assert answer.custom_metadata == {ESTIMATED_KEY: True}
    await runner.close()
    await sessions.close()


async def test_plain_adk_rebuilds_the_history_for_every_call(tmp_path: Path) -> None:
    """The anchor: the same model and compaction without the estimate."""
    model = ScriptedLlm([silent(f"answer {i}") for i in range(6)])
    agent = LlmAgent(name="a", model=model)
    app = App(
        name="a",
        root_agent=agent,
        events_compaction_config=compaction_config(ContextPolicy(), model),
    )
    sessions = SqlSessionService(f"sqlite+aiosqlite:///{tmp_path / 's.db'}")
    runner = Runner(app=app, session_service=sessions)
    await sessions.create_session(app_name="a", user_id=USER, session_id="s")
    await turns(runner, "s", 1)
    with estimator_calls() as calls:
        await turns(runner, "s", 5)
    assert calls[0] >= 5  # the check before each model call, and after each turn
    await runner.close()
    await sessions.close()


async def test_a_reported_count_is_kept(tmp_path: Path) -> None:
    model = ScriptedLlm(["fine"])  # reports a prompt size of 0
    sessions = SqlSessionService(f"sqlite+aiosqlite:///{tmp_path / 's.db'}")
    runner = Runner(app=yuxi_app(tmp_path, model), session_service=sessions)
    await sessions.create_session(app_name="a", user_id=USER, session_id="s")
    events = await turns(runner, "s", 1)
    answer = next(e for e in events if e.author == "a" and e.content)
    assert answer.usage_metadata is not None and answer.usage_metadata.prompt_token_count == 0
    assert not answer.custom_metadata
    await runner.close()
    await sessions.close()


async def test_the_estimate_still_triggers_compaction(tmp_path: Path) -> None:
    policy = ContextPolicy(budget_tokens=500, compact_at_tokens=120, keep_recent_events=2)
    model = ScriptedLlm([silent("an answer of a few words " * 4) for _ in range(12)])
    summarizer = ScriptedLlm(["the summary so far"] * 12)
    app = yuxi_app(tmp_path, model, policy, capabilities=[Compaction(summarizer=summarizer)])
    sessions = SqlSessionService(f"sqlite+aiosqlite:///{tmp_path / 's.db'}")
    runner = Runner(app=app, session_service=sessions)
    await sessions.create_session(app_name="a", user_id=USER, session_id="s")
    await turns(runner, "s", 8)
    stored = await sessions.get_session(app_name="a", user_id=USER, session_id="s")
    assert stored is not None
    assert any(e.actions and e.actions.compaction for e in stored.events)
    await runner.close()
    await sessions.close()


async def test_partial_responses_are_left_alone_and_the_final_one_counted() -> None:
    plugin = PromptEstimatePlugin()
    sent = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text="x" * 40)])])
    context: Any = None  # the plugin does not read it
    await plugin.before_model_callback(callback_context=context, llm_request=sent)
    partial = LlmResponse(content=types.Content(role="model", parts=[types.Part(text="a")]))
    partial.partial = True
    await plugin.after_model_callback(callback_context=context, llm_response=partial)
    assert partial.usage_metadata is None and not partial.custom_metadata
    final = silent("all of it")
    await plugin.after_model_callback(callback_context=context, llm_response=final)
    assert final.usage_metadata is not None and final.usage_metadata.prompt_token_count == 10
