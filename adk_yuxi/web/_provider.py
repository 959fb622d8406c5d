"""What every search and fetch provider adapter offers, and the helpers that read
untrusted provider JSON into our shapes without trusting its types."""

from __future__ import annotations

import math
from typing import Any, Protocol

from ._results import FetchedPage, SearchQuery, SearchResults

__all__ = ["FetchProvider", "SearchProvider", "as_list", "as_text", "clamp_score"]


class SearchProvider(Protocol):
    name: str

    async def search(self, query: SearchQuery) -> SearchResults: ...


class FetchProvider(Protocol):
    name: str

    async def fetch(self, url: str) -> FetchedPage: ...


def as_text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def as_list(value: Any) -> list[dict[str, Any]] | None:
    """A list of objects, or None when `value` is not a list (a malformed body)."""
    if not isinstance(value, list):
        return None
    return [item for item in value if isinstance(item, dict)]


def clamp_score(value: Any, score_max: float | None) -> float | None:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    score = float(value)
    if not math.isfinite(score):
        return None
    if score_max is None:
        return score
    return min(max(score, 0.0), score_max)
