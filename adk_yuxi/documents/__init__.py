"""Documents to Markdown: text, Markdown, HTML, PDF and Office files, one converter per
format family, with typed errors for unsupported, corrupt, encrypted and oversize files.

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
    "ConvertedDocument",
    "Converter",
    "ConverterRegistry",
    "CorruptDocumentError",
    "DocumentError",
    "DocumentSource",
    "DocumentTooLargeError",
    "PasswordProtectedDocumentError",
    "UnsupportedDocumentError",
    "aconvert_document",
    "convert_document",
    "default_converters",
    "normalize_markdown",
]
