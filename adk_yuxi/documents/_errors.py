"""Why a document could not be converted, as types a caller can branch on."""

from __future__ import annotations

from adk_yuxi.errors import YuxiError

__all__ = [
    "CorruptDocumentError",
    "DocumentError",
    "DocumentTooLargeError",
    "PasswordProtectedDocumentError",
    "UnsupportedDocumentError",
]


class DocumentError(YuxiError, ValueError):
    """A document that cannot be turned into Markdown; the message names the file."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name or 'document'}: {reason}")
        self.name = name
        self.reason = reason


class UnsupportedDocumentError(DocumentError):
    """No converter accepts this kind of file."""


class CorruptDocumentError(DocumentError):
    """The file claims a format it does not hold (truncated, damaged or mislabelled)."""


class PasswordProtectedDocumentError(DocumentError):
    """The file is encrypted; it is never guessed at or partly read."""


class DocumentTooLargeError(DocumentError):
    """The file exceeds the configured size limit; nothing of it was read."""

    def __init__(self, name: str, size: int, limit: int) -> None:
        super().__init__(name, f"{size} bytes exceed the limit of {limit} bytes")
        self.size = size
        self.limit = limit
