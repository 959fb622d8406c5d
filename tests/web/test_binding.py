"""web_search and web_fetch are bound into a run only when configured: through the real
Runner, a scripted model and the provider fakes on loopback."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from google.adk.sessions import InMemorySessionService

from adk_yuxi.runtime import AgentConfig, Toolbox, build_app, prepare_runtime_context
from adk_yuxi.testing import TAVILY, ProviderFakeServer, ScriptedLlm, call
from adk_yuxi.tools import ToolSettings, register_tool
from adk_yuxi.web import (
    WebSettings,
    bind_web_fetch,
    bind_web_search,
    web_fetch_tool,
    web_search_tool,
)

from ..runtime._kit import Kit, function_responses, run_turn
from .conftest import KEY

CONFIG = AgentConfig(name="researcher", tools=None, skills=("research",))
GATED = AgentConfig(name="researcher", tools=("echo",), skills=("research",))


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    kit = Kit(tmp_path)
    register_tool(web_search_tool(None), registry=kit.registry, binder=bind_web_search)
    register_tool(web_fetch_tool(None), registry=kit.registry, binder=bind_web_fetch)
    kit.skill("research", body="Search first.", tool_dependencies=["web_search"])
    kit.load_skills()
    return kit


def test_unconfigured_tools_and_their_skills_are_left_out_with_one_record(
    kit: Kit, caplog: pytest.LogCaptureFixture
) -> None:
    """web_search is asked for (the research skill needs it): a warning at each build.
    web_fetch nobody asked for: at most one INFO record per process, never a warning."""
    caplog.set_level(logging.INFO, logger="adk_yuxi.tools.availability")
    for _ in range(3):
        context = prepare_runtime_context(
            kit.principal(),
            CONFIG,
            registry=kit.registry,
            skills=kit.catalog,
            settings=ToolSettings(environ={}),
        )
    assert "web_search" not in context.tools and "web_fetch" not in context.tools
    assert "echo" in context.tools
    assert context.skills == ()
    records = [r for r in caplog.records if getattr(r, "component", None)]
    search = [r for r in records if r.component == "web_search"]  # type: ignore[attr-defined]
    fetch = [r for r in records if r.component == "web_fetch"]  # type: ignore[attr-defined]
    assert [r.levelno for r in search] == [logging.WARNING] * 3
    assert len(fetch) <= 1 and all(r.levelno == logging.INFO for r in fetch)
    for record in records:
        assert record.available is False  # type: ignore[attr-defined]
        assert record.reason  # type: ignore[attr-defined]
    assert "TAVILY_API_KEY" in search[0].reason  # type: ignore[attr-defined]
    assert ("skill", "research", "dependencies out of reach: ['web_search']") in context.omitted
    assert any(name == "web_fetch" for _, name, _ in context.omitted)


def test_invalid_configuration_is_unavailable_not_a_crash(kit: Kit) -> None:
    environ = {
        "TAVILY_API_KEY": "k",
        "YUXI_WEB_TIMEOUT_S": "soon",
        "YUXI_WEB_FETCH_PROVIDER": "ftp",
    }
    context = prepare_runtime_context(
        kit.principal(),
        CONFIG,
        registry=kit.registry,
        skills=kit.catalog,
        settings=ToolSettings(environ=environ),
    )
    reasons = {name: why for kind, name, why in context.omitted if kind == "tool"}
    assert "YUXI_WEB_TIMEOUT_S" in reasons["web_search"]
    assert "soon" not in reasons["web_search"]
    assert "web_fetch" in reasons


def test_host_settings_win_over_the_environment(kit: Kit) -> None:
    environ = {"YUXI_WEB_SEARCH_PROVIDER": "deepseek", "DEEPSEEK_API_KEY": "env-key"}
    host = WebSettings(search_provider="tavily", tavily_api_key="host-key")
    context = prepare_runtime_context(
        kit.principal(),
        CONFIG,
        registry=kit.registry,
        skills=kit.catalog,
        settings=ToolSettings(host, environ=environ),
    )
    # The research skill depends on web_search, so with tools=None it is reachable only
    # through that skill; it is bound all the same.
    assert "web_search" not in context.tools and "research" in context.skills
    assert context.tool("web_search") is not kit.registry.get("web_search")
    # Without the host's choice the environment's provider serves.
    context = prepare_runtime_context(
        kit.principal(),
        CONFIG,
        registry=kit.registry,
        skills=kit.catalog,
        settings=ToolSettings(environ=environ),
    )
    assert "research" in context.skills and context.tool("web_search") is not None


@pytest.mark.parametrize("configured", [False, True])
async def test_the_model_sees_web_tools_only_when_configured(kit: Kit, configured: bool) -> None:
    # No skill claims them here, so configuration alone decides whether they are shown.
    config = AgentConfig(name="researcher", tools=None, skills=())
    host = WebSettings(tavily_api_key=KEY, fetch_provider="direct")
    llm = ScriptedLlm([call("web_search", query="x", max_results=99), "done"])
    app = build_app(
        config,
        kit.principal(),
        model=llm,
        toolbox=Toolbox(
            registry=kit.registry,
            skills=kit.catalog,
            settings=ToolSettings(host, environ={}) if configured else ToolSettings(environ={}),
        ),
    )
    events = await run_turn(app, InMemorySessionService(), "s1", "search")
    shown = llm.tool_names(0)
    assert ("web_search" in shown, "web_fetch" in shown) == (configured, configured)
    assert "echo" in shown
    result = function_responses(events)["web_search"][0]
    # Unconfigured: refused by the runtime. Configured: reached the tool's own checks.
    assert result["error"]["code"] == ("invalid_arguments" if configured else "tool_not_available")


async def test_a_configured_run_searches_through_the_provider(kit: Kit) -> None:
    with ProviderFakeServer(api_key=KEY) as fake:
        host = WebSettings(tavily_api_key=KEY, tavily_base_url=fake.base_url(TAVILY))
        llm = ScriptedLlm(
            [
                call("load_skill", skill_name="research"),
                call("web_search", query="adk plugins", max_results=2),
                call("web_search", query="adk", max_results=99),
                "done",
            ]
        )
        app = build_app(
            GATED,
            kit.principal(),
            model=llm,
            toolbox=Toolbox(
                registry=kit.registry, skills=kit.catalog, settings=ToolSettings(host, environ={})
            ),
        )
        events = await run_turn(app, InMemorySessionService(), "s1", "search")
    assert "web_search" not in llm.tool_names(0)  # gated behind the research skill
    assert "web_fetch" not in llm.tool_names(0)
    assert "web_search" in llm.tool_names(1)
    assert "web_fetch" not in llm.tool_names(1)  # fetching was not enabled
    found, refused = function_responses(events)["web_search"]
    assert found["provider"] == "tavily" and len(found["results"]) == 2
    assert found["results"][0]["score_max"] == 1.0
    assert refused["error"]["code"] == "invalid_arguments"
    assert len([r for r in fake.requests if r[0] == TAVILY + "/search"]) == 1
    assert KEY not in str(llm.requests)


def test_with_fetching_enabled_the_model_sees_web_fetch(kit: Kit) -> None:
    host = WebSettings(fetch_provider="direct")
    context = prepare_runtime_context(
        kit.principal(),
        CONFIG,
        registry=kit.registry,
        skills=kit.catalog,
        settings=ToolSettings(host, environ={}),
    )
    assert "web_fetch" in context.tools and "web_search" not in context.tools
    assert context.tool("web_fetch") is not kit.registry.get("web_fetch")


async def test_a_provider_error_is_a_tool_result_and_the_run_goes_on(kit: Kit) -> None:
    from adk_yuxi.testing import tavily_error

    with ProviderFakeServer(api_key=KEY) as fake:
        fake.queue(TAVILY + "/search", tavily_error(429, "blocked", {"Retry-After": "3"}))
        host = WebSettings(tavily_api_key=KEY, tavily_base_url=fake.base_url(TAVILY))
        llm = ScriptedLlm([call("web_search", query="adk"), "I could not search just now."])
        app = build_app(
            AgentConfig(name="researcher", tools=("web_search",), skills=()),
            kit.principal(),
            model=llm,
            toolbox=Toolbox(
                registry=kit.registry, skills=kit.catalog, settings=ToolSettings(host, environ={})
            ),
        )
        events = await run_turn(app, InMemorySessionService(), "s1", "search")
    (result,) = function_responses(events)["web_search"]
    assert result["error"]["code"] == "rate_limited"
    assert result["error"]["retry_after_s"] == 3.0 and result["error"]["retryable"] is True
    assert len(llm.requests) == 2  # the model was asked again, with the error in hand
    assert "blocked" not in str(llm.requests[1])
