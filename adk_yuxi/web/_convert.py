"""Fetched bytes to (title, Markdown) through the one document-conversion module
(`adk_yuxi.documents`), for the content types the direct fetcher accepts."""

from __future__ import annotations

import contextlib
from pathlib import PurePosixPath
from typing import Protocol
from urllib.parse import unquote, urlsplit

from ..documents import (
    ConverterRegistry,
    CorruptDocumentError,
    DocumentError,
    DocumentSource,
    PasswordProtectedDocumentError,
    convert_document,
    default_converters,
)

__all__ = ["ACCEPTED_TYPES", "PageConverter", "UnreadablePage", "convert_page"]

ACCEPTED_TYPES = frozenset(
    {
        "text/html",
        "application/xhtml+xml",
        "text/plain",
        "text/markdown",
        "text/x-markdown",
        "text/csv",
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    }
)
"""Content types the direct fetcher downloads; anything else is refused unread."""

_TEXTUAL = ("html", "unknown")  # markup, or text left to the text converter
_FAMILIES: dict[str, tuple[str, ...]] = {
    **{t: _TEXTUAL for t in ACCEPTED_TYPES if t.startswith("text/") or "xhtml" in t},
    "application/pdf": ("pdf",),
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ("docx",),
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ("xlsx",),
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": ("pptx",),
}
"""What the bytes of each declared type may turn out to be: a page is converted only
within its declared type's family (an image served as text/plain is refused, not
decoded and OCR'd)."""

_registry: ConverterRegistry | None = None


def _converters() -> ConverterRegistry:
    """No OCR for fetched bytes, ever."""
    global _registry
    if _registry is None:
        _registry = default_converters(ocr=False)
    return _registry


class UnreadablePage(ValueError):
    """Bytes of an accepted type that still could not be converted; `code` says why."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code


class PageConverter(Protocol):
    def __call__(
        self, data: bytes, *, mime_type: str, charset: str | None, url: str
    ) -> tuple[str, str]: ...


def _name(url: str, mime_type: str) -> str:
    """A file name for the converter's format sniffing: the URL's last segment."""
    segment = PurePosixPath(unquote(urlsplit(url).path)).name
    return segment or ("page.html" if "html" in mime_type else "download")


def convert_page(data: bytes, *, mime_type: str, charset: str | None, url: str) -> tuple[str, str]:
    """Raises `UnreadablePage` for a corrupt, encrypted or unconvertible document."""
    if mime_type not in ACCEPTED_TYPES:
        raise UnreadablePage("unsupported_content", f"content type {mime_type!r}")
    family = _FAMILIES[mime_type]
    if charset and family == _TEXTUAL:
        # The header's charset is authoritative for every textual type (XHTML too);
        # hand the converter UTF-8.
        with contextlib.suppress(LookupError, UnicodeDecodeError):
            data = data.decode(charset).encode("utf-8")
    name = _name(url, mime_type)
    kind = DocumentSource(data, name, mime_type).kind
    if kind not in family:
        raise UnreadablePage("unsupported_content", f"the body is {kind}, not {mime_type}")
    try:
        document = convert_document(
            data,
            name=name,
            mime_type=mime_type,
            max_bytes=len(data) + 1,
            registry=_converters(),
        )
    except PasswordProtectedDocumentError as exc:
        raise UnreadablePage("unsupported_content", f"password-protected: {exc.reason}") from None
    except CorruptDocumentError as exc:
        raise UnreadablePage("fetch_failed", f"corrupt document: {exc.reason}") from None
    except DocumentError as exc:
        raise UnreadablePage("unsupported_content", exc.reason) from None
    return (document.title or "").strip(), document.markdown
