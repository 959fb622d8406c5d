"""The input of a conversion: the bytes, a name, and what the bytes really are.

The format is decided from the bytes first (magic numbers, the member names of an
Office zip), the name and declared MIME type only break ties, so a renamed file is
converted as what it is and an encrypted Office file is recognised as such.
"""

from __future__ import annotations

import io
import os
import zipfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ._damage import is_damage
from ._errors import DocumentTooLargeError
from ._inflate import MAX_INFLATED_BYTES, inflated_limit

__all__ = ["DEFAULT_MAX_BYTES", "DocumentSource"]

DEFAULT_MAX_BYTES = 50 * 1024 * 1024

_CFB_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")
_OOXML_PARTS = {
    "word/document.xml": "docx",
    "xl/workbook.xml": "xlsx",
    "ppt/presentation.xml": "pptx",
}
_IMAGE_MAGIC = (
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",
    b"GIF87a",
    b"GIF89a",
    b"BM",
    b"II*\x00",
    b"MM\x00*",
)
_EXTENSION_KINDS = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".pptx": "pptx",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
}


@dataclass(frozen=True)
class DocumentSource:
    data: bytes
    name: str = ""
    mime_type: str | None = None
    max_inflated_bytes: int = MAX_INFLATED_BYTES
    """What a zip-based document (Office) may inflate to; set from the byte limit."""

    @classmethod
    def load(
        cls,
        path_or_bytes: str | os.PathLike[str] | bytes,
        *,
        name: str | None = None,
        mime_type: str | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> DocumentSource:
        """Reads a file (refusing an oversize one before reading it) or wraps bytes."""
        if isinstance(path_or_bytes, bytes | bytearray | memoryview):
            data = bytes(path_or_bytes)
            label = name or ""
            if len(data) > max_bytes:
                raise DocumentTooLargeError(label, len(data), max_bytes)
            return cls(data, label, mime_type, inflated_limit(max_bytes))
        path = Path(path_or_bytes)
        label = name or path.name
        size = path.stat().st_size
        if size > max_bytes:
            raise DocumentTooLargeError(label, size, max_bytes)
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:  # grew while we looked
            raise DocumentTooLargeError(label, len(data), max_bytes)
        return cls(data, label, mime_type, inflated_limit(max_bytes))

    @property
    def extension(self) -> str:
        return Path(self.name).suffix.lower()

    @cached_property
    def kind(self) -> str:
        """``pdf``, ``docx``, ``xlsx``, ``pptx``, ``encrypted-office``, ``legacy-office``,
        ``zip``, ``image``, ``html`` or ``unknown`` (left to the text converter to try)."""
        head = self.data[:8]
        if head.startswith(_IMAGE_MAGIC) or (head[:4] == b"RIFF" and self.data[8:12] == b"WEBP"):
            return "image"
        if self.data[:1024].lstrip().startswith(b"%PDF-"):
            return "pdf"
        if head == _CFB_MAGIC:
            return "encrypted-office" if _ENCRYPTED_PACKAGE in self.data else "legacy-office"
        if head.startswith(b"PK\x03\x04"):
            return self._zip_kind()
        by_name = _EXTENSION_KINDS.get(self.extension)
        if by_name == "html" or (self.mime_type or "").startswith(
            ("text/html", "application/xhtml")
        ):
            return "html"
        if by_name in ("pdf", "docx", "xlsx", "pptx"):
            return by_name  # named so but not so: the converter reports it corrupt
        return "html" if self._looks_like_html() else "unknown"

    def _zip_kind(self) -> str:
        try:
            with zipfile.ZipFile(io.BytesIO(self.data)) as archive:
                names = set(archive.namelist())
        except Exception as exc:  # damaged: by its name; the converter reports it corrupt
            if not is_damage(exc):
                raise
            return _EXTENSION_KINDS.get(self.extension, "zip")
        for part, kind in _OOXML_PARTS.items():
            if part in names:
                return kind
        return _EXTENSION_KINDS.get(self.extension, "zip")

    def _looks_like_html(self) -> bool:
        head = self.data[:2048].lstrip().lower()
        return head.startswith((b"<!doctype html", b"<html")) or b"<html" in head[:512]
