"""Shared pieces of the guard tests: a tool world with a gated skill, an app on any model,
and a turn through the real Runner (streaming or not) that returns every event."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.apps import App
from google.adk.events import Event
from google.adk.models.base_llm import BaseLlm
from pydantic import BaseModel

from adk_yuxi.models import resolve_model
from adk_yuxi.runtime import AgentConfig, Toolbox, build_app
from adk_yuxi.testing import run_turn
from adk_yuxi.tools import tool
from tests.runtime._kit import Kit


def guard_kit(root: Path) -> Kit:
    """`Kit`'s tools, a few more to retrieve among, and `make_report` behind a skill."""
    kit = Kit(root)
    ran = kit.ran

    @tool(registry=kit.registry, display_name="天气查询", tags=["weather", "天气"])
    def get_weather(city: str) -> dict[str, Any]:
        """Current weather and temperature for a city. 查询城市当前的天气和气温。"""
        ran["get_weather"] += 1
        return {"city": city, "weather": "sunny"}

    @tool(registry=kit.registry, display_name="Currency converter", tags=["finance"])
    def convert_currency(amount: float, source: str, target: str) -> dict[str, Any]:
        """Converts an amount of money between currencies (exchange rate). 货币汇率换算。"""
        ran["convert_currency"] += 1
        return {"amount": amount * 2, "currency": target}

    @tool(registry=kit.registry, display_name="Send email", tags=["mail"])
    def send_email(to: str, subject: str) -> dict[str, Any]:
        """Sends an email message to a colleague. 给同事发送邮件。"""
        ran["send_email"] += 1
        return {"sent": True}

    @tool(registry=kit.registry, display_name="Ping")
    def ping() -> dict[str, Any]:
        """Checks that the service is up; takes no arguments."""
        ran["ping"] += 1
        return {"pong": True}

    kit.skill(
        "reporting",
        body="Call make_report with a short title.",
        tool_dependencies=["make_report"],
    )
    kit.load_skills()
    return kit


TOOLS = ("echo", "get_weather", "convert_currency", "send_email", "ping")


def app_for(
    kit: Kit,
    model: BaseLlm | str,
    *,
    output_schema: type[BaseModel] | None = None,
    **config: Any,
) -> App:
    config.setdefault("tools", TOOLS)
    config.setdefault("skills", ("reporting",))
    agent = AgentConfig(name="guarded", **config)
    return build_app(
        agent,
        kit.principal(),
        model=model,
        output_schema=output_schema,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog),
    )


async def turn(app: App, message: str, *, streaming: bool = False) -> list[Event]:
    mode = StreamingMode.SSE if streaming else StreamingMode.NONE
    return await run_turn(app, message, user_id="alice", run_config=RunConfig(streaming_mode=mode))


def openai_model(monkeypatch: pytest.MonkeyPatch, base_url: str, prefix: str = "") -> BaseLlm:
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return resolve_model(f"{prefix}openai/loopback-model")


def responses(events: list[Event]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (r.name or "", dict(r.response or {})) for e in events for r in e.get_function_responses()
    ]
