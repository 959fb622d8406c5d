"""Fetched bytes to (title, Markdown) through the one document-conversion module
(`adk_yuxi.documents`), for the content types the direct fetcher accepts."""

from __future__ import annotations

import contextlib
from pathlib import PurePosixPath
from typing import Protocol
from urllib.parse import unquote, urlsplit

from ..documents import (
    CorruptDocumentError,
    DocumentError,
    PasswordProtectedDocumentError,
    convert_document,
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
    if charset and mime_type.startswith("text/"):
        # The header's charset is authoritative for text; hand the converter UTF-8.
        with contextlib.suppress(LookupError, UnicodeDecodeError):
            data = data.decode(charset).encode("utf-8")
    try:
        document = convert_document(
            data, name=_name(url, mime_type), mime_type=mime_type, max_bytes=len(data) + 1
        )
    except PasswordProtectedDocumentError as exc:
        raise UnreadablePage("unsupported_content", f"password-protected: {exc.reason}") from None
    except CorruptDocumentError as exc:
        raise UnreadablePage("fetch_failed", f"corrupt document: {exc.reason}") from None
    except DocumentError as exc:
        raise UnreadablePage("unsupported_content", exc.reason) from None
    return (document.title or "").strip(), document.markdown
