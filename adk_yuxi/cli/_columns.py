"""A description under its column: wrapped to the terminal, every line indented."""

from __future__ import annotations

import shutil
import textwrap

__all__ = ["indented"]


def indented(text: str, indent: int, *, whole: bool = False) -> str:
    """The first paragraph of `text` (all of them with `whole`), rewrapped to the
    terminal's width with each line starting at column `indent`, so a multi-line
    description never runs back into the first column."""
    width = max(shutil.get_terminal_size((100, 24)).columns, indent + 40)
    paragraphs = [p for p in text.strip().split("\n\n") if p.strip()] or [""]
    pad = " " * indent
    wrapped = [
        textwrap.fill(" ".join(p.split()), width, initial_indent=pad, subsequent_indent=pad)
        for p in (paragraphs if whole else paragraphs[:1])
    ]
    return f"\n{pad.rstrip()}\n".join(wrapped) if wrapped[0].strip() else pad.rstrip()
