"""Every web_search adapter against its provider's loopback fake: the same cases, the
same normalised result and the same structured errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from adk_yuxi.testing import (
    DEEPSEEK,
    DOUBAO,
    TAVILY,
    ProviderFakeServer,
    Reply,
    deepseek_error,
    doubao_error,
    tavily_error,
)
from adk_yuxi.tools import ToolSettings
from adk_yuxi.web import SearchQuery, resolve_web_settings, search_provider

from .conftest import KEY, settings_for

PATHS = {
    "tavily": TAVILY + "/search",
    "deepseek": DEEPSEEK + "/v1/tools/search",
    "doubao": DOUBAO + "/search_api/web_search",
}
SCORE_MAX = {"tavily": 1.0, "deepseek": 3.0, "doubao": None}
EMPTY = {
    "tavily": Reply({"query": "q", "results": [], "response_time": 0.1}),
    "deepseek": Reply({"results": []}),
    "doubao": Reply({"ResponseMetadata": {"RequestId": "r"}, "Result": {"WebResults": []}}),
}
RATE_LIMITED = {
    "tavily": tavily_error(429, "Your request has been blocked", {"Retry-After": "7"}),
    "deepseek": deepseek_error(429, "Rate limit reached", "rate_limit", {"Retry-After": "7"}),
    "doubao": Reply(
        {"ResponseMetadata": {"Error": {"Code": "rate_limit_exceeded", "CodeN": 700429}}},
        429,
        {"Retry-After": "7"},
    ),
}
QUOTA = {
    "tavily": tavily_error(432, "This request exceeds your plan's set usage limit."),
    "deepseek": deepseek_error(402, "Insufficient Balance"),
    "doubao": doubao_error("10403", 10403, "account has no remaining quota"),
}
SERVER_ERROR = {
    "tavily": tavily_error(500, "Internal Server Error"),
    "deepseek": deepseek_error(503, "Server overloaded", "server_error"),
    "doubao": doubao_error("10500", 10500, "internal error"),
}
PROVIDERS = list(PATHS)


async def search(fake: ProviderFakeServer, name: str, query: str = "python asyncio", **kw: Any):
    provider = search_provider(
        resolve_web_settings(ToolSettings(settings_for(fake, name, **kw), environ={}))
    )
    return await provider.search(SearchQuery(query=query, max_results=3))


def assert_no_leak(payload: Any) -> None:
    text = json.dumps(payload, ensure_ascii=False)
    assert KEY not in text
    assert "Bearer" not in text


@pytest.mark.parametrize("name", PROVIDERS)
async def test_success_is_normalised(fake: ProviderFakeServer, name: str) -> None:
    result = (await search(fake, name)).to_dict()
    assert result["provider"] == name
    assert result["query"] == "python asyncio"
    assert len(result["results"]) == 3
    for hit in result["results"]:
        assert hit["url"].startswith("https://")
        assert hit["title"] and hit["snippet"]
        assert hit["score_max"] == SCORE_MAX[name]
        if hit["score_max"] is not None:
            assert 0.0 <= hit["score"] <= hit["score_max"]
    assert result["response_time_s"] >= 0
    path, authorization, _ = fake.requests[-1]
    assert path == PATHS[name] and authorization == f"Bearer {KEY}"


@pytest.mark.parametrize("name", PROVIDERS)
async def test_empty_results_are_an_empty_list(fake: ProviderFakeServer, name: str) -> None:
    fake.queue(PATHS[name], EMPTY[name])
    result = await search(fake, name)
    assert result.results == ()


@pytest.mark.parametrize("name", PROVIDERS)
async def test_bad_key_is_auth_failed_and_not_retryable(
    fake: ProviderFakeServer, name: str
) -> None:
    from adk_yuxi.web import ProviderError

    with pytest.raises(ProviderError) as caught:
        await search(fake, name, **{f"{name}_api_key": "wrong-key"})
    error = caught.value
    assert error.code == "auth_failed" and not error.retryable
    response = error.to_response("web_search")
    assert_no_leak(response)
    assert "wrong-key" not in json.dumps(response)


@pytest.mark.parametrize("name", PROVIDERS)
async def test_rate_limit_carries_retry_after(fake: ProviderFakeServer, name: str) -> None:
    from adk_yuxi.web import ProviderError

    fake.queue(PATHS[name], RATE_LIMITED[name])
    with pytest.raises(ProviderError) as caught:
        await search(fake, name)
    assert caught.value.code == "rate_limited"
    assert caught.value.retryable
    assert caught.value.retry_after_s == 7.0
    assert caught.value.to_response("web_search")["error"]["retry_after_s"] == 7.0


@pytest.mark.parametrize("name", PROVIDERS)
async def test_quota_is_not_retryable(fake: ProviderFakeServer, name: str) -> None:
    from adk_yuxi.web import ProviderError

    fake.queue(PATHS[name], QUOTA[name])
    with pytest.raises(ProviderError) as caught:
        await search(fake, name)
    # Doubao reports exhausted accounts as a permission error (10403): not retryable either.
    assert caught.value.code in ("quota_exhausted", "auth_failed")
    assert not caught.value.retryable


@pytest.mark.parametrize("name", PROVIDERS)
async def test_server_errors_are_retryable(fake: ProviderFakeServer, name: str) -> None:
    from adk_yuxi.web import ProviderError

    fake.queue(PATHS[name], SERVER_ERROR[name])
    with pytest.raises(ProviderError) as caught:
        await search(fake, name)
    assert caught.value.code == "provider_error" and caught.value.retryable
    assert "internal" not in json.dumps(caught.value.to_response("web_search")).lower()


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize(
    "reply",
    [
        Reply(raw=b"<html>gateway</html>"),
        Reply(raw=b'{"results": '),
        Reply(["not", "an", "object"]),
    ],
    ids=["html", "truncated-json", "array"],
)
async def test_malformed_bodies(fake: ProviderFakeServer, name: str, reply: Reply) -> None:
    from adk_yuxi.web import ProviderError

    fake.queue(PATHS[name], reply)
    with pytest.raises(ProviderError) as caught:
        await search(fake, name)
    assert caught.value.code == "malformed_response"


@pytest.mark.parametrize("name", PROVIDERS)
async def test_results_of_the_wrong_type_are_malformed(fake: ProviderFakeServer, name: str) -> None:
    from adk_yuxi.web import ProviderError

    bodies = {
        "tavily": {"results": "nope"},
        "deepseek": {"results": {"a": 1}},
        "doubao": {"ResponseMetadata": {}, "Result": {"WebResults": 3}},
    }
    fake.queue(PATHS[name], Reply(bodies[name]))
    with pytest.raises(ProviderError) as caught:
        await search(fake, name)
    assert caught.value.code == "malformed_response"


@pytest.mark.parametrize("name", PROVIDERS)
async def test_timeout(fake: ProviderFakeServer, name: str) -> None:
    from adk_yuxi.web import ProviderError

    fake.queue(PATHS[name], Reply(EMPTY[name].body, delay_s=3.0))
    with pytest.raises(ProviderError) as caught:
        await search(fake, name, request_timeout_s=0.3)
    assert caught.value.code == "timeout" and caught.value.retryable


async def test_doubao_error_inside_http_200(fake: ProviderFakeServer) -> None:
    from adk_yuxi.web import ProviderError

    fake.queue(PATHS["doubao"], doubao_error("10400", 10400, "bad parameter"))
    with pytest.raises(ProviderError) as caught:
        await search(fake, "doubao")
    assert caught.value.code == "bad_request"
    assert caught.value.status == 200
    assert caught.value.to_response("web_search")["error"]["provider_code"] == "10400"


async def test_tavily_maps_arguments_within_its_limits(fake: ProviderFakeServer) -> None:
    provider = search_provider(
        resolve_web_settings(ToolSettings(settings_for(fake, "tavily"), environ={}))
    )
    await provider.search(
        SearchQuery("q", 20, "week", include_domains=("python.org",), exclude_domains=("x.com",))
    )
    body = fake.requests[-1][2]
    assert body["max_results"] == 20 and body["time_range"] == "week"
    assert body["include_domains"] == ["python.org"] and body["exclude_domains"] == ["x.com"]


async def test_doubao_truncates_sites_to_five(fake: ProviderFakeServer) -> None:
    provider = search_provider(
        resolve_web_settings(ToolSettings(settings_for(fake, "doubao"), environ={}))
    )
    domains = tuple(f"d{i}.com" for i in range(8))
    await provider.search(SearchQuery("q" * 150, 5, "day", include_domains=domains))
    body = fake.requests[-1][2]
    assert body["Filter"]["Sites"] == "|".join(domains[:5])
    assert body["TimeRange"] == "OneDay" and len(body["Query"]) == 100


async def test_deepseek_puts_filters_in_the_query_and_refuses_overlong(
    fake: ProviderFakeServer,
) -> None:
    from adk_yuxi.web import ProviderError

    provider = search_provider(
        resolve_web_settings(ToolSettings(settings_for(fake, "deepseek"), environ={}))
    )
    await provider.search(SearchQuery("asyncio", 5, "month", ("python.org",), ("x.com",)))
    sent = fake.requests[-1][2]["query"]
    assert sent.startswith("asyncio site:python.org -site:x.com after:")
    before = len(fake.requests)
    with pytest.raises(ProviderError) as caught:
        await provider.search(SearchQuery("q" * 120, 5, include_domains=("python.org",)))
    assert caught.value.code == "invalid_query"
    assert "128" in caught.value.message
    assert len(fake.requests) == before  # refused before anything was sent
