"""Tavily: `/search` for web_search and `/extract` for web_fetch."""

from __future__ import annotations

import time
from typing import Any

from ._http import ProviderHttp, error_text
from ._provider import as_list, as_text, clamp_score
from ._results import FetchedPage, SearchHit, SearchQuery, SearchResults

__all__ = ["TavilyProvider"]

SCORE_MAX = 1.0
MAX_RESULTS = 20
MAX_INCLUDE = 300
MAX_EXCLUDE = 150


def _read_error(body: Any) -> str | None:
    return error_text(body, ("detail", "error"), ("detail",), ("error", "message"), ("error",))


# What Tavily's documented error messages say, for an error that arrives inside a 200.
_MESSAGE_CODES = (
    ("unauthorized", "auth_failed"),
    ("invalid api key", "auth_failed"),
    ("excessive requests", "rate_limited"),
    ("usage limit", "quota_exhausted"),
    ("pay-as-you-go limit", "quota_exhausted"),
)


def _body_error(decoded: Any) -> tuple[str, str] | None:
    """`(code, detail)` when a 200 body is an error (`detail` / `error`, or no `results`
    list): such a body is never an empty result."""
    if not isinstance(decoded, dict):
        return "malformed_response", "not an object"
    if "detail" not in decoded and "error" not in decoded:
        if isinstance(decoded.get("results"), list):
            return None
        return "malformed_response", "no results list"
    message = _read_error(decoded) or "an error body"
    lowered = message.lower()
    code = next((c for words, c in _MESSAGE_CODES if words in lowered), "provider_error")
    return code, f"HTTP 200: {message}"


class TavilyProvider:
    name = "tavily"

    def __init__(self, base_url: str, key: str, *, timeout_s: float) -> None:
        self.http = ProviderHttp(
            self.name,
            base_url,
            key,
            timeout_s=timeout_s,
            read_error=_read_error,
            headers={"X-Client-Source": "adk-yuxi"},
        )
        self._timeout_s = timeout_s

    def _checked(self, decoded: Any) -> dict[str, Any]:
        problem = _body_error(decoded)
        if problem is not None:
            code, detail = problem
            raise self.http.error(code, detail, status=200)
        result: dict[str, Any] = decoded
        return result

    async def search(self, query: SearchQuery) -> SearchResults:
        body: dict[str, Any] = {
            "query": query.query,
            "max_results": max(1, min(query.max_results, MAX_RESULTS)),
            "search_depth": "basic",
            "topic": "general",
            "include_answer": False,
            "include_raw_content": False,
        }
        if query.time_range:
            body["time_range"] = query.time_range
        if query.include_domains:
            body["include_domains"] = list(query.include_domains[:MAX_INCLUDE])
        if query.exclude_domains:
            body["exclude_domains"] = list(query.exclude_domains[:MAX_EXCLUDE])
        started = time.perf_counter()
        decoded = self._checked(await self.http.post_json("/search", body))
        rows = as_list(decoded["results"]) or []
        hits = tuple(
            SearchHit(
                title=as_text(row.get("title")),
                url=as_text(row.get("url")),
                snippet=as_text(row.get("content")),
                score=clamp_score(row.get("score"), SCORE_MAX),
                score_max=SCORE_MAX,
                published_at=as_text(row.get("published_date")) or None,
            )
            for row in rows
            if as_text(row.get("url"))
        )
        return SearchResults(
            query=query.query,
            provider=self.name,
            results=hits[: query.max_results],
            response_time_s=time.perf_counter() - started,
        )

    async def fetch(self, url: str) -> FetchedPage:
        body = {
            "urls": [url],
            "format": "markdown",
            "extract_depth": "basic",
            "timeout": max(1.0, min(self._timeout_s, 60.0)),
        }
        decoded = self._checked(await self.http.post_json("/extract", body))
        rows = as_list(decoded["results"]) or []
        failed = as_list(decoded.get("failed_results", []))
        if failed is None:
            raise self.http.error("malformed_response", "failed_results is not a list", status=200)
        for row in rows:
            content = row.get("raw_content")
            if isinstance(content, str):
                final = as_text(row.get("url")) or url
                return FetchedPage(
                    url=url, final_url=final, title="", markdown=content, provider=self.name
                )
        reason = next((as_text(r.get("error")) for r in failed), "") or "no content"
        raise self.http.error("fetch_failed", reason, retryable=False)
