"""The web_search and web_fetch tools: stable ids, strict arguments, bound per settings.

The registered instance of each tool is its declaration for the catalog; a run gets the
instance its binder builds from the run's settings, with the provider inside it, so the
key never passes through the model, the session or the tool's arguments.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Annotated, Any

from google.adk.tools.base_tool import BaseTool
from pydantic import Field, StringConstraints

from ..tools import StrictFunctionTool, ToolSettings, ToolUnavailable
from ._direct import check_url
from ._errors import WebConfigError, WebToolError
from ._provider import FetchProvider, SearchProvider
from ._results import FetchedPage, SearchQuery, TimeRange
from ._select import fetch_provider, search_provider
from ._settings import WebSettings, resolve_web_settings
from ._spans import provider_call

__all__ = [
    "bind_web_fetch",
    "bind_web_search",
    "web_fetch_tool",
    "web_search_tool",
]

Domain = Annotated[
    str,
    StringConstraints(
        min_length=1, max_length=253, pattern=r"^[A-Za-z0-9][A-Za-z0-9-]*(\.[A-Za-z0-9-]+)*\.?$"
    ),
]


class _PageCache:
    """The last few pages one bound tool fetched, for reading on by offset."""

    def __init__(self, size: int = 8, ttl_s: float = 300.0) -> None:
        self._size = size
        self._ttl = ttl_s
        self._pages: OrderedDict[str, tuple[float, FetchedPage]] = OrderedDict()

    def get(self, url: str) -> FetchedPage | None:
        found = self._pages.get(url)
        if found is None or time.monotonic() - found[0] > self._ttl:
            return None
        self._pages.move_to_end(url)
        return found[1]

    def put(self, url: str, page: FetchedPage) -> None:
        self._pages[url] = (time.monotonic(), page)
        self._pages.move_to_end(url)
        while len(self._pages) > self._size:
            self._pages.popitem(last=False)


def _not_configured(tool: str) -> dict[str, Any]:
    return {
        "error": {
            "code": "not_configured",
            "tool": tool,
            "message": "This tool has no provider configured on this server, so it did not run.",
            "retryable": False,
        }
    }


def web_search_tool(provider: SearchProvider | None) -> StrictFunctionTool:
    """The web_search tool on `provider` (None: the catalog's unbound declaration)."""

    async def web_search(
        query: Annotated[str, Field(min_length=1, max_length=400)],
        max_results: Annotated[int, Field(ge=1, le=20)] = 5,
        time_range: TimeRange | None = None,
        include_domains: Annotated[list[Domain], Field(max_length=20)] | None = None,
        exclude_domains: Annotated[list[Domain], Field(max_length=20)] | None = None,
    ) -> dict[str, Any]:
        """Searches the web and returns titles, URLs and snippets of the best results.

        time_range limits results to the last day, week, month or year; include_domains
        and exclude_domains take bare host names such as "python.org".
        """
        if provider is None:
            return _not_configured("web_search")
        if not query.strip():
            return {
                "error": {
                    "code": "invalid_arguments",
                    "tool": "web_search",
                    "message": "The query is blank.",
                }
            }
        request = SearchQuery(
            query=query.strip(),
            max_results=max_results,
            time_range=time_range,
            include_domains=tuple(d.rstrip(".").lower() for d in include_domains or ()),
            exclude_domains=tuple(d.rstrip(".").lower() for d in exclude_domains or ()),
        )
        try:
            with provider_call("search", provider.name, request.query) as current:
                results = await provider.search(request)
                current.set_attribute("yuxi.web.results", len(results.results))
        except WebToolError as error:
            return error.to_response("web_search")
        return results.to_dict()

    return StrictFunctionTool(web_search)


def web_fetch_tool(
    provider: FetchProvider | None, *, max_chars: int = 20_000
) -> StrictFunctionTool:
    """The web_fetch tool on `provider` (None: the catalog's unbound declaration).

    A call with `offset > 0` reads on from the page fetched by an earlier call of this
    run's tool when it is recent (`_PageCache`), instead of downloading and converting
    it again; `offset=0` always fetches afresh."""
    pages = _PageCache()

    async def web_fetch(
        url: Annotated[str, Field(min_length=1, max_length=8192)],
        offset: Annotated[int, Field(ge=0)] = 0,
    ) -> dict[str, Any]:
        """Fetches a web page (or text document) by URL and returns it as Markdown.

        Long pages come back in parts: when `truncated` is true, call again with the
        returned `next_offset` as `offset` to read on.
        """
        if provider is None:
            return _not_configured("web_fetch")
        page = pages.get(url) if offset > 0 else None
        if page is None:
            try:
                check_url(url)
                with provider_call("fetch", provider.name, url):
                    page = await provider.fetch(url)
            except WebToolError as error:
                return error.to_response("web_fetch")
            pages.put(url, page)
        return page.window(offset, max_chars)

    return StrictFunctionTool(web_fetch)


def _settings(tool_id: str, settings: ToolSettings) -> WebSettings:
    try:
        return resolve_web_settings(settings)
    except WebConfigError as exc:
        raise ToolUnavailable(tool_id, str(exc)) from None


def bind_web_search(settings: ToolSettings) -> BaseTool:
    web = _settings("web_search", settings)
    try:
        return web_search_tool(search_provider(web))
    except WebConfigError as exc:
        raise ToolUnavailable("web_search", str(exc)) from None


def bind_web_fetch(settings: ToolSettings) -> BaseTool:
    web = _settings("web_fetch", settings)
    try:
        return web_fetch_tool(fetch_provider(web), max_chars=web.fetch_max_chars)
    except WebConfigError as exc:
        raise ToolUnavailable("web_fetch", str(exc)) from None
