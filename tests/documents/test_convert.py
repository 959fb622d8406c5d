"""Each supported format converts from a real file; bad files get typed errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_yuxi.documents import (
    ConvertedDocument,
    ConverterRegistry,
    CorruptDocumentError,
    DocumentError,
    DocumentSource,
    DocumentTooLargeError,
    PasswordProtectedDocumentError,
    UnsupportedDocumentError,
    convert_document,
    default_converters,
)
from adk_yuxi.errors import YuxiError

from .files import docx_bytes, encrypted_office_bytes, pdf_bytes, pptx_bytes, xlsx_bytes


def test_markdown_file_keeps_its_lines(tmp_path: Path) -> None:
    path = tmp_path / "guide.md"
    path.write_bytes("# 部署指南\r\n\r\nStep one.  \r\n第二步。\r\n\r\n".encode())
    doc = convert_document(path)
    assert doc.markdown == "# 部署指南\n\nStep one.\n第二步。"
    assert doc.lines[3] == "第二步。"
    assert doc.title == "部署指南" and doc.mime_type == "text/markdown"
    assert doc.name == "guide.md" and doc.converter == "text"


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "gb18030"])
def test_text_encodings(encoding: str) -> None:
    text = "知识库检索使用与记忆相同的分词规则。 Retrieval works in English too.\n" * 3
    doc = convert_document(text.encode(encoding), name="notes.txt")
    assert doc.markdown == text.strip()


def test_html_becomes_markdown_without_scripts() -> None:
    html = (
        "<html><head><title>Release notes</title><script>alert(1)</script></head>"
        "<body><h1>Version 2</h1><p>Adds <b>search</b>.</p><ul><li>一</li><li>二</li></ul>"
        "</body></html>"
    )
    doc = convert_document(html.encode(), name="notes.html")
    assert doc.title == "Release notes"
    assert "# Version 2" in doc.markdown and "**search**" in doc.markdown
    assert "alert" not in doc.markdown and "* 一" in doc.markdown


def test_pdf_pages_and_title() -> None:
    doc = convert_document(pdf_bytes(["First page text", "Second page text"]), name="r.pdf")
    assert doc.pages == ("First page text", "Second page text")
    assert doc.markdown == "First page text\n\nSecond page text"
    assert doc.title == "Sample" and doc.mime_type == "application/pdf"


def test_docx_heading_and_paragraphs() -> None:
    doc = convert_document(docx_bytes(["Install it.", "Run it."], "Setup"), name="setup.docx")
    assert doc.markdown.splitlines()[0] == "# Setup"
    assert "Install it." in doc.markdown and "Run it." in doc.markdown


def test_xlsx_becomes_a_table() -> None:
    doc = convert_document(xlsx_bytes([["item", "price"], ["tea", 3], ["茶", 4]]), name="p.xlsx")
    assert "## Prices" in doc.markdown
    assert "| tea | 3 |" in doc.markdown and "| 茶 | 4 |" in doc.markdown


def test_pptx_slides_are_pages() -> None:
    doc = convert_document(pptx_bytes([("Intro", "Hello"), ("Plan", "计划")]), name="d.pptx")
    assert len(doc.pages) == 2
    assert "Intro" in doc.pages[0] and "计划" in doc.pages[1]


def test_format_comes_from_the_bytes_not_the_name() -> None:
    doc = convert_document(pdf_bytes(["Renamed"]), name="looks-like.txt")
    assert doc.converter == "pdf" and doc.markdown == "Renamed"


def test_encrypted_pdf_is_password_protected() -> None:
    with pytest.raises(PasswordProtectedDocumentError, match=r"secret\.pdf"):
        convert_document(pdf_bytes(["hidden"], encrypt=True), name="secret.pdf")


def test_encrypted_office_is_password_protected() -> None:
    with pytest.raises(PasswordProtectedDocumentError):
        convert_document(encrypted_office_bytes(), name="secret.docx")


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (b"%PDF-1.4\n1 0 obj << /Type /Catalog", "broken.pdf"),
        (b"PK\x03\x04" + b"\x00" * 40, "broken.docx"),
        (b"not a zip at all", "named.xlsx"),
    ],
)
def test_corrupt_files(data: bytes, name: str) -> None:
    with pytest.raises(CorruptDocumentError) as caught:
        convert_document(data, name=name)
    assert isinstance(caught.value, YuxiError) and caught.value.name == name


def test_binary_and_legacy_files_are_unsupported() -> None:
    with pytest.raises(UnsupportedDocumentError, match="legacy"):
        convert_document(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600, name="old.doc")
    with pytest.raises(CorruptDocumentError, match="not a readable image"):
        # Images go through OCR; a broken one is corrupt, not unsupported.
        convert_document(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), name="a.png")


def test_oversize_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 2000)
    with pytest.raises(DocumentTooLargeError) as caught:
        convert_document(path, max_bytes=1000)
    assert caught.value.size == 2000 and caught.value.limit == 1000


def test_another_family_plugs_in_before_the_text_converter() -> None:
    class Shouting:
        name = "shout"

        def accepts(self, source: DocumentSource) -> bool:
            return source.extension == ".shout"

        def convert(self, source: DocumentSource) -> ConvertedDocument:
            text = source.data.decode().upper()
            return ConvertedDocument(markdown=text, title=None, mime_type="text/x-shout")

    registry = default_converters()
    registry.register(Shouting(), before="text")
    assert registry.names() == ["pdf", "office", "html", "ocr-image", "shout", "text"]
    doc = convert_document(b"quiet\r\n", name="a.shout", registry=registry)
    assert (doc.markdown, doc.converter) == ("QUIET", "shout")
    with pytest.raises(ValueError, match="already registered"):
        registry.register(Shouting())


def test_a_converter_that_raises_maps_to_corrupt() -> None:
    class Broken:
        name = "broken"

        def accepts(self, source: DocumentSource) -> bool:
            return True

        def convert(self, source: DocumentSource) -> ConvertedDocument:
            raise KeyError("word/document.xml")

    with pytest.raises(CorruptDocumentError, match="broken could not read it") as caught:
        convert_document(b"x", name="x.bin", registry=ConverterRegistry([Broken()]))
    assert isinstance(caught.value, DocumentError)
