"""Document source sniffing and conversion over arbitrary bytes: a known kind always,
and only our typed errors (no OCR registry: this is about parsing, not recognition)."""

from __future__ import annotations

import contextlib

from hypothesis import example, given, settings
from hypothesis import strategies as st

from adk_yuxi.documents import DocumentError, DocumentSource, convert_document, default_converters
from tests._profiles import examples

from .files import docx_bytes, pdf_bytes

KINDS = {
    "pdf", "docx", "xlsx", "pptx", "encrypted-office", "legacy-office", "zip", "image",
    "html", "unknown",
}  # fmt: skip
HEADS = st.sampled_from(
    [b"", b"%PDF-1.7\n", b"PK\x03\x04", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", b"\x89PNG\r\n\x1a\n",
     b"<html>", b"\xff\xfe", b"GIF89a", b"RIFF\x00\x00\x00\x00WEBP", b"\x1f\x8b"]
)  # fmt: skip
NAMES = st.sampled_from(["", "a.pdf", "a.docx", "a.xlsx", "a.html", "a.txt", "a.png", "x"])
REGISTRY = default_converters(ocr=False)


@given(HEADS, st.binary(max_size=600), NAMES, st.sampled_from([None, "text/html", "text/plain"]))
@settings(max_examples=examples(300), deadline=None)
def test_any_bytes_sniff_to_a_known_kind_and_convert_or_raise_ours(
    head: bytes, tail: bytes, name: str, mime: str | None
) -> None:
    data = head + tail
    assert DocumentSource(data, name, mime).kind in KINDS
    with contextlib.suppress(DocumentError):
        convert_document(data, name=name, mime_type=mime, registry=REGISTRY)


@given(st.integers(0, 2000), st.binary(min_size=1, max_size=8))
@example(cut=1220, junk=b"\x00\x00@")  # zipfile: NotImplementedError("zip file version 6.4")
@settings(max_examples=examples(100), deadline=None)
def test_damaged_real_documents_raise_only_our_errors(cut: int, junk: bytes) -> None:
    for original, name in ((docx_bytes(["text"], "T"), "a.docx"), (pdf_bytes(["p"]), "a.pdf")):
        data = original[:cut] + junk + original[cut + len(junk) :]
        with contextlib.suppress(DocumentError):
            convert_document(data, name=name, registry=REGISTRY)


SNIFF_SHAPES = {
    "ole without a package": lambda n: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"E\x00" * (n // 2),
    "almost html": lambda n: b" " * n + b"<htm",
    "text": lambda n: "长文档标记 ".encode() * (n // 16 + 1),
}


def test_sniffing_is_linear() -> None:
    from tests._linear import assert_linear

    for shape in SNIFF_SHAPES.values():
        assert_linear(lambda text: DocumentSource(text.encode("latin-1"), "x").kind,
                      lambda n, shape=shape: shape(n).decode("latin-1"))  # fmt: skip
