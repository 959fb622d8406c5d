"""web_fetch through each provider: the direct fetcher on loopback (test allow-list),
Tavily extract and DeepSeek fetch on their fakes; the reading window and its offset."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adk_yuxi.testing import DEEPSEEK, TAVILY, PageServer, ProviderFakeServer, Reply, deepseek_error
from adk_yuxi.tools import ToolSettings
from adk_yuxi.web import FetchedPage, WebSettings, bind_web_fetch, check_web_settings

from .conftest import KEY, settings_for

LONG = (
    "<html><head><title>Long</title></head><body>"
    + "".join(f"<p>Paragraph {i} of the long page.</p>" for i in range(400))
    + "</body></html>"
).encode()


@pytest.fixture(scope="module")
def pages() -> Iterator[PageServer]:
    with PageServer({"/long": ("text/html", LONG)}) as server:
        yield server


async def call_fetch(settings: WebSettings, tool: object = None, **args: object) -> dict:
    tool = tool or bind_web_fetch(ToolSettings(settings, environ={}))
    return await tool.func(**args)  # type: ignore[attr-defined,no-any-return]


async def test_direct_fetch_reads_on_by_offset(pages: PageServer) -> None:
    settings = WebSettings(
        fetch_provider="direct", fetch_max_chars=2000, unsafe_fetch_allow_networks=("127.0.0.1/32",)
    )
    tool = bind_web_fetch(ToolSettings(settings, environ={}))
    hits = pages.hits.get("/long", 0)
    first = await call_fetch(settings, tool, url=pages.url("/long"))
    assert first["provider"] == "direct" and first["title"] == "Long"
    assert first["truncated"] is True and first["next_offset"] == 2000
    assert "call web_fetch again with offset=2000" in first["content"]
    seen = first["content"].split("\n\n[…")[0]
    second = await call_fetch(settings, tool, url=pages.url("/long"), offset=first["next_offset"])
    assert second["offset"] == 2000
    assert pages.hits["/long"] == hits + 1  # read on from the page already fetched
    assert not second["content"].startswith(seen[:50])
    last = await call_fetch(settings, url=pages.url("/long"), offset=first["total_chars"] - 10)
    assert last["truncated"] is False and "next_offset" not in last


async def test_direct_fetch_of_loopback_without_the_allow_list_is_refused(
    pages: PageServer,
) -> None:
    result = await call_fetch(WebSettings(fetch_provider="direct"), url=pages.url("/long"))
    assert result["error"]["code"] == "url_not_allowed"
    assert result["error"]["tool"] == "web_fetch"


async def test_tavily_extract_and_deepseek_fetch() -> None:
    with ProviderFakeServer(api_key=KEY) as fake:
        tavily = settings_for(fake, "tavily", fetch_provider="tavily")
        page = await call_fetch(tavily, url="https://example.com/a")
        assert (
            page["provider"] == "tavily" and "Content of https://example.com/a" in page["content"]
        )
        fake.queue(
            TAVILY + "/extract",
            Reply(
                {
                    "results": [],
                    "failed_results": [
                        {"url": "https://example.com/b", "error": "Failed to retrieve content"}
                    ],
                }
            ),
        )
        failed = await call_fetch(tavily, url="https://example.com/b")
        assert failed["error"]["code"] == "fetch_failed"
        assert "Failed to retrieve" not in str(failed)

        deepseek = settings_for(fake, "deepseek", fetch_provider="deepseek")
        page = await call_fetch(deepseek, url="https://example.com/c")
        assert page["provider"] == "deepseek" and page["title"] == "Fetched"
        fake.queue(DEEPSEEK + "/v1/tools/fetch", deepseek_error(404, "failed to fetch URL"))
        failed = await call_fetch(deepseek, url="https://example.com/d")
        assert failed["error"]["code"] == "fetch_failed"
        fake.queue(DEEPSEEK + "/v1/tools/fetch", deepseek_error(402, "Insufficient Balance"))
        broke = await call_fetch(deepseek, url="https://example.com/e")
        assert broke["error"]["code"] == "quota_exhausted"
        before = len(fake.requests)
        refused = await call_fetch(deepseek, url="file:///etc/passwd")
        assert refused["error"]["code"] == "url_not_allowed" and len(fake.requests) == before


async def test_check_web_settings_tries_a_draft_without_saving() -> None:
    with ProviderFakeServer(api_key=KEY) as fake:
        good = await check_web_settings(settings_for(fake, "deepseek"), environ={})
        assert good.ok and good.provider == "deepseek"
        bad = await check_web_settings(
            settings_for(fake, "tavily", tavily_api_key="draft-wrong"), environ={}
        )
        assert not bad.ok and bad.code == "auth_failed" and "draft-wrong" not in str(bad.to_dict())
        missing = await check_web_settings(WebSettings(), environ={})
        assert not missing.ok and missing.code == "not_configured"


def test_window_marks_truncation() -> None:
    page = FetchedPage("u", "u", "t", "abcdefghij", "direct")
    assert page.window(0, 4)["next_offset"] == 4
    assert page.window(8, 4) == {**page.window(8, 4), "content": "ij", "truncated": False}
    assert page.window(99, 4)["content"] == "" and page.window(99, 4)["offset"] == 10
