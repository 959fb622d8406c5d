"""DeepSeek's REST tools: `/v1/tools/search` for web_search, `/v1/tools/fetch` for
web_fetch (plain JSON endpoints, not model turns)."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from ._http import ProviderHttp, error_text
from ._provider import as_list, as_text, clamp_score
from ._results import FetchedPage, SearchHit, SearchQuery, SearchResults

__all__ = ["DeepSeekProvider"]

SCORE_MAX = 3.0
MAX_QUERY = 128
MAX_URL = 8192
_DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}


def _read_error(body: Any) -> str | None:
    return error_text(body, ("error", "message"), ("message",), ("error",))


def compose_query(query: SearchQuery, today: dt.date) -> str:
    """The query with DeepSeek's operators for domains and time; raises ValueError when
    it exceeds the 128 characters the API accepts (nothing is silently dropped)."""
    parts = [query.query.strip()]
    parts += [f"site:{d}" for d in query.include_domains]
    parts += [f"-site:{d}" for d in query.exclude_domains]
    if query.time_range:
        parts.append(f"after:{(today - dt.timedelta(days=_DAYS[query.time_range])).isoformat()}")
    text = " ".join(parts)
    if len(text) > MAX_QUERY:
        raise ValueError(f"{len(text)} characters with its filters; DeepSeek accepts {MAX_QUERY}")
    return text


class DeepSeekProvider:
    name = "deepseek"

    def __init__(self, base_url: str, key: str, *, timeout_s: float) -> None:
        self.http = ProviderHttp(
            self.name,
            base_url,
            key,
            timeout_s=timeout_s,
            read_error=_read_error,
        )

    async def search(self, query: SearchQuery) -> SearchResults:
        try:
            text = compose_query(query, dt.date.today())
        except ValueError as exc:
            raise self.http.error(
                "invalid_query",
                str(exc),
                retryable=False,
                hint=f"DeepSeek accepts {MAX_QUERY} characters including the domain and"
                " time filters; shorten the query or drop filters.",
            ) from None
        body = {"query": text, "count": max(1, min(query.max_results, 50))}
        started = time.perf_counter()
        decoded = await self.http.post_json("/v1/tools/search", body)
        if not isinstance(decoded, dict):
            raise self.http.error("malformed_response", "not an object", status=200)
        rows = as_list(decoded.get("results"))
        if rows is None:
            raise self.http.error("malformed_response", "results is not a list", status=200)
        hits = tuple(
            SearchHit(
                title=as_text(row.get("title")),
                url=as_text(row.get("url")),
                snippet=as_text(row.get("snippet")),
                content=as_text(row.get("summary")) or as_text(row.get("content")) or None,
                published_at=as_text(row.get("date")) or None,
                site_name=as_text(row.get("site_name")) or None,
                score=clamp_score(row.get("rerank_score"), SCORE_MAX),
                score_max=SCORE_MAX,
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
        if len(url) > MAX_URL:
            raise self.http.error("invalid_query", "URL too long", retryable=False)
        decoded = await self.http.post_json(
            "/v1/tools/fetch", {"url": url}, not_found="fetch_failed"
        )
        if not isinstance(decoded, dict) or not isinstance(decoded.get("content"), str):
            raise self.http.error("malformed_response", "no content string", status=200)
        return FetchedPage(
            url=url,
            final_url=url,
            title=as_text(decoded.get("title")),
            markdown=decoded["content"],
            provider=self.name,
        )
