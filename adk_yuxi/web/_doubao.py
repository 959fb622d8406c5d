"""Doubao / Volcano Engine 融合信息搜索 (`/search_api/web_search`, API-key mode).

Its gateway may report an error inside an HTTP 200 body (`ResponseMetadata.Error`), so
both the status and the envelope are checked."""

from __future__ import annotations

import time
from typing import Any

from ._http import ProviderHttp, error_text
from ._provider import as_list, as_text, clamp_score
from ._results import SearchHit, SearchQuery, SearchResults

__all__ = ["DoubaoProvider"]

MAX_QUERY = 100
MAX_COUNT = 50
MAX_SITES = 5
MAX_BLOCKED = 5
_TIME_RANGE = {"day": "OneDay", "week": "OneWeek", "month": "OneMonth", "year": "OneYear"}
_CODES = {
    "10400": "bad_request",
    "10402": "bad_request",
    "10403": "auth_failed",
    "100013": "auth_failed",
    "10500": "provider_error",
    "rate_limit_exceeded": "rate_limited",
    "700429": "rate_limited",
}


def _read_error(body: Any) -> str | None:
    return error_text(body, ("ResponseMetadata", "Error", "Message"), ("message",), ("error",))


class DoubaoProvider:
    name = "doubao"

    def __init__(self, base_url: str, key: str, *, timeout_s: float) -> None:
        self.http = ProviderHttp(
            self.name, base_url, key, timeout_s=timeout_s, read_error=_read_error
        )

    def _envelope_error(self, decoded: dict[str, Any]) -> None:
        meta = decoded.get("ResponseMetadata")
        error = meta.get("Error") if isinstance(meta, dict) else None
        if not isinstance(error, dict) or not error:
            return
        code = str(error.get("Code") or "")
        numeric = str(error.get("CodeN") or "")
        kind = _CODES.get(code) or _CODES.get(numeric) or "provider_error"
        # Only a short ASCII code reaches the model: it is provider text, not ours.
        plain = code.replace("_", "")
        safe_code = code if plain.isascii() and plain.isalnum() and len(code) <= 32 else None
        raise self.http.error(
            kind, f"{code}: {as_text(error.get('Message'))}", status=200, provider_code=safe_code
        )

    async def search(self, query: SearchQuery) -> SearchResults:
        body: dict[str, Any] = {
            "Query": query.query[:MAX_QUERY],
            "SearchType": "web",
            "Count": max(1, min(query.max_results, MAX_COUNT)),
            "Filter": {"NeedUrl": True},
            "ContentFormats": "text",
        }
        if query.include_domains:
            body["Filter"]["Sites"] = "|".join(query.include_domains[:MAX_SITES])
        if query.exclude_domains:
            body["Filter"]["BlockHosts"] = "|".join(query.exclude_domains[:MAX_BLOCKED])
        if query.time_range:
            body["TimeRange"] = _TIME_RANGE[query.time_range]
        started = time.perf_counter()
        decoded = await self.http.post_json("/search_api/web_search", body)
        if not isinstance(decoded, dict):
            raise self.http.error("malformed_response", "not an object", status=200)
        self._envelope_error(decoded)
        result = decoded.get("Result")
        if isinstance(result, dict):
            rows = as_list(result.get("WebResults", []))
        else:
            # One client reports an older top-level `Results` array.
            rows = as_list(decoded.get("Results"))
        if rows is None:
            raise self.http.error("malformed_response", "no WebResults list", status=200)
        hits = tuple(
            SearchHit(
                title=as_text(row.get("Title")),
                url=as_text(row.get("Url")),
                snippet=as_text(row.get("Snippet")) or as_text(row.get("Summary")),
                content=as_text(row.get("Summary")) or as_text(row.get("Content")) or None,
                published_at=as_text(row.get("PublishTime")) or None,
                site_name=as_text(row.get("SiteName")) or None,
                # No documented range: reported as the provider's own number.
                score=clamp_score(row.get("RankScore"), None),
                score_max=None,
            )
            for row in rows
            if as_text(row.get("Url"))
        )
        return SearchResults(
            query=query.query,
            provider=self.name,
            results=hits[: query.max_results],
            response_time_s=time.perf_counter() - started,
        )
