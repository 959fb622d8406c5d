"""Markdown lines to chunks that keep their line numbers.

A chunk is a run of whole lines of about ``target`` characters, cut preferably at a
blank line or before a heading; a single line longer than ``hard_limit`` is split into
pieces that all carry that line's number. A CJK character counts as ``CJK_WIDTH``
characters: it carries about what an English word does, and counted as one a Chinese
chunk held three times the text of an English one, several topics in one vector. Line
numbers are 1-based and refer to the stored Markdown, so a search hit can be opened at
the same place.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._text import cjk_count

__all__ = ["CJK_WIDTH", "Chunk", "chunk_lines"]

CJK_WIDTH = 3


@dataclass(frozen=True)
class Chunk:
    seq: int
    start_line: int
    end_line: int
    content: str


def chunk_lines(lines: list[str], *, target: int = 500, hard_limit: int = 1500) -> list[Chunk]:
    chunks: list[Chunk] = []
    buf: list[str] = []
    start = 1
    size = 0

    def flush(end: int) -> None:
        nonlocal buf, size
        text = "\n".join(buf).strip()
        if text:
            chunks.append(Chunk(len(chunks), start, end, text))
        buf, size = [], 0

    for number, line in enumerate(lines, start=1):
        width = len(line) + (CJK_WIDTH - 1) * cjk_count(line)
        if width > hard_limit:
            flush(number - 1)
            step = max(1, target * len(line) // width)
            for at in range(0, len(line), step):
                piece = line[at : at + step].strip()
                if piece:
                    chunks.append(Chunk(len(chunks), number, number, piece))
            start = number + 1
            continue
        heading = line.startswith("#")
        if buf and (
            size + width > hard_limit
            or (size >= target and (not line.strip() or heading))
            or (heading and size >= target // 3)
        ):
            flush(number - 1)
        if not buf:
            start = number
        buf.append(line)
        size += width + 1
    flush(len(lines))
    return chunks
