"""HTML pages, through markitdown's HTML converter (BeautifulSoup and markdownify)."""

from __future__ import annotations

import io

from ._result import ConvertedDocument
from ._source import DocumentSource
from ._text import decode_text

__all__ = ["HtmlConverter"]


class HtmlConverter:
    name = "html"

    def accepts(self, source: DocumentSource) -> bool:
        return source.kind == "html"

    def convert(self, source: DocumentSource) -> ConvertedDocument:
        from markitdown import StreamInfo
        from markitdown.converters import HtmlConverter as _Html

        text = decode_text(source.data, source.name)
        result = _Html().convert(
            io.BytesIO(text.encode("utf-8")), StreamInfo(extension=".html", charset="utf-8")
        )
        return ConvertedDocument(
            markdown=result.markdown, title=result.title or None, mime_type="text/html"
        )
