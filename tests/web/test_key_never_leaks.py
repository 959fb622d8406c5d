"""Every provider error path, for every provider, leaves no part of the key in tool
results, Runner events, reprs or captured logs; and any JSON a provider answers with
decodes to results or one of our typed errors, never an exception."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.sessions import InMemorySessionService
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adk_yuxi.runtime import AgentConfig, Toolbox, build_app
from adk_yuxi.testing import DEEPSEEK, DOUBAO, TAVILY, ProviderFakeServer, Reply, ScriptedLlm, call
from adk_yuxi.tools import ToolSettings, register_tool
from adk_yuxi.web import (
    WebSettings,
    bind_web_fetch,
    bind_web_search,
    resolve_web_settings,
    search_provider,
    web_search_tool,
)
from tests._profiles import examples
from tests.runtime._kit import Kit, run_turn

from .conftest import settings_for

KEY = "QZ7XJ4KW9VQ2ZP8XN3RJ6TQ5BY"
ECHO = f"Bearer {KEY} / api_key={KEY}"
SEARCH = {
    "tavily": TAVILY + "/search",
    "deepseek": DEEPSEEK + "/v1/tools/search",
    "doubao": DOUBAO + "/search_api/web_search",
}
FETCH = {"tavily": TAVILY + "/extract", "deepseek": DEEPSEEK + "/v1/tools/fetch"}


def echoes(provider: str) -> list[Reply]:
    """Every error shape, each echoing the key back (as providers and proxies do)."""
    text = ("x" * 190 + ECHO + "y" * 100).encode()
    shaped = {
        "tavily": {"detail": {"error": ECHO}},
        "deepseek": {"error": {"message": ECHO, "type": ECHO}},
        "doubao": {"ResponseMetadata": {"Error": {"Code": KEY, "CodeN": 1, "Message": ECHO}}},
    }[provider]
    return [
        Reply(shaped, 401),
        Reply(shaped, 429, {"Retry-After": "3"}),
        Reply(shaped, 500),
        Reply(shaped, 404),
        Reply(shaped, 200),
        Reply(raw=text, status=401),
        Reply(raw=text, status=200),
        Reply(raw=text, status=503),
        Reply({"results": ECHO, "Result": ECHO}, 200),
        Reply(shaped, 200, trickle_s=0.5),
    ]


@pytest.fixture(scope="module")
def fake() -> Iterator[ProviderFakeServer]:
    with ProviderFakeServer(api_key=KEY) as server:
        yield server


def leaked(*texts: str) -> list[str]:
    joined = "\n".join(texts)
    return [KEY[i : i + 4] for i in range(len(KEY) - 3) if KEY[i : i + 4] in joined]


def _settings(fake: ProviderFakeServer, provider: str, **extra: Any) -> WebSettings:
    keys = {f"{name}_api_key": KEY for name in SEARCH}
    return settings_for(fake, provider, **{**keys, **extra})


@pytest.mark.parametrize("provider", list(SEARCH))
async def test_no_search_error_path_leaks_the_key(
    fake: ProviderFakeServer, provider: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    settings = _settings(fake, provider, request_timeout_s=1.0)
    tool = bind_web_search(ToolSettings(settings, environ={}))
    seen: list[str] = [repr(settings), repr(tool), str(settings.model_dump())]
    replies = echoes(provider)
    fake.queue(SEARCH[provider], *replies)
    codes = []
    for _ in replies:
        result = await tool.func(query="q")  # type: ignore[attr-defined]
        codes.append(result.get("error", {}).get("code"))
        seen.append(json.dumps(result))
    assert None not in codes, codes
    unreachable = _settings(fake, provider)
    unreachable = unreachable.model_copy(update={f"{provider}_base_url": "http://127.0.0.1:9"})
    down = search_provider(resolve_web_settings(ToolSettings(unreachable, environ={})))
    seen += [repr(down), repr(getattr(down, "http", None))]
    result = await web_search_tool(down).func(query="q")  # type: ignore[attr-defined]
    assert result["error"]["code"] == "unreachable"
    seen.append(json.dumps(result))
    logs = [r.getMessage() for r in caplog.records] + [str(r.__dict__) for r in caplog.records]
    assert not leaked(*seen, *logs)


@pytest.mark.parametrize("provider", list(FETCH))
async def test_no_fetch_error_path_leaks_the_key(
    fake: ProviderFakeServer, provider: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    settings = _settings(fake, "tavily", fetch_provider=provider, fetch_timeout_s=1.0)
    tool = bind_web_fetch(ToolSettings(settings, environ={}))
    replies = echoes(provider)
    fake.queue(FETCH[provider], *replies)
    seen = []
    for _ in replies:
        result = await tool.func(url="https://example.com/")  # type: ignore[attr-defined]
        assert "error" in result, result
        seen.append(json.dumps(result))
    assert not leaked(*seen, *(r.getMessage() for r in caplog.records))


@pytest.mark.parametrize("provider", list(SEARCH))
async def test_no_event_of_a_run_carries_the_key(
    fake: ProviderFakeServer, provider: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    kit = Kit(tmp_path)
    register_tool(web_search_tool(None), registry=kit.registry, binder=bind_web_search)
    fake.queue(SEARCH[provider], *echoes(provider)[:3])
    llm = ScriptedLlm([call("web_search", query="a"), call("web_search", query="b"), "done"])
    app = build_app(
        AgentConfig(name="r", tools=("web_search",)),
        kit.principal(),
        model=llm,
        toolbox=Toolbox(
            registry=kit.registry,
            skills=kit.catalog,
            settings=ToolSettings(_settings(fake, provider), environ={}),
        ),
    )
    events = await run_turn(app, InMemorySessionService(), "s1", "search")
    dumped = [e.model_dump_json() for e in events] + [repr(r) for r in llm.requests]
    assert any("auth_failed" in d for d in dumped)
    assert not leaked(*dumped, *(r.getMessage() for r in caplog.records))


# --- property: any JSON body decodes to results or a typed error --------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
SHAPED = st.fixed_dictionaries(
    {},
    optional={
        "results": st.lists(st.dictionaries(st.sampled_from(
            ["url", "title", "content", "score", "snippet", "rerank_score", "raw_content"]
        ), JSON), max_size=3) | JSON,
        "Result": st.fixed_dictionaries({}, optional={"WebResults": JSON}) | JSON,
        "ResponseMetadata": st.fixed_dictionaries({}, optional={"Error": JSON}) | JSON,
        "detail": JSON,
        "error": JSON,
        "content": JSON,
        "failed_results": JSON,
    },
)  # fmt: skip


@given(body=JSON | SHAPED, provider=st.sampled_from(list(SEARCH)), fetch=st.booleans())
@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
def test_any_json_decodes_to_results_or_a_typed_error(
    fake: ProviderFakeServer, body: Any, provider: str, fetch: bool
) -> None:
    if fetch and provider == "doubao":
        provider = "deepseek"
    paths = FETCH if fetch else SEARCH
    fake.queue(paths[provider], Reply(raw=json.dumps(body).encode(), status=200))
    if fetch:
        settings = _settings(fake, "tavily", fetch_provider=provider)
        tool = bind_web_fetch(ToolSettings(settings, environ={}))
        result = asyncio.run(tool.func(url="https://example.com/"))  # type: ignore[attr-defined]
        assert "error" in result or isinstance(result["content"], str)
    else:
        tool = bind_web_search(ToolSettings(_settings(fake, provider), environ={}))
        result = asyncio.run(tool.func(query="q"))  # type: ignore[attr-defined]
        assert "error" in result or isinstance(result["results"], list)
    json.dumps(result)
