"""Fetched bytes to (title, Markdown), by content type.

HTML goes through markitdown's HTML converter; plain text passes through. PDF and
Office documents belong to the one document-conversion module shared with knowledge
ingestion; until it is wired in here they are refused as unsupported.
"""

from __future__ import annotations

import io
from typing import Protocol

from markitdown import MarkItDown, StreamInfo

__all__ = ["HTML_TYPES", "TEXT_TYPES", "PageConverter", "convert_page", "supported_types"]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/x-markdown", "text/csv"})

_markitdown = MarkItDown(enable_plugins=False)


class PageConverter(Protocol):
    def __call__(
        self, data: bytes, *, mime_type: str, charset: str | None, url: str
    ) -> tuple[str, str]: ...


def _decode(data: bytes, charset: str | None) -> str:
    try:
        return data.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return data.decode("utf-8", errors="replace")


def _html(data: bytes, charset: str | None, url: str) -> tuple[str, str]:
    info = StreamInfo(mimetype="text/html", extension=".html", charset=charset, url=url)
    result = _markitdown.convert_stream(io.BytesIO(data), stream_info=info)
    return (result.title or "").strip(), result.markdown


def _text(data: bytes, charset: str | None, url: str) -> tuple[str, str]:
    return "", _decode(data, charset)


def supported_types() -> frozenset[str]:
    return HTML_TYPES | TEXT_TYPES


def convert_page(data: bytes, *, mime_type: str, charset: str | None, url: str) -> tuple[str, str]:
    """Raises `ValueError` for a type outside `supported_types()`."""
    if mime_type in HTML_TYPES:
        return _html(data, charset, url)
    if mime_type in TEXT_TYPES:
        return _text(data, charset, url)
    raise ValueError(f"unsupported content type {mime_type!r}")
