"""A Runner over the SQL services with the base tools and the ledger plugin, driven by a
scripted model: the pieces every base tool test needs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.events import Event
from google.adk.runners import Runner
from google.genai import types

from adk_yuxi.ledger import LedgerPlugin, WorkspaceRoot
from adk_yuxi.storage import YuxiServices
from adk_yuxi.testing import ScriptedLlm
from adk_yuxi.tools.base import BASE_TOOLS, base_tool

APP = "base"
USER = "alice"


def user_text(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def make_runner(
    services: YuxiServices,
    script: Sequence[Any],
    *,
    workspace: WorkspaceRoot | None = None,
    ledger: LedgerPlugin | None = None,
    plugins: Sequence[Any] = (),
) -> tuple[Runner, ScriptedLlm, LedgerPlugin]:
    llm = ScriptedLlm(script)
    plugin = ledger or LedgerPlugin(services.store, workspace=workspace)
    agent = LlmAgent(name="helper", model=llm, tools=[base_tool(t) for t in BASE_TOOLS])
    app = App(name=APP, root_agent=agent, plugins=[*plugins, plugin])
    runner = Runner(
        app=app,
        session_service=services.session_service,
        artifact_service=services.artifact_service,
    )
    return runner, llm, plugin


async def run(
    runner: Runner, session_id: str, message: types.Content, user_id: str = USER
) -> list[Event]:
    return [
        e
        async for e in runner.run_async(user_id=user_id, session_id=session_id, new_message=message)
    ]


def responses(events: Sequence[Event], name: str | None = None) -> list[dict[str, Any]]:
    return [
        dict(p.function_response.response or {})
        for e in events
        for p in (e.content.parts or [] if e.content else [])
        if p.function_response is not None and (name is None or p.function_response.name == name)
    ]


def pending_calls(events: Sequence[Event]) -> list[types.FunctionCall]:
    return [
        fc
        for e in events
        for fc in e.get_function_calls()
        if fc.id in (e.long_running_tool_ids or ())
    ]
