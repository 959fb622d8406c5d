"""Long texts become several memories, each indexed within bounds on both backends.

PostgreSQL refuses a ``tsvector`` whose distinct lexemes exceed 1 MB ("string is
too long for tsvector"), which a long Chinese text reaches through its bigrams;
one such event used to fail the whole ingest batch. A text above
``PIECE_CHARS`` is therefore cut (at a blank near the limit when there is one)
into pieces stored as memories of their own: the first keeps the memory id, the
others get ``<id>#piece-<n>``, and each carries ``piece`` / ``pieces`` in its
custom metadata. A search then returns the piece that matched. Deleting or
replacing a memory handles all its pieces.
"""

from __future__ import annotations

__all__ = ["PIECE_CHARS", "PIECE_SUFFIX", "piece_id", "split_pieces"]

# 20,000 CJK characters make at most ~400 KB of distinct tokens (characters and
# bigrams, hex-encoded), well under PostgreSQL's 1 MB tsvector limit.
PIECE_CHARS = 20_000
PIECE_SUFFIX = "#piece-"
_LOOK_BACK = 200


def split_pieces(text: str, limit: int = PIECE_CHARS) -> list[str]:
    """The text in pieces of at most ``limit`` characters, cut at blanks if possible."""
    pieces: list[str] = []
    start = 0
    while len(text) - start > limit:
        end = start + limit
        blank = max(text.rfind(" ", end - _LOOK_BACK, end), text.rfind("\n", end - _LOOK_BACK, end))
        if blank > start:
            end = blank + 1
        pieces.append(text[start:end])
        start = end
    pieces.append(text[start:])
    return pieces


def piece_id(memory_id: str, index: int) -> str:
    """The memory id of piece ``index`` (the first piece keeps the id itself)."""
    return memory_id if index == 0 else f"{memory_id}{PIECE_SUFFIX}{index}"
