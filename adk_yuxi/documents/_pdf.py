"""PDF text layers, page by page, with pdfminer.six.

markitdown's PDF path runs pdfplumber's word grouping over every page looking for
forms before falling back to pdfminer for prose; reading the text layer with
pdfminer directly keeps the pages apart (a scanned page shows up as an empty one,
for an OCR converter to take over) and raises encryption as its own error.
"""

from __future__ import annotations

import io

from ._errors import CorruptDocumentError, PasswordProtectedDocumentError
from ._result import ConvertedDocument
from ._source import DocumentSource

__all__ = ["PdfConverter"]


def _text(value: object) -> str | None:
    """A PDF text string: UTF-16 behind a byte-order mark, else PDFDocEncoding."""
    from pdfminer.pdftypes import resolve1
    from pdfminer.utils import decode_text

    value = resolve1(value)
    if isinstance(value, bytes):
        return decode_text(value).strip() or None
    if isinstance(value, str):
        return value.strip() or None
    return None


class PdfConverter:
    name = "pdf"

    def accepts(self, source: DocumentSource) -> bool:
        return source.kind == "pdf"

    def convert(self, source: DocumentSource) -> ConvertedDocument:
        from pdfminer.high_level import extract_pages
        from pdfminer.layout import LAParams, LTTextContainer
        from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFPasswordIncorrect
        from pdfminer.pdfparser import PDFParser, PDFSyntaxError
        from pdfminer.psexceptions import PSException

        try:
            document = PDFDocument(PDFParser(io.BytesIO(source.data)))
            info = document.info[0] if document.info else {}
            title = _text(info.get("Title"))
            pages: list[str] = []
            for layout in extract_pages(io.BytesIO(source.data), laparams=LAParams()):
                parts = [el.get_text() for el in layout if isinstance(el, LTTextContainer)]
                pages.append("".join(parts).strip())
        except (PDFPasswordIncorrect, PDFEncryptionError) as exc:
            raise PasswordProtectedDocumentError(
                source.name, "the PDF is encrypted with a password"
            ) from exc
        except (PDFSyntaxError, PSException) as exc:
            raise CorruptDocumentError(source.name, f"not a readable PDF ({exc})") from exc
        return ConvertedDocument(
            markdown="\n\n".join(p for p in pages if p),
            title=title,
            mime_type="application/pdf",
            pages=tuple(pages),
        )
