"""Providers that misbehave, over the loopback fakes and through the real tools: an error
inside an HTTP 200, a body that trickles or never ends, a key echoed back near the log
cut, a key that cannot be sent, and codes that keep their meaning."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_yuxi.runtime import AgentConfig, prepare_runtime_context
from adk_yuxi.testing import DEEPSEEK, DOUBAO, TAVILY, ProviderFakeServer, Reply, doubao_error
from adk_yuxi.tools import ToolSettings, ToolUnavailable, register_tool
from adk_yuxi.web import WebSettings, bind_web_fetch, bind_web_search, web_search_tool
from tests.e2e._cli import BIN, run_command
from tests.runtime._kit import Kit

from .conftest import settings_for

# Upper case and digits only, so no run of it occurs by chance in our own words.
LEAKY = "QZ7XJ4KW9VQ2ZP8XN3RJ6TQ5BY"


@pytest.fixture(scope="module")
def leaky() -> Iterator[ProviderFakeServer]:
    with ProviderFakeServer(api_key=LEAKY) as server:
        yield server


async def search(fake: ProviderFakeServer, provider: str, **extra: object) -> dict[str, Any]:
    settings = settings_for(fake, provider, **{f"{provider}_api_key": LEAKY, **extra})
    tool = bind_web_search(ToolSettings(settings, environ={}))
    return await tool.func(query="python asyncio")  # type: ignore[attr-defined,no-any-return]


async def fetch(fake: ProviderFakeServer, provider: str, **extra: object) -> dict[str, Any]:
    settings = settings_for(
        fake, "tavily", fetch_provider=provider, **{f"{provider}_api_key": LEAKY, **extra}
    )
    tool = bind_web_fetch(ToolSettings(settings, environ={}))
    return await tool.func(url="https://example.com/a")  # type: ignore[attr-defined,no-any-return]


def assert_no_key(*texts: str) -> None:
    """No four characters in a row of the key, anywhere."""
    joined = "\n".join(texts)
    pieces = [LEAKY[i : i + 4] for i in range(len(LEAKY) - 3)]
    assert not [p for p in pieces if p in joined], joined[:2000]


# --- Tavily: an error body inside a 200 is an error, never "no results" -------------


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"detail": {"error": "Unauthorized: missing or invalid API key."}}, "auth_failed"),
        (
            {"detail": {"error": "Your request has been blocked due to excessive requests."}},
            "rate_limited",
        ),
        (
            {"detail": {"error": "This request exceeds your plan's set usage limit."}},
            "quota_exhausted",
        ),
        ({"error": {"code": "x", "message": "keyless window exhausted"}}, "provider_error"),
        ({"query": "q", "answer": None}, "malformed_response"),
        ({"results": [], "detail": "something went wrong"}, "provider_error"),
    ],
)
async def test_tavily_error_bodies_inside_200_are_errors(
    leaky: ProviderFakeServer, body: dict[str, Any], code: str
) -> None:
    leaky.queue(TAVILY + "/search", Reply(body))
    leaky.queue(TAVILY + "/extract", Reply(body))
    found = await search(leaky, "tavily")
    assert found["error"]["code"] == code and found["error"]["http_status"] == 200
    assert "results" not in found
    fetched = await fetch(leaky, "tavily")
    assert fetched["error"]["code"] == code and fetched["error"]["tool"] == "web_fetch"


async def test_tavily_200_with_results_still_reads(leaky: ProviderFakeServer) -> None:
    assert len((await search(leaky, "tavily"))["results"]) == 5
    assert "Content of" in (await fetch(leaky, "tavily"))["content"]


# --- the key never survives in the log, whatever offset it is echoed at -------------


@pytest.mark.parametrize("json_body", [False, True], ids=["text", "json"])
async def test_an_echoed_key_is_redacted_before_the_log_is_cut(
    leaky: ProviderFakeServer, caplog: pytest.LogCaptureFixture, json_body: bool
) -> None:
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []
    for offset in range(150, 320, 3):
        page = "x" * offset + f"Bearer {LEAKY} was refused" + "y" * 200
        body = json.dumps({"error": {"message": page}}).encode() if json_body else page.encode()
        leaky.queue(DEEPSEEK + "/v1/tools/search", Reply(raw=body, status=401))
        result = await search(leaky, "deepseek")
        assert result["error"]["code"] == "auth_failed"
        seen.append(json.dumps(result))
    logged = [r.getMessage() for r in caplog.records]
    assert any("***" in line for line in logged)  # the echo was logged, redacted
    assert_no_key(*seen, *logged)


# --- one deadline per call, the body under a byte cap -------------------------------


async def test_a_trickled_answer_ends_at_the_call_deadline(leaky: ProviderFakeServer) -> None:
    body = {"query": "q", "results": [], "response_time": 0.1}
    leaky.queue(TAVILY + "/search", Reply(body, trickle_s=0.2))  # ~9 s for the whole body
    started = time.monotonic()
    result = await search(leaky, "tavily", request_timeout_s=1.0)
    took = time.monotonic() - started
    assert result["error"]["code"] == "timeout"
    assert took < 4.0, f"the call took {took:.1f} s with a 1 s deadline"


@pytest.mark.parametrize("streamed", [False, True], ids=["content-length", "chunked"])
async def test_a_body_over_the_cap_is_refused_without_buffering_it(
    leaky: ProviderFakeServer, streamed: bool
) -> None:
    huge = b'{"results": [' + b'{"url": "https://a.example/"},' * 400_000 + b"{}]}"
    assert len(huge) > 8 * 1024 * 1024
    reply = Reply(raw=huge, chunk_bytes=65536 if streamed else 0)
    leaky.queue(DEEPSEEK + "/v1/tools/search", reply)
    result = await search(leaky, "deepseek")
    assert result["error"]["code"] == "malformed_response"


# --- keys that cannot travel in a header are a configuration error ------------------

BAD_KEYS = ["tvly-abc\u200bdef", "tvly-ключ", "tvly abc", "tvly-\x7f"]


@pytest.mark.parametrize("key", BAD_KEYS)
def test_a_key_that_is_not_header_safe_makes_the_tool_unavailable(key: str, tmp_path: Path) -> None:
    for settings in (
        ToolSettings(environ={"TAVILY_API_KEY": key}),
        ToolSettings(WebSettings.model_construct(), environ={"TAVILY_API_KEY": key}),
    ):
        with pytest.raises(ToolUnavailable, match="TAVILY_API_KEY") as caught:
            bind_web_search(settings)
        assert "header" in caught.value.reason and key not in caught.value.reason
    with pytest.raises(ToolUnavailable, match="tavily_api_key"):
        bind_web_search(ToolSettings(WebSettings.model_construct(tavily_api_key=key)))
    kit = Kit(tmp_path)
    register_tool(web_search_tool(None), registry=kit.registry, binder=bind_web_search)
    context = prepare_runtime_context(
        kit.principal(),
        AgentConfig(name="a", tools=("web_search", "echo")),
        registry=kit.registry,
        settings=ToolSettings(environ={"TAVILY_API_KEY": key}),
    )
    assert "web_search" not in context.tools
    assert any(n == "web_search" and "header" in why for _, n, why in context.omitted)


@pytest.mark.slow
def test_web_check_says_so_in_one_line(leaky: ProviderFakeServer) -> None:
    env = {"TAVILY_BASE_URL": leaky.base_url(TAVILY), "TAVILY_API_KEY": "tvly-ab\u200bc"}
    done = run_command([str(BIN / "yuxi"), "web-check"], **env)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "UnicodeEncodeError" not in done.stderr
    [line] = done.stdout.strip().splitlines()
    answer = json.loads(line)
    assert answer["code"] == "not_configured"
    assert "TAVILY_API_KEY" in answer["message"] and "header" in answer["message"]
    draft = run_command(
        [str(BIN / "yuxi"), "web-check", "--provider", "tavily", "--key-stdin"],
        stdin="tvly-ab\u200bc\n",
        TAVILY_BASE_URL=leaky.base_url(TAVILY),
    )
    assert draft.returncode == 2 and "Traceback" not in draft.stderr
    assert "tavily_api_key" in draft.stderr and "header" in draft.stderr
    assert not leaky.requests or all("\u200b" not in (r[1] or "") for r in leaky.requests)


# --- codes keep their meaning -------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "shown"),
    [
        ("10403", "10403"),
        ("rate_limit_exceeded", "rate_limit_exceeded"),
        ("１０４０３", None),
        ("错误码", None),
        ("ａｂｃ", None),
        ("x" * 40, None),
    ],
)
async def test_doubao_shows_only_short_ascii_codes(
    leaky: ProviderFakeServer, code: str, shown: str | None
) -> None:
    leaky.queue(DOUBAO + "/search_api/web_search", doubao_error(code, 1, "refused"))
    error = (await search(leaky, "doubao"))["error"]
    assert error.get("provider_code") == shown


async def test_deepseek_404_keeps_a_search_code_and_a_fetch_code(
    leaky: ProviderFakeServer,
) -> None:
    from adk_yuxi.testing import deepseek_error

    leaky.queue(DEEPSEEK + "/v1/tools/search", deepseek_error(404, "Not Found"))
    leaky.queue(DEEPSEEK + "/v1/tools/fetch", deepseek_error(404, "failed to fetch URL"))
    assert (await search(leaky, "deepseek"))["error"]["code"] == "provider_error"
    assert (await fetch(leaky, "deepseek"))["error"]["code"] == "fetch_failed"
