"""Every app `build_app` assembles carries the always-on guards, whichever way it is
built: call repair, the charging of returned tool errors with its stop for a repeated
failing call, and the retry of a call too long for the model's context."""

from __future__ import annotations

from pathlib import Path

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_yuxi.guards import (
    EMPTY_REPLY_TEXT,
    CallRepairPlugin,
    ContextOverflowPlugin,
    EmptyReplyPlugin,
    RepeatedCallPlugin,
    ReturnedFailurePlugin,
)
from adk_yuxi.runtime import AgentConfig, Limits, Toolbox, build_app
from adk_yuxi.testing import ScriptedLlm
from tests.conftest import final_texts
from tests.runtime._kit import Kit

from ._kit import turn

EMPTY = LlmResponse(
    content=types.Content(role="model", parts=[types.Part(text="")]),
    finish_reason=types.FinishReason.STOP,
)


def test_every_built_app_has_the_always_on_guards(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    config = AgentConfig(name="a", tools=("echo",), limits=Limits(stop_after_same_failure=5))
    app = build_app(
        config, kit.principal(), model=ScriptedLlm([]), toolbox=Toolbox(registry=kit.registry)
    )
    kinds = [type(p) for p in app.plugins]
    guards = (ContextOverflowPlugin, EmptyReplyPlugin, CallRepairPlugin, ReturnedFailurePlugin)
    for guard in (*guards, RepeatedCallPlugin):
        assert kinds.count(guard) == 1, kinds
    [failures] = [p for p in app.plugins if isinstance(p, ReturnedFailurePlugin)]
    assert failures.repeat_limit == 5
    # After the authorization plugin, which decides every call first.
    assert kinds.index(ContextOverflowPlugin) > 0


async def test_an_empty_reply_of_any_model_is_said_to_be_one(tmp_path: Path) -> None:
    """ADK marks it `MODEL_RETURNED_NO_CONTENT` but with no text: `adk run` printed nothing."""
    kit = Kit(tmp_path)
    app = build_app(
        AgentConfig(name="a", tools=("echo",)),
        kit.principal(),
        model=ScriptedLlm([EMPTY]),
        toolbox=Toolbox(registry=kit.registry),
    )
    events = await turn(app, "hello")
    [error] = [e for e in events if e.error_code]
    assert error.error_code == "MODEL_RETURNED_NO_CONTENT"
    assert final_texts([error]) == [f"[MODEL_RETURNED_NO_CONTENT] {EMPTY_REPLY_TEXT}"]
