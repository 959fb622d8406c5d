"""The OCR family: images, and PDF pages without a text layer (scans).

Images are opened with Pillow under a pixel bound (a decompression bomb is refused, not
decoded); scanned PDF pages are rendered with pdfium and recognised one by one, while
pages with a text layer keep it. The page limit bounds the OCR work of one document.
"""

from __future__ import annotations

import io
from typing import Any

from ._errors import CorruptDocumentError, DocumentError, DocumentTooLargeError
from ._ocr import OcrUnavailableError, ocr_engine
from ._pdf import PdfConverter
from ._result import ConvertedDocument
from ._source import DocumentSource

__all__ = [
    "DEFAULT_MAX_OCR_PAGES",
    "ImageOcrConverter",
    "OcrNotAvailableError",
    "ScannedPdfConverter",
    "TooManyPagesError",
]

DEFAULT_MAX_OCR_PAGES = 50
MAX_PIXELS = 40_000_000
_RENDER_SCALE = 2.0  # 144 dpi: small print stays legible to the recogniser


class TooManyPagesError(DocumentError):
    """More pages need OCR than the limit allows; nothing was recognised."""

    def __init__(self, name: str, pages: int, limit: int) -> None:
        super().__init__(name, f"{pages} scanned pages exceed the OCR limit of {limit} pages")
        self.pages = pages
        self.limit = limit


class OcrNotAvailableError(DocumentError):
    """The file needs OCR and this installation has no OCR engine."""


def _recognise(source: DocumentSource, image: Any) -> str:
    try:
        engine = ocr_engine()
    except OcrUnavailableError as exc:
        raise OcrNotAvailableError(source.name, str(exc)) from None
    return "\n".join(engine.recognise(image))


class ImageOcrConverter:
    name = "ocr-image"

    def accepts(self, source: DocumentSource) -> bool:
        return source.kind == "image"

    def convert(self, source: DocumentSource) -> ConvertedDocument:
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(io.BytesIO(source.data)) as probe:
                width, height = probe.size
                mime = Image.MIME.get(probe.format or "", "image/unknown")
            if width * height > MAX_PIXELS:
                raise DocumentTooLargeError(source.name, width * height, MAX_PIXELS)
            with Image.open(io.BytesIO(source.data)) as image:
                image.load()
                rgb = image.convert("RGB")
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
            if isinstance(exc, DocumentError):
                raise
            raise CorruptDocumentError(source.name, f"not a readable image ({exc})") from None
        text = _recognise(source, rgb)
        return ConvertedDocument(
            markdown=text, title=None, mime_type=mime, pages=(text,), converter=self.name
        )


class ScannedPdfConverter:
    """PDFs, text layer first; pages without one are rendered and recognised."""

    name = "pdf"

    def __init__(self, *, max_ocr_pages: int = DEFAULT_MAX_OCR_PAGES) -> None:
        self.max_ocr_pages = max_ocr_pages
        self._text_layer = PdfConverter()

    def accepts(self, source: DocumentSource) -> bool:
        return source.kind == "pdf"

    def convert(self, source: DocumentSource) -> ConvertedDocument:
        layered = self._text_layer.convert(source)
        blank = [i for i, page in enumerate(layered.pages) if not page.strip()]
        if not blank:
            return layered
        if len(blank) > self.max_ocr_pages:
            raise TooManyPagesError(source.name, len(blank), self.max_ocr_pages)
        import pypdfium2

        pages = list(layered.pages)
        try:
            document = pypdfium2.PdfDocument(source.data)
        except pypdfium2.PdfiumError as exc:
            raise CorruptDocumentError(source.name, f"pdfium cannot open it ({exc})") from None
        try:
            for index in blank:
                bitmap = document[index].render(scale=_RENDER_SCALE)
                pages[index] = _recognise(source, bitmap.to_pil())
        finally:
            document.close()
        return ConvertedDocument(
            markdown="\n\n".join(p for p in pages if p.strip()),
            title=layered.title,
            mime_type="application/pdf",
            pages=tuple(pages),
            converter="pdf+ocr",
        )
