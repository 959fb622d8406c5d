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
        decoded = await self.http.post_json("/search", body)
        if not isinstance(decoded, dict):
            raise self.http.error("malformed_response", "not an object", status=200)
        rows = as_list(decoded.get("results", []))
        if rows is None:
            raise self.http.error("malformed_response", "results is not a list", status=200)
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
        decoded = await self.http.post_json("/extract", body)
        if not isinstance(decoded, dict):
            raise self.http.error("malformed_response", "not an object", status=200)
        rows = as_list(decoded.get("results", []))
        failed = as_list(decoded.get("failed_results", []))
        if rows is None or failed is None:
            raise self.http.error("malformed_response", "results is not a list", status=200)
        for row in rows:
            content = row.get("raw_content")
            if isinstance(content, str):
                final = as_text(row.get("url")) or url
                return FetchedPage(
                    url=url, final_url=final, title="", markdown=content, provider=self.name
                )
        reason = next((as_text(r.get("error")) for r in failed), "") or "no content"
        raise self.http.error("fetch_failed", reason, retryable=False)
