"""A web provider call is a client span: provider, status, bytes and results; the key
never, the query only when the operator switches it on (a loopback provider fake)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adk_yuxi.testing import TAVILY, ProviderFakeServer, Reply
from adk_yuxi.tools import ToolSettings
from adk_yuxi.web import bind_web_search
from adk_yuxi.web._spans import QUERY_SWITCH
from tests.web.conftest import settings_for

from .conftest import Spans

KEY = "QZ7XJ4KW9VQ2ZP8XN3RJ6TQ5BY"


@pytest.fixture(scope="module")
def fake() -> Iterator[ProviderFakeServer]:
    with ProviderFakeServer(api_key=KEY) as server:
        yield server


def _search(fake: ProviderFakeServer):  # type: ignore[no-untyped-def]
    settings = settings_for(fake, "tavily", tavily_api_key=KEY)
    return bind_web_search(ToolSettings(settings, environ={})).func  # type: ignore[attr-defined]


async def test_a_search_span_without_the_query_or_the_key(
    fake: ProviderFakeServer, spans: Spans
) -> None:
    result = await _search(fake)(query="my private question")
    assert result["results"]
    call = spans.one("yuxi.web.search")
    attributes = dict(call.attributes or {})
    assert attributes["yuxi.web.provider"] == "tavily"
    assert attributes["http.response.status_code"] == 200
    assert attributes["http.response.body.size"] > 0  # type: ignore[operator]
    assert attributes["yuxi.web.results"] == len(result["results"])
    assert attributes["server.address"] == "127.0.0.1"
    shown = str(attributes)
    assert "private question" not in shown and KEY not in shown
    assert call.end_time is not None and call.start_time is not None  # its duration


async def test_a_failed_call_has_its_code_and_never_the_key(
    fake: ProviderFakeServer, spans: Spans
) -> None:
    fake.queue(TAVILY + "/search", Reply({"detail": {"error": f"bad key {KEY}"}}, 429))
    result = await _search(fake)(query="q")
    assert result["error"]["code"] == "rate_limited"
    call = spans.one("yuxi.web.search")
    attributes = dict(call.attributes or {})
    assert attributes["http.response.status_code"] == 429
    assert attributes["yuxi.web.error"] == "rate_limited"
    assert attributes["error.type"] == "ProviderError"
    assert KEY not in str(attributes)


async def test_the_query_only_when_switched_on(
    fake: ProviderFakeServer, spans: Spans, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(QUERY_SWITCH, "true")
    await _search(fake)(query="what the operator asked to see")
    call = spans.one("yuxi.web.search")
    assert (call.attributes or {})["yuxi.web.query"] == "what the operator asked to see"
