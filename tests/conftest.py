"""Shared helpers (``run_turn`` and ``user_message`` are ``adk_yuxi.testing``'s), the
Hypothesis profile (``ci`` unless ``HYPOTHESIS_PROFILE`` names another; see ``_profiles``),
and the order the two workers take the tests in (``_schedule``)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pytest
from google.adk.events.event import Event
from google.genai import types

from adk_yuxi.testing import run_turn, user_message
from tests._profiles import load_profile
from tests._schedule import make_scheduler, slow_first

load_profile()
# The child processes the tests start (`adk run`, `yuxi serve`, the docs' commands in a
# fresh venv) cache their bytecode as a user's do: with PYTHONDONTWRITEBYTECODE set in the
# environment, each of them compiled ADK and its dependencies from source again.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow_first(items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    return make_scheduler(config, log)


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
