"""Private text helpers shared by every search in adk_yuxi (one segmentation rule)."""

from .tokens import (
    MAX_BODY_CHARS,
    cjk_count,
    document_terms,
    index_tokens,
    query_terms,
    query_tokens,
    text_runs,
)

__all__ = [
    "MAX_BODY_CHARS",
    "cjk_count",
    "document_terms",
    "index_tokens",
    "query_terms",
    "query_tokens",
    "text_runs",
]
