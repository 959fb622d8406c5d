"""Which provider serves web_search and web_fetch, from resolved settings.

One adapter object per provider; choosing one is a table lookup, never a branch per
backend in the tools."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ._deepseek import DeepSeekProvider
from ._direct import DirectFetcher
from ._doubao import DoubaoProvider
from ._errors import WebConfigError
from ._provider import FetchProvider, SearchProvider
from ._settings import ENV_VARS, SEARCH_PROVIDER_ORDER, WebSettings
from ._tavily import TavilyProvider

__all__ = ["FETCH_PROVIDERS", "SEARCH_PROVIDERS", "fetch_provider", "search_provider"]

_Keyed = type[TavilyProvider] | type[DeepSeekProvider] | type[DoubaoProvider]

SEARCH_PROVIDERS: Mapping[str, _Keyed] = {
    "tavily": TavilyProvider,
    "deepseek": DeepSeekProvider,
    "doubao": DoubaoProvider,
}
FETCH_PROVIDERS: tuple[str, ...] = ("direct", "tavily", "deepseek")


def _keyed(
    settings: WebSettings, name: str, timeout_s: float
) -> TavilyProvider | DeepSeekProvider | DoubaoProvider:
    key = settings.key(name)
    if key is None:
        raise WebConfigError(f"{name} is selected but {ENV_VARS[f'{name}_api_key']} is not set")
    return SEARCH_PROVIDERS[name](settings.base_url(name), key, timeout_s=timeout_s)


def search_provider(settings: WebSettings) -> SearchProvider:
    """The explicitly selected provider, else the first with a key in
    `SEARCH_PROVIDER_ORDER`; raises `WebConfigError` saying what is missing."""
    chosen = settings.search_provider
    if chosen is not None:
        if chosen not in SEARCH_PROVIDERS:
            raise WebConfigError(
                f"{ENV_VARS['search_provider']} names an unknown provider"
                f" (known: {', '.join(SEARCH_PROVIDER_ORDER)})"
            )
        return _keyed(settings, chosen, settings.request_timeout_s)
    for name in SEARCH_PROVIDER_ORDER:
        if settings.key(name) is not None:
            return _keyed(settings, name, settings.request_timeout_s)
    keys = ", ".join(ENV_VARS[f"{n}_api_key"] for n in SEARCH_PROVIDER_ORDER)
    raise WebConfigError(f"no search provider is configured (set one of {keys})")


def _tavily_fetch(settings: WebSettings) -> FetchProvider:
    provider = _keyed(settings, "tavily", settings.fetch_timeout_s)
    assert isinstance(provider, TavilyProvider)
    return provider


def _deepseek_fetch(settings: WebSettings) -> FetchProvider:
    provider = _keyed(settings, "deepseek", settings.fetch_timeout_s)
    assert isinstance(provider, DeepSeekProvider)
    return provider


_FETCHERS: Mapping[str, Callable[[WebSettings], FetchProvider]] = {
    "direct": DirectFetcher.from_settings,
    "tavily": _tavily_fetch,
    "deepseek": _deepseek_fetch,
}


def fetch_provider(settings: WebSettings) -> FetchProvider:
    """web_fetch reaches out from the server, so it is on only when an operator names
    its provider (`direct` needs no key)."""
    chosen = settings.fetch_provider
    if chosen is None:
        raise WebConfigError(
            f"web fetching is not enabled (set {ENV_VARS['fetch_provider']} to one of"
            f" {', '.join(FETCH_PROVIDERS)})"
        )
    if chosen not in _FETCHERS:
        raise WebConfigError(
            f"{ENV_VARS['fetch_provider']} names an unknown provider"
            f" (known: {', '.join(FETCH_PROVIDERS)})"
        )
    return _FETCHERS[chosen](settings)
