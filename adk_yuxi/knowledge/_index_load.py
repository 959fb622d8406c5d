"""Bringing a base's index up to date from the database: only the files that changed.

The index records the version of each file it holds. A refresh lists the base's files
(id and version), tombstones in their segments the files gone or replaced (a mask of
dead documents: filtered at query time, their statistics subtracted), and reads the
term rows of the files new or replaced into new segments. Rows are read a few thousand
at a time, whole files per statement (so a file's rows are one version), and a segment
is built before a page would take it past 65,536 documents (whose numbers then fit in
2 bytes), so a first load holds one segment's rows at a time, never the whole base's.

Small segments (from one-file ingests, or shrunk by deletes) are merged later, off
the query path (`merge_small`), and so is a segment a quarter tombstones: the merge
drops the dead documents.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
from collections.abc import Sequence
from typing import Any

from .._sql.store import SqlStore
from ._index import Bm25Index
from ._segment import SEGMENT_DOCS, Segment, SegmentRows

__all__ = ["LOAD_PAGE", "merge_plan", "merge_small", "refresh"]

LOAD_PAGE = 5000
_FILES_PER_PAGE = 500  # bound parameters per statement (SQLite allows 32,766)
_SMALL = SEGMENT_DOCS // 4  # segments below this are merged...
_MERGE_AT = 4  # ...once there are this many
_PURGE_AT = 0.25  # a segment this share of whose documents are tombstones is purged


async def refresh(
    store: SqlStore,
    kb_id: str,
    held: Bm25Index | None,
    versions: dict[str, int],
    *,
    page_size: int = LOAD_PAGE,
    segment_docs: int = SEGMENT_DOCS,
) -> tuple[Bm25Index, dict[str, int]]:
    """The index of the base as listed now, from ``held`` (holding ``versions``)."""
    async with store.read() as tx:
        listed = await tx.fetchall(
            "SELECT file_id, version, chunk_count FROM yx_kb_files WHERE kb_id = :kb"
            " ORDER BY file_id",
            {"kb": kb_id},
        )
    now = {str(f): int(v) for f, v, _ in listed}
    gone = {f for f, v in versions.items() if now.get(f) != v}
    new = [(str(f), int(n)) for f, v, n in listed if versions.get(str(f)) != int(v)]
    segments: list[Segment] = list(held.segments) if held is not None else []
    if gone:
        segments = _drop(segments, gone)  # masks: cheap enough for the loop
    segments += await _read_segments(store, kb_id, new, page_size, segment_docs)
    if len(new) > 1:
        give_back_memory()
    kept = {f: v for f, v in versions.items() if f not in gone}
    return Bm25Index(segments), {**kept, **{f: now[f] for f, _ in new}}


def give_back_memory() -> None:
    """Returns the heap freed after a load to the system (glibc's ``malloc_trim``):
    otherwise the rows' transient buffers stay counted as resident."""
    with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to do
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)


def _drop(segments: Sequence[Segment], gone: set[str]) -> list[Segment]:
    """Tombstones: each segment marks the files' documents dead, a mask and nothing
    more, so replacing one file of a full segment costs what its mask costs."""
    out = []
    for segment in segments:
        kept = segment.tombstoned(gone)
        if kept is not None:
            out.append(kept)
    return out


def _pages(files: list[tuple[str, int]], page_size: int) -> list[list[str]]:
    """Whole files, about ``page_size`` chunks and at most 500 files a page."""
    pages: list[list[str]] = []
    size = 0
    for file_id, count in files:
        if not pages or (
            pages[-1] and (size + count > page_size or len(pages[-1]) >= _FILES_PER_PAGE)
        ):
            pages.append([])
            size = 0
        pages[-1].append(file_id)
        size += count
    return pages


async def _read_segments(
    store: SqlStore, kb_id: str, files: list[tuple[str, int]], page_size: int, segment_docs: int
) -> list[Segment]:
    built: list[Segment] = []
    rows = SegmentRows()
    counts = dict(files)
    for page in _pages(files, page_size):
        if len(rows) and len(rows) + sum(counts[f] for f in page) > segment_docs:
            # Full: built before the page would take it past the size whose document
            # numbers fit in 2 bytes.
            built.append(await asyncio.to_thread(Segment.build, rows))
            rows = SegmentRows()
        for row in await _term_rows(store, kb_id, page):
            rows.add(int(row[0]), str(row[1]), int(row[2]), bytes(row[3]), bytes(row[4]))
        rows.compact()
        await asyncio.sleep(0)  # let other requests run between pages
    if len(rows):
        built.append(await asyncio.to_thread(Segment.build, rows))
    return built


async def _term_rows(store: SqlStore, kb_id: str, file_ids: list[str]) -> list[Any]:
    """The term rows of these files by file and chunk id, in one statement: SQLite
    reads run on the event loop's thread, so a page is kept to a few thousand rows."""
    params: dict[str, Any] = {f"f{i}": f for i, f in enumerate(file_ids)}
    async with store.read() as tx:
        return await tx.fetchall(
            "SELECT cid, file_id, term_count, term_keys, term_freqs FROM yx_kb_terms"
            f" WHERE kb_id = :kb AND file_id IN ({', '.join(':' + p for p in params)})"
            " ORDER BY file_id, cid",
            {**params, "kb": kb_id},
        )


def merge_plan(segments: Sequence[Segment]) -> list[int]:
    """Which segments to merge now (empty: none): the small ones, once there are
    several; else the one with the largest share of tombstones, once a quarter of it is
    dead (merged alone: its dead documents dropped)."""
    small = [at for at, s in enumerate(segments) if s.live_docs < _SMALL]
    if len(small) >= _MERGE_AT:
        picked, total = [], 0
        for at in sorted(small, key=lambda a: segments[a].live_docs):
            if total + segments[at].live_docs > SEGMENT_DOCS:
                break
            picked.append(at)
            total += segments[at].live_docs
        if len(picked) > 1:
            return sorted(picked)
    shares = [(s.dead_share, at) for at, s in enumerate(segments) if s.dead_share >= _PURGE_AT]
    return [max(shares)[1]] if shares else []


def merge_small(segments: Sequence[Segment], plan: list[int]) -> list[Segment]:
    """The segments with those of ``plan`` merged into one, tombstoned documents dropped
    (array work, no database)."""
    if len(plan) == 1:
        merged = segments[plan[0]].purged()
    else:
        merged = Segment.merge([segments[at] for at in plan])
    rest = [s for at, s in enumerate(segments) if at not in set(plan)]
    return [*rest, merged]
