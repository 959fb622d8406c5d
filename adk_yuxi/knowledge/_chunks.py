"""The chunk rows of one indexed base, held beside its index in the index's order.

A query then answers from memory after one revision read, instead of fetching its hits
by id: at 100,000 chunks, ten rows scattered over the database file cost more than the
ranking whenever another request has just run through the caches. Content is one UTF-8
buffer with offsets (about the source's size), the rest small integer arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ChunkRows", "ChunkTable"]


@dataclass(frozen=True)
class ChunkRows:
    """The columns a table is built from, one entry per indexed chunk."""

    file_ids: Sequence[str]
    seqs: Sequence[int]
    start_lines: Sequence[int]
    end_lines: Sequence[int]
    contents: Sequence[str]


class ChunkTable:
    """Immutable: row ``doc`` is the index's document ``doc``."""

    def __init__(self, rows: ChunkRows) -> None:
        encoded = [text.encode("utf-8", "surrogatepass") for text in rows.contents]
        self._offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=self._offsets[1:])
        self._content = b"".join(encoded)
        del encoded
        files = list(dict.fromkeys(rows.file_ids))
        number = {file_id: i for i, file_id in enumerate(files)}
        self._files = files
        self._file_of = np.array([number[f] for f in rows.file_ids], dtype=np.int32)
        self._lines = np.column_stack(
            [np.asarray(c, dtype=np.int64) for c in (rows.seqs, rows.start_lines, rows.end_lines)]
        ).reshape(-1, 3)

    def __len__(self) -> int:
        return len(self._file_of)

    @property
    def nbytes(self) -> int:
        arrays = (self._offsets, self._file_of, self._lines)
        return len(self._content) + sum(a.nbytes for a in arrays) + 80 * len(self._files)

    def row(self, doc: int) -> tuple[str, int, int, int, str]:
        """(file id, seq, start line, end line, content) of one document."""
        start, end = int(self._offsets[doc]), int(self._offsets[doc + 1])
        seq, first, last = self._lines[doc].tolist()
        content = self._content[start:end].decode("utf-8", "surrogatepass")
        return self._files[int(self._file_of[doc])], seq, first, last, content
