"""OCR through the one document converter: images and scanned PDF pages, Chinese and
English, on pages rendered here; offline, from the models inside the package."""

from __future__ import annotations

import pytest
from PIL import Image

from adk_yuxi.documents import (
    CorruptDocumentError,
    DocumentTooLargeError,
    ScannedPdfConverter,
    TooManyPagesError,
    convert_document,
    default_converters,
    ocr_unavailable_reason,
)
from adk_yuxi.documents._source import DocumentSource

from .files import pdf_bytes
from .ocr_pages import image_bytes, mixed_pdf_bytes, scanned_pdf_bytes

pytestmark = pytest.mark.timeout(600)

ZH = "知识库检索增强生成"
EN = "Quarterly revenue grew 12%"


def test_the_models_ship_inside_the_package() -> None:
    assert ocr_unavailable_reason() is None


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_image_in_chinese_and_english(fmt: str) -> None:
    doc = convert_document(image_bytes([ZH, EN], fmt), name=f"scan.{fmt.lower()}")
    assert doc.converter == "ocr-image"
    assert doc.lines[0] == ZH
    assert doc.lines[1].replace(" ", "") == EN.replace(" ", "")
    assert doc.mime_type == f"image/{fmt.lower()}"


def test_a_renamed_image_is_still_an_image() -> None:
    doc = convert_document(image_bytes(["Hello OCR"]), name="notes.txt")
    assert doc.converter == "ocr-image" and "Hello OCR" in doc.markdown


def test_scanned_pdf_pages_are_recognised_in_order() -> None:
    data = scanned_pdf_bytes([[ZH], ["Second page in English"]])
    doc = convert_document(data, name="scan.pdf")
    assert doc.converter == "pdf+ocr"
    assert len(doc.pages) == 2
    assert doc.pages[0] == ZH
    assert doc.pages[1].replace(" ", "") == "SecondpageinEnglish"


def test_only_pages_without_a_text_layer_go_through_ocr() -> None:
    data = mixed_pdf_bytes(pdf_bytes(["Typed first page"]), scanned_pdf_bytes([["扫描的第二页"]]))
    doc = convert_document(data, name="mixed.pdf")
    assert doc.pages[0] == "Typed first page"
    assert doc.pages[1] == "扫描的第二页"
    text_only = convert_document(pdf_bytes(["Typed"]), name="t.pdf")
    assert text_only.converter == "pdf"


def test_ocr_page_limit_is_a_clear_error() -> None:
    registry = default_converters()
    limited = ScannedPdfConverter(max_ocr_pages=1)
    source = DocumentSource(scanned_pdf_bytes([["one"], ["two"]]), name="long.pdf")
    with pytest.raises(TooManyPagesError, match="2 scanned pages exceed the OCR limit of 1"):
        limited.convert(source)
    assert registry.names()[0] == "pdf"


def test_corrupt_and_oversized_images() -> None:
    png = image_bytes(["x"])
    with pytest.raises(CorruptDocumentError, match="not a readable image"):
        convert_document(png[:60], name="cut.png")
    from io import BytesIO

    huge = BytesIO()
    Image.new("1", (8000, 6000)).save(huge, "PNG")  # 48 Mpx, a few KB compressed
    with pytest.raises(DocumentTooLargeError):
        convert_document(huge.getvalue(), name="bomb.png")
