"""Converters in order, and the one function callers use.

A converter is one object per format family: it says which sources it takes and
turns one into a `ConvertedDocument`. Another family (OCR for images and scanned
pages) plugs in with `register(converter, before=...)`; the first converter that
accepts a source converts it. Errors a converter's library raises while choosing or
converting are mapped to `CorruptDocumentError` in one place (`_damage.reading`); our
own `DocumentError`s pass through.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Protocol, runtime_checkable

from ._damage import reading
from ._errors import UnsupportedDocumentError
from ._result import ConvertedDocument, normalize_markdown
from ._source import DEFAULT_MAX_BYTES, DocumentSource

__all__ = [
    "Converter",
    "ConverterRegistry",
    "aconvert_document",
    "convert_document",
    "default_converters",
]


@runtime_checkable
class Converter(Protocol):
    name: str

    def accepts(self, source: DocumentSource) -> bool: ...

    def convert(self, source: DocumentSource) -> ConvertedDocument: ...


class ConverterRegistry:
    def __init__(self, converters: list[Converter] | None = None) -> None:
        self._lock = threading.Lock()
        self._converters: list[Converter] = list(converters or [])

    def register(self, converter: Converter, *, before: str | None = None) -> None:
        """Adds a converter last, or just before the one named ``before``."""
        with self._lock:
            if any(c.name == converter.name for c in self._converters):
                raise ValueError(f"a converter named {converter.name!r} is already registered")
            names = [c.name for c in self._converters]
            index = names.index(before) if before in names else len(names)
            self._converters.insert(index, converter)

    def names(self) -> list[str]:
        return [c.name for c in self._converters]

    def converter_for(self, source: DocumentSource) -> Converter:
        for converter in list(self._converters):
            if converter.accepts(source):
                return converter
        kind = source.kind
        if kind == "legacy-office":
            reason = "legacy binary Office files (.doc, .xls, .ppt) are not supported"
        else:
            reason = f"no converter accepts this file (detected as {kind})"
        raise UnsupportedDocumentError(source.name, reason)

    def convert(self, source: DocumentSource) -> ConvertedDocument:
        with reading(source.name, "sniffing"):
            converter = self.converter_for(source)
        with reading(source.name, converter.name):
            result = converter.convert(source)
        return ConvertedDocument(
            markdown=normalize_markdown(result.markdown),
            title=result.title,
            mime_type=result.mime_type,
            name=source.name,
            pages=tuple(normalize_markdown(p) for p in result.pages),
            converter=result.converter or converter.name,
        )


def default_converters(*, ocr: bool = True) -> ConverterRegistry:
    """A fresh registry with the built-in families: PDF (scanned pages through OCR),
    Office, HTML, images (OCR), text. With ``ocr=False`` there is no OCR at all (no image
    family, PDFs by their text layer only): for bytes nobody vouches for, such as a
    fetched page, where OCR would be seconds of CPU chosen by a stranger."""
    from ._html import HtmlConverter
    from ._office import OfficeConverter
    from ._text import TextConverter

    if not ocr:
        from ._pdf import PdfConverter

        return ConverterRegistry(
            [PdfConverter(), OfficeConverter(), HtmlConverter(), TextConverter()]
        )
    from ._ocr_converters import ImageOcrConverter, ScannedPdfConverter

    return ConverterRegistry(
        [
            ScannedPdfConverter(),
            OfficeConverter(),
            HtmlConverter(),
            ImageOcrConverter(),
            TextConverter(),
        ]
    )


_default: ConverterRegistry | None = None
_default_lock = threading.Lock()


def _registry() -> ConverterRegistry:
    global _default
    with _default_lock:
        if _default is None:
            _default = default_converters()
        return _default


def convert_document(
    path_or_bytes: str | os.PathLike[str] | bytes,
    *,
    name: str | None = None,
    mime_type: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    registry: ConverterRegistry | None = None,
) -> ConvertedDocument:
    """Converts a file or bytes to Markdown, or raises a `DocumentError` subtype."""
    source = DocumentSource.load(path_or_bytes, name=name, mime_type=mime_type, max_bytes=max_bytes)
    return (registry or _registry()).convert(source)


async def aconvert_document(
    path_or_bytes: str | os.PathLike[str] | bytes,
    *,
    name: str | None = None,
    mime_type: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    registry: ConverterRegistry | None = None,
) -> ConvertedDocument:
    """`convert_document` in a worker thread: parsing is CPU work that must not hold the
    event loop."""
    return await asyncio.to_thread(
        convert_document,
        path_or_bytes,
        name=name,
        mime_type=mime_type,
        max_bytes=max_bytes,
        registry=registry,
    )
