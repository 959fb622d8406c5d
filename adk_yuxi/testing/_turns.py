"""One user turn through ADK's real ``Runner``: the helper every test of an agent needs."""

from __future__ import annotations

from typing import Any

from google.adk.agents import BaseAgent
from google.adk.agents.run_config import RunConfig
from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService, InMemorySessionService
from google.genai import types

__all__ = ["run_turn", "user_message"]


def user_message(text: str) -> types.Content:
    """A user message of one text part."""
    return types.Content(role="user", parts=[types.Part(text=text)])


async def run_turn(
    target: BaseAgent | App,
    message: str | types.Content,
    *,
    session_service: BaseSessionService | None = None,
    session_id: str | None = None,
    user_id: str = "u1",
    app_name: str = "test",
    run_config: RunConfig | None = None,
    **services: Any,
) -> list[Event]:
    """Runs one turn of ``target`` (an agent, or an ``App`` with its plugins) and returns
    its events.

    Without ``session_service`` the turn runs on a fresh in-memory session; with one, the
    session ``session_id`` is created when it does not exist yet, so consecutive calls
    continue one conversation. ``services`` (``artifact_service=...``, ``memory_service=...``)
    go to the ``Runner``; the runner is closed afterwards.
    """
    sessions = session_service if session_service is not None else InMemorySessionService()
    if isinstance(target, App):
        runner = Runner(app=target, session_service=sessions, **services)
        app_name = target.name
    else:
        runner = Runner(app_name=app_name, agent=target, session_service=sessions, **services)
    try:
        found = None
        if session_id is not None:
            found = await sessions.get_session(
                app_name=app_name, user_id=user_id, session_id=session_id
            )
        if found is None:
            found = await sessions.create_session(
                app_name=app_name, user_id=user_id, session_id=session_id
            )
        new_message = user_message(message) if isinstance(message, str) else message
        return [
            event
            async for event in runner.run_async(
                user_id=user_id,
                session_id=found.id,
                new_message=new_message,
                run_config=run_config,
            )
        ]
    finally:
        await runner.close()
