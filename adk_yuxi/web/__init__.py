"""Web tools: web_search over Tavily, DeepSeek or Doubao, and web_fetch directly (behind
an SSRF boundary) or through Tavily or DeepSeek; bound into a run only when configured.

Settings come from a `WebSettings` a host passes in `ToolSettings`, over environment
variables (`ENV_VARS`); see ``docs/web-and-documents.md`` for the precedence and the provider order.
"""

from ._check import ConfigCheck, check_web_settings
from ._deepseek import DeepSeekProvider
from ._direct import DirectFetcher, check_url
from ._doubao import DoubaoProvider
from ._errors import FetchError, ProviderError, WebConfigError, WebError, WebToolError
from ._results import FetchedPage, SearchHit, SearchQuery, SearchResults
from ._select import FETCH_PROVIDERS, SEARCH_PROVIDERS, fetch_provider, search_provider
from ._settings import ENV_VARS, SEARCH_PROVIDER_ORDER, WebSettings, resolve_web_settings
from ._ssrf import AddressPolicy, AddressRefused, GuardedNetworkBackend, StaticResolver
from ._tavily import TavilyProvider
from ._tools import bind_web_fetch, bind_web_search, web_fetch_tool, web_search_tool

__all__ = [
    "ENV_VARS",
    "FETCH_PROVIDERS",
    "SEARCH_PROVIDERS",
    "SEARCH_PROVIDER_ORDER",
    "AddressPolicy",
    "AddressRefused",
    "ConfigCheck",
    "DeepSeekProvider",
    "DirectFetcher",
    "DoubaoProvider",
    "FetchError",
    "FetchedPage",
    "GuardedNetworkBackend",
    "ProviderError",
    "SearchHit",
    "SearchQuery",
    "SearchResults",
    "StaticResolver",
    "TavilyProvider",
    "WebConfigError",
    "WebError",
    "WebSettings",
    "WebToolError",
    "bind_web_fetch",
    "bind_web_search",
    "check_url",
    "check_web_settings",
    "fetch_provider",
    "resolve_web_settings",
    "search_provider",
    "web_fetch_tool",
    "web_search_tool",
]
