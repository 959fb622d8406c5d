"""Pages with rendered Chinese and English text, as images and as scanned PDFs."""

from __future__ import annotations

import io
from functools import cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont


@cache
def _font(size: int) -> ImageFont.FreeTypeFont:
    import cvttf_NotoSansCJK_Regular as noto

    return ImageFont.truetype(str(Path(noto.__file__).parent / "NotoSansCJKtc-Regular.otf"), size)


def page_image(lines: list[str], *, width: int = 900, size: int = 36) -> Image.Image:
    image = Image.new("RGB", (width, 80 + len(lines) * size * 2), "white")
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((40, 40 + i * size * 2), line, font=_font(size), fill="black")
    return image


def image_bytes(lines: list[str], fmt: str = "PNG") -> bytes:
    out = io.BytesIO()
    page_image(lines).save(out, fmt)
    return out.getvalue()


def scanned_pdf_bytes(pages: list[list[str]]) -> bytes:
    """A PDF whose pages are images only (no text layer), like a scanner's output."""
    images = [page_image(lines) for lines in pages]
    out = io.BytesIO()
    images[0].save(out, "PDF", save_all=True, append_images=images[1:], resolution=100.0)
    return out.getvalue()


def mixed_pdf_bytes(text_page: bytes, scanned: bytes) -> bytes:
    """The text-layer pages of `text_page` followed by the scanned pages of `scanned`."""
    import pypdfium2

    target = pypdfium2.PdfDocument(text_page)
    target.import_pages(pypdfium2.PdfDocument(scanned))
    out = io.BytesIO()
    target.save(out)
    return out.getvalue()
