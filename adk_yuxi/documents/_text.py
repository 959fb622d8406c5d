"""Plain text and Markdown (and other text formats), decoded to Unicode."""

from __future__ import annotations

from pathlib import Path

from ._errors import UnsupportedDocumentError
from ._result import ConvertedDocument
from ._source import DocumentSource

__all__ = ["TextConverter"]

_MIME_BY_EXTENSION = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".csv": "text/csv",
    ".json": "application/json",
}
_TEXT_EXTENSIONS = {
    ".txt", ".text", ".md", ".markdown", ".rst", ".csv", ".tsv", ".json", ".log",
    ".yaml", ".yml", ".toml", ".ini", ".xml", "",
}  # fmt: skip


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 (with or without BOM), UTF-16 with a BOM, else the detected charset (GB18030
    and friends); bytes that are not text are refused rather than turned into noise."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    if b"\x00" in data[:4096]:
        raise UnsupportedDocumentError(name, "binary data that is not a supported format")
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise UnsupportedDocumentError(name, "the text encoding could not be determined")
    return str(best)


class TextConverter:
    name = "text"

    def accepts(self, source: DocumentSource) -> bool:
        if source.kind != "unknown":
            return False
        mime = source.mime_type or ""
        return (
            source.extension in _TEXT_EXTENSIONS
            or mime.startswith("text/")
            or b"\x00" not in source.data[:4096]
        )

    def convert(self, source: DocumentSource) -> ConvertedDocument:
        text = decode_text(source.data, source.name)
        mime = source.mime_type or _MIME_BY_EXTENSION.get(source.extension, "text/plain")
        title = None
        if mime == "text/markdown":
            title = next(
                (line[2:].strip() for line in text.splitlines() if line.startswith("# ")), None
            )
        return ConvertedDocument(
            markdown=text, title=title or Path(source.name).stem or None, mime_type=mime
        )
