"""A segment's input: the term rows of whole files, as a loader reads them page by page.

``compact`` turns a page's rows into a few large arrays, so a segment's rows are not one
small object per chunk left to fragment the heap; `Segment.build` then consumes them a
page at a time (`row_parts`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["SegmentRows", "file_ranges", "row_parts"]

Ints = npt.NDArray[np.int64]


class SegmentRows:
    """Chunk rows of whole files, ordered by file then chunk id: a segment's input.

    ``compact`` turns the term data added so far into arrays (a loader calls it per
    page), so a segment's rows are a few large buffers, not one small object per chunk
    left to fragment the heap."""

    __slots__ = ("_parts", "cids", "file_ids", "freqs", "keys", "lengths")

    def __init__(self) -> None:
        self.cids: list[int] = []
        self.file_ids: list[str] = []
        self.lengths: list[int] = []
        self.keys: list[bytes] = []  # not compacted yet
        self.freqs: list[bytes] = []
        self._parts: list[tuple[Ints, Ints, npt.NDArray[np.uint16]]] = []

    def __len__(self) -> int:
        return len(self.cids)

    def add(self, cid: int, file_id: str, length: int, keys: bytes, freqs: bytes) -> None:
        self.cids.append(cid)
        self.file_ids.append(file_id)
        self.lengths.append(length)
        self.keys.append(keys)
        self.freqs.append(freqs)

    def compact(self) -> None:
        if self.keys:
            counts = np.fromiter((len(k) // 8 for k in self.keys), np.int64, len(self.keys))
            keys = np.frombuffer(b"".join(self.keys), dtype="<i8").astype(np.int64)
            freqs = np.frombuffer(b"".join(self.freqs), dtype="<u2").astype(np.uint16)
            self._parts.append((counts, keys, freqs))
            self.keys, self.freqs = [], []

    def take_parts(self) -> list[tuple[Ints, Ints, npt.NDArray[np.uint16]]]:
        """The pages compacted so far, (term count per chunk, keys, frequencies) each,
        handed over: the rows keep their per-chunk lists only."""
        self.compact()
        parts, self._parts = self._parts, []
        return parts


def row_parts(
    parts: list[tuple[Ints, Ints, npt.NDArray[np.uint16]]],
) -> Iterator[tuple[Ints, npt.NDArray[np.int32], npt.NDArray[np.uint16]]]:
    """(keys, documents, frequencies) of each page of rows, each page let go once read."""
    first = 0
    parts.reverse()
    while parts:
        per_doc, keys, freqs = parts.pop()
        docs = np.repeat(np.arange(first, first + len(per_doc), dtype=np.int32), per_doc)
        yield keys, docs, freqs
        first += len(per_doc)


def file_ranges(file_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    ranges: dict[str, tuple[int, int]] = {}
    for doc, file_id in enumerate(file_ids):
        low, _ = ranges.get(file_id, (doc, doc))
        ranges[file_id] = (low, doc + 1)
    return ranges
