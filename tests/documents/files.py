"""Small real documents of each supported format, made on the spot."""

from __future__ import annotations

import io
import zipfile


def pdf_bytes(pages: list[str], *, encrypt: bool = False, title: str = "Sample") -> bytes:
    """A minimal PDF with one Helvetica text line per page (and, with ``encrypt``, a
    standard security handler whose user password is not empty)."""
    objects: list[bytes] = []
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    font_ref = 3 + 2 * len(pages)
    for i, text in enumerate(pages):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R"
            f" /Resources << /Font << /F1 {font_ref} 0 R >> >> >>".encode()
        )
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    objects.append(f"<< /Title ({title}) >>".encode())
    info_ref = len(objects)
    encrypt_ref = None
    if encrypt:
        objects.append(
            b"<< /Filter /Standard /V 1 /R 2 /O <"
            + b"11" * 32
            + b"> /U <"
            + b"22" * 32
            + b"> /P -4 >>"
        )
        encrypt_ref = len(objects)
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    trailer = f"<< /Size {len(objects) + 1} /Root 1 0 R /Info {info_ref} 0 R"
    if encrypt_ref:
        trailer += f" /Encrypt {encrypt_ref} 0 R /ID [<{'ab' * 16}> <{'ab' * 16}>]"
    out.write(f"trailer\n{trailer} >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def docx_bytes(paragraphs: list[str], heading: str) -> bytes:
    """A minimal WordprocessingML package: one heading and some paragraphs."""
    body = f'<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>{heading}</w:t></w:r></w:p>'
    body += "".join(f"<w:p><w:r><w:t>{p}</w:t></w:r></w:p>" for p in paragraphs)
    ns = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    parts = {
        "[Content_Types].xml": (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" '
            'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/word/document.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
        ),
        "_rels/.rels": (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'
        ),
        "word/document.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><w:document {ns}><w:body>{body}'
            "</w:body></w:document>"
        ),
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, xml in parts.items():
            archive.writestr(name, xml)
    return out.getvalue()


def xlsx_bytes(rows: list[list[object]]) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Prices"
    for row in rows:
        sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def pptx_bytes(slides: list[tuple[str, str]]) -> bytes:
    from pptx import Presentation

    deck = Presentation()
    for title, text in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = text
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def encrypted_office_bytes() -> bytes:
    """The shape of an encrypted OOXML file: an OLE compound file whose directory holds
    an ``EncryptedPackage`` stream (what Office writes when a password is set)."""
    header = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504
    directory = "EncryptedPackage".encode("utf-16-le") + b"\x00" * 94
    return header + directory + b"\x00" * 512
