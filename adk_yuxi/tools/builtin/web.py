"""web_search and web_fetch: always registered under stable ids, bound into a run only
when the server's settings configure a provider (see `adk_yuxi.web`)."""

from __future__ import annotations

from ...web import bind_web_fetch, bind_web_search, web_fetch_tool, web_search_tool
from .._metadata import ToolExtraMetadata
from .._registry import register_tool

register_tool(
    web_search_tool(None),
    ToolExtraMetadata(display_name="Web search", category="builtin", tags=["web", "search"]),
    binder=bind_web_search,
)
register_tool(
    web_fetch_tool(None),
    ToolExtraMetadata(display_name="Fetch a web page", category="builtin", tags=["web"]),
    binder=bind_web_fetch,
)
