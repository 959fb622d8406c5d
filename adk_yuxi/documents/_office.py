"""Word, Excel and PowerPoint (OOXML) documents, through markitdown's converters.

One family, one object: the container kind decides which of markitdown's
converters runs. Encrypted Office files (an OLE container holding an
``EncryptedPackage``) and the legacy binary formats are recognised from their
bytes before any library opens them.
"""

from __future__ import annotations

import io
from typing import Any

from ._errors import CorruptDocumentError, PasswordProtectedDocumentError
from ._inflate import check_inflated_size
from ._result import ConvertedDocument
from ._source import DocumentSource

__all__ = ["OfficeConverter"]

_MIME = {
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
}


def _markitdown_converter(kind: str) -> Any:
    from markitdown.converters import DocxConverter, PptxConverter, XlsxConverter

    return {"docx": DocxConverter, "xlsx": XlsxConverter, "pptx": PptxConverter}[kind]()


class OfficeConverter:
    name = "office"

    def accepts(self, source: DocumentSource) -> bool:
        return source.kind in ("docx", "xlsx", "pptx", "encrypted-office")

    def convert(self, source: DocumentSource) -> ConvertedDocument:
        from markitdown import StreamInfo

        kind = source.kind
        if kind == "encrypted-office":
            raise PasswordProtectedDocumentError(
                source.name, "the Office document is encrypted with a password"
            )
        if not source.data.startswith(b"PK\x03\x04"):
            raise CorruptDocumentError(source.name, f"not a readable .{kind} file")
        check_inflated_size(source.data, source.name, source.max_inflated_bytes)
        result = _markitdown_converter(kind).convert(
            io.BytesIO(source.data), StreamInfo(extension=f".{kind}", mimetype=_MIME[kind])
        )
        pages: tuple[str, ...] = ()
        if kind == "pptx":
            slides = result.markdown.split("<!-- Slide number:")
            pages = tuple(s.split("-->", 1)[-1].strip() for s in slides[1:])
        return ConvertedDocument(
            markdown=result.markdown, title=result.title or None, mime_type=_MIME[kind], pages=pages
        )
