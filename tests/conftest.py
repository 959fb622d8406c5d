"""Shared fixtures: a Runner over an in-memory session service, and message helpers."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types


def user_message(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def function_responses(events: Sequence[Event]) -> list[types.FunctionResponse]:
    return [
        part.function_response
        for event in events
        for part in (event.content.parts if event.content and event.content.parts else [])
        if part.function_response is not None
    ]


def final_texts(events: Sequence[Event]) -> list[str]:
    return [
        part.text
        for event in events
        if not event.partial and event.content and event.content.parts
        for part in event.content.parts
        if part.text
    ]


async def run_turn(agent: LlmAgent, message: str, *, user_id: str = "u1") -> list[Event]:
    """One user turn through a real Runner on a fresh in-memory session."""
    service = InMemorySessionService()
    runner = Runner(app_name="test", agent=agent, session_service=service)
    session = await service.create_session(app_name="test", user_id=user_id)
    events = [
        event
        async for event in runner.run_async(
            user_id=user_id, session_id=session.id, new_message=user_message(message)
        )
    ]
    await runner.close()
    return events


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
