"""Documents to Markdown: text, Markdown, HTML, PDF and Office files, and images and
scanned PDF pages through offline OCR (Chinese and English), one converter per format
family, with typed errors for unsupported, corrupt, encrypted and oversize files.

Used by knowledge-base ingestion and by the document tools; another family (OCR)
plugs in with ``ConverterRegistry.register``.
"""

from ._errors import (
    CorruptDocumentError,
    DocumentError,
    DocumentTooLargeError,
    PasswordProtectedDocumentError,
    UnsupportedDocumentError,
)
from ._ocr import ocr_unavailable_reason
from ._ocr_converters import (
    DEFAULT_MAX_OCR_PAGES,
    ImageOcrConverter,
    OcrNotAvailableError,
    ScannedPdfConverter,
    TooManyPagesError,
)
from ._registry import (
    Converter,
    ConverterRegistry,
    aconvert_document,
    convert_document,
    default_converters,
)
from ._result import ConvertedDocument, normalize_markdown
from ._source import DEFAULT_MAX_BYTES, DocumentSource

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_OCR_PAGES",
    "ConvertedDocument",
    "Converter",
    "ConverterRegistry",
    "CorruptDocumentError",
    "DocumentError",
    "DocumentSource",
    "DocumentTooLargeError",
    "ImageOcrConverter",
    "OcrNotAvailableError",
    "PasswordProtectedDocumentError",
    "ScannedPdfConverter",
    "TooManyPagesError",
    "UnsupportedDocumentError",
    "aconvert_document",
    "convert_document",
    "default_converters",
    "normalize_markdown",
    "ocr_unavailable_reason",
]
