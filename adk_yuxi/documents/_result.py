"""The one shape every converter returns."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ConvertedDocument", "normalize_markdown"]


def normalize_markdown(text: str) -> str:
    """One line-ending rule and no trailing blanks, so line numbers are stable: the same
    file always yields the same lines, whichever converter or platform made them."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)


@dataclass(frozen=True)
class ConvertedDocument:
    """A document as Markdown.

    ``pages`` holds the Markdown of each page for paged formats (PDF, slides), empty
    otherwise; ``markdown`` is always the whole text. ``converter`` names the converter
    that produced it, so a caller can tell OCR output from a text layer.
    """

    markdown: str
    title: str | None
    mime_type: str
    name: str = ""
    pages: tuple[str, ...] = ()
    converter: str = ""

    @property
    def lines(self) -> list[str]:
        return self.markdown.split("\n") if self.markdown else []
