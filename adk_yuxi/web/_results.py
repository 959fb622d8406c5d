"""The provider-independent shapes of web_search and web_fetch results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["FetchedPage", "SearchHit", "SearchQuery", "SearchResults", "TimeRange"]

TimeRange = Literal["day", "week", "month", "year"]


@dataclass(frozen=True)
class SearchQuery:
    query: str
    max_results: int = 5
    time_range: TimeRange | None = None
    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()


@dataclass(frozen=True)
class SearchHit:
    """One result; `score` lies in [0, score_max] when the provider documents a range,
    and `score_max` is None when it does not (the score is then the provider's own)."""

    title: str
    url: str
    snippet: str
    score: float | None
    score_max: float | None
    content: str | None = None
    published_at: str | None = None
    site_name: str | None = None

    def to_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {"title": self.title, "url": self.url, "snippet": self.snippet}
        for name in ("content", "published_at", "site_name"):
            value = getattr(self, name)
            if value:
                row[name] = value
        row["score"] = self.score
        row["score_max"] = self.score_max
        return row


@dataclass(frozen=True)
class SearchResults:
    query: str
    provider: str
    results: tuple[SearchHit, ...] = field(default_factory=tuple)
    response_time_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "provider": self.provider,
            "results": [hit.to_dict() for hit in self.results],
            "response_time_s": round(self.response_time_s, 3),
        }


@dataclass(frozen=True)
class FetchedPage:
    """A page as Markdown; the whole text, before the window a tool call returns."""

    url: str
    final_url: str
    title: str
    markdown: str
    provider: str

    def window(self, offset: int, max_chars: int) -> dict[str, Any]:
        """`max_chars` of the Markdown from `offset`, with a marker and the offset to
        read on from when more follows."""
        total = len(self.markdown)
        start = min(max(offset, 0), total)
        end = min(start + max_chars, total)
        truncated = end < total
        content = self.markdown[start:end]
        result: dict[str, Any] = {
            "url": self.url,
            "final_url": self.final_url,
            "title": self.title,
            "content": content,
            "truncated": truncated,
            "provider": self.provider,
            "offset": start,
            "total_chars": total,
        }
        if truncated:
            result["content"] = (
                f"{content}\n\n[… truncated: {total - end} more characters; call web_fetch"
                f" again with offset={end} to read on]"
            )
            result["next_offset"] = end
        return result
