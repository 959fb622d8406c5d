"""Shared helpers (``run_turn`` and ``user_message`` are ``adk_yuxi.testing``'s), and the
Hypothesis profile (``ci`` unless ``HYPOTHESIS_PROFILE`` names another; see ``_profiles``)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from google.adk.events.event import Event
from google.genai import types

from adk_yuxi.testing import run_turn, user_message
from tests._profiles import load_profile

load_profile()

__all__ = ["final_texts", "function_responses", "run_turn", "user_message"]


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


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
