"""Dense chunk search: an HNSW index (usearch, int8-quantised) per knowledge base, built
in memory from the vectors on the platform database.

Vectors live in ``yx_kb_vectors``, so every replica of the knowledge server, and a
restart, rebuilds its index without embedding anything again. Building is slow (100,000
vectors: minutes on two busy cores), so the index is also kept serialised beside them
(`_dense_snapshot`): whoever builds it saves it, in the background, and a process
without one restores it and adds or removes the chunks changed since. Writers
(`refresh`, after an ingest or `yuxi kb embed`) build it, so a query rarely has to;
when one must (no snapshot after a restart, or one too old) and the base holds more
than `INLINE_BUILD` vectors, the build runs in the background and the base answers on
its lexical side alone until it is done: a first query is not held for minutes. A
build that fails (damaged vectors) is not tried again by every query: `Backoff`.
An index is labelled
with the base's revision and its vector revision, read before its rows; a query reads
both first and rebuilds on a difference. Hits are only candidates: the query path
reads their rows by chunk id afterwards, so a deleted file never comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .._sql.store import SqlStore
from ._backoff import Backoff
from ._dense_snapshot import load_snapshot, save_snapshot, snapshot_keys
from ._vector_reads import rows_of, vector_count, vector_ids, vector_rows

__all__ = ["VECTOR_DTYPE", "BaseState", "DenseHit", "DenseSearch", "base_states", "vector_label"]

logger = logging.getLogger(__name__)

VECTOR_DTYPE = np.float16  # as stored: half the bytes of float32, no loss for int8 search
_MAX_BASES = 64
SNAPSHOT_MIN = 2000  # vectors: a smaller index builds in well under a second
# Vectors a query still waits to have indexed (real ones: under a second; random ones,
# the worst case: 2 s, 10,000 took 4.3 s). A larger build is left to the background.
INLINE_BUILD = 5000
# Candidates a search keeps while walking the graph (usearch's default is 64). A query
# asks for 20; at 32 the search costs half as much. Measured: docs/knowledge.md.
EXPANSION_SEARCH = 32


class DenseHit(NamedTuple):
    """A candidate of the dense side (a tuple: a query makes twenty, a frozen dataclass
    costs a microsecond each)."""

    cid: int
    similarity: float


@dataclass(frozen=True)
class _Entry:
    label: tuple[str, str]
    model: str
    index: Any  # usearch.index.Index, keyed by chunk id
    size: int
    cids: np.ndarray  # the chunk ids it holds, ascending
    removed: int = 0  # removed since built (usearch keeps their slots)
    unsaved: int = 0  # vectors added or removed since its snapshot was saved or read


@dataclass(frozen=True)
class BaseState:
    """What a query reads of a base before ranking, in one statement with the others."""

    revision: str
    vectors: tuple[str, str] | None  # (vector revision, model); None without vectors

    def dense_label(self, model: str) -> tuple[str, str] | None:
        """The label of a dense index current for this state, when ``model`` made the
        base's vectors."""
        if self.vectors is None or self.vectors[1] != model:
            return None
        return (self.revision, self.vectors[0])


async def base_states(store: SqlStore, kb_ids: Sequence[str]) -> dict[str, BaseState]:
    """Each existing base's revision and vector revision and model, in one statement."""
    params = {f"k{i}": kb for i, kb in enumerate(kb_ids)}
    if not params:
        return {}
    async with store.read() as tx:
        rows = await tx.fetchall(_states_sql(len(params)), params)
    return {
        str(r[0]): BaseState(str(r[1]), None if r[2] is None else (str(r[2]), str(r[3])))
        for r in rows
    }


@functools.lru_cache(maxsize=64)
def _states_sql(count: int) -> str:
    return (
        "SELECT b.kb_id, b.revision, e.revision, e.model FROM yx_kb_bases b"
        " LEFT JOIN yx_kb_embeddings e ON e.kb_id = b.kb_id"
        f" WHERE b.kb_id IN ({', '.join(f':k{i}' for i in range(count))})"
    )


async def vector_label(store: SqlStore, kb_id: str) -> tuple[tuple[str, str], str] | None:
    """The base's (revision, vector revision) and embedding model; None without vectors."""
    state = (await base_states(store, [kb_id])).get(kb_id)
    if state is None or state.vectors is None:
        return None
    return (state.revision, state.vectors[0]), state.vectors[1]


class DenseSearch:
    """The dense indexes of one store's bases, least recently used dropped first."""

    def __init__(
        self,
        snapshot_min: int = SNAPSHOT_MIN,
        inline_build: int = INLINE_BUILD,
        retry: Backoff | None = None,
    ) -> None:
        self.retry = retry or Backoff()  # an index that failed to build, by (base, label)
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}
        self._saves: dict[str, asyncio.Task[None]] = {}
        self._builds: dict[str, asyncio.Task[None]] = {}
        self.snapshot_min = snapshot_min
        self.inline_build = inline_build

    def forget(self, kb_id: str) -> None:
        self._entries.pop(kb_id, None)

    async def close(self) -> None:
        """Waits for the builds a query started and the snapshots being saved (a CLI
        ingest leaves its index behind, and the next process restores it)."""
        while self._builds or self._saves:
            tasks = [*self._builds.values(), *self._saves.values()]
            await asyncio.gather(*tasks, return_exceptions=True)

    async def refresh(self, store: SqlStore, kb_id: str, model: str) -> None:
        """Brings the base's index up to its vectors now, and saves its snapshot when due:
        called where vectors are written, so the next query finds the index ready. The
        vectors are written by then: an index that cannot be built (damaged vectors)
        fails no write, only leaves the base lexical, as a query's failed build does."""
        found = await vector_label(store, kb_id)
        if found is not None and found[1] == model:
            entry = self._entries.get(kb_id)
            if entry is None or entry.label != found[0]:
                try:
                    await self._load(store, kb_id, found[0], model)
                except Exception as exc:
                    self._failed(kb_id, found[0], exc)

    @property
    def nbytes(self) -> int:
        return sum(int(e.index.memory_usage) for e in self._entries.values())

    async def search(
        self, store: SqlStore, kb_id: str, label: tuple[str, str], model: str,
        vector: np.ndarray, k: int, file_id: str | None,
    ) -> list[DenseHit]:  # fmt: skip
        """The ``k`` chunks nearest ``vector``, from an index labelled ``label`` (as
        `vector_label` read it just before)."""
        if file_id is not None:
            return await _file_hits(store, kb_id, file_id, vector, k)
        entry = self._entries.get(kb_id)
        if entry is None or entry.label != label:
            # Being built, or its build failed a moment ago: the lexical side answers.
            if kb_id in self._builds or self.retry.waiting((kb_id, label)):
                return []
            try:
                entry = await self._load(store, kb_id, label, model, wait=False)
            except Exception as exc:  # damaged vectors: the query goes on, lexically
                self._failed(kb_id, label, exc)
                return []
            if entry is None:
                return []
        self._entries.move_to_end(kb_id)
        if not entry.size:
            return []
        if np.size(vector) != entry.index.ndim:  # usearch raises: lexical instead
            logger.warning(
                "question of %d dimensions, the index of %r has %d: lexical only",
                np.size(vector), kb_id, entry.index.ndim,
            )  # fmt: skip
            return []
        # One thread: a single question gains nothing from usearch's pool, only the hop.
        matches = entry.index.search(np.asarray(vector, np.float32), min(k, entry.size), threads=1)
        return [
            DenseHit(key, 1.0 - distance)
            for key, distance in zip(matches.keys.tolist(), matches.distances.tolist(), strict=True)
        ]

    async def _load(
        self, store: SqlStore, kb_id: str, label: tuple[str, str], model: str,
        wait: bool = True,
    ) -> _Entry | None:  # fmt: skip
        """The base's index brought to ``label``: restored, updated, or built. Without
        ``wait`` (a query), a build of more than `inline_build` vectors is started in
        the background instead, and None returned."""
        lock = self._locks.setdefault(kb_id, asyncio.Lock())
        async with lock:
            current = self._entries.get(kb_id)
            if current is not None and current.label == label:
                return current
            if not wait and kb_id in self._builds:  # started while this query waited
                return None
            entry = None
            if current is None or current.model != model:
                current = await _restored(store, kb_id, model)
            if current is not None:
                entry = await _updated(store, kb_id, label, current)
            if entry is not None:
                return self._keep(store, kb_id, entry)
            if not wait and await vector_count(store, kb_id) > self.inline_build:
                self._build_later(store, kb_id, label, model)
                return None
            return await self._build_now(store, kb_id, label, model)

    async def _build_now(
        self, store: SqlStore, kb_id: str, label: tuple[str, str], model: str
    ) -> _Entry:
        """A full build from the base's vectors (its lock held)."""
        rows = await vector_rows(store, kb_id)
        entry = await asyncio.to_thread(_build, label, model, rows)
        del rows
        return self._keep(store, kb_id, entry)

    def _keep(self, store: SqlStore, kb_id: str, entry: _Entry) -> _Entry:
        self._entries[kb_id] = entry
        while len(self._entries) > _MAX_BASES:
            self._entries.popitem(last=False)
        if entry.size >= self.snapshot_min and 4 * entry.unsaved >= entry.size:
            self._schedule_save(store, kb_id, entry)
        return entry

    def _build_later(self, store: SqlStore, kb_id: str, label: tuple[str, str], model: str) -> None:
        held = self._entries.get(kb_id)

        async def build() -> None:
            async with self._locks[kb_id]:
                if self._entries.get(kb_id) is held:  # (a writer's refresh may have built)
                    await self._build_now(store, kb_id, label, model)

        task = asyncio.ensure_future(build())
        self._builds[kb_id] = task
        task.add_done_callback(functools.partial(self._built, kb_id, label))

    def _built(self, kb_id: str, label: tuple[str, str], task: asyncio.Task[None]) -> None:
        self._builds.pop(kb_id, None)
        if not task.cancelled() and task.exception() is not None:
            self._failed(kb_id, label, task.exception())

    def _failed(self, kb_id: str, label: tuple[str, str], exc: BaseException | None) -> None:
        """A failed build is logged, and not tried again for this label until `retry`
        says (a change to the base, a new label, tries at once)."""
        wait = self.retry.failed((kb_id, label))
        logger.warning(
            "dense index of %r not built (%r); lexical only for %.0f s", kb_id, exc, wait
        )

    def _schedule_save(self, store: SqlStore, kb_id: str, entry: _Entry) -> None:
        if kb_id not in self._saves:
            task = asyncio.ensure_future(self._save(store, kb_id, entry))
            self._saves[kb_id] = task
            task.add_done_callback(functools.partial(self._saved, kb_id))

    def _saved(self, kb_id: str, task: asyncio.Task[None]) -> None:
        """A failed save is logged and left for the next build: the index itself is
        fine, only a later process restores nothing."""
        self._saves.pop(kb_id, None)
        if not task.cancelled() and task.exception() is not None:
            logger.warning("dense index of %r not saved: %r", kb_id, task.exception())

    async def _save(self, store: SqlStore, kb_id: str, entry: _Entry) -> None:
        """Serialises the index (under the base's lock: no add runs meanwhile) and
        writes it; the entry then counts nothing unsaved."""
        async with self._locks[kb_id]:
            entry = self._entries.get(kb_id, entry)
            data = await asyncio.to_thread(entry.index.save)
        await save_snapshot(store, kb_id, entry.model, data)
        if self._entries.get(kb_id) is entry:
            self._entries[kb_id] = dataclasses.replace(entry, unsaved=0)


def _index_class() -> Any:
    """usearch's `Index`, loaded after onnxruntime when that is installed: usearch 2.26
    loaded first makes the later import of onnxruntime 1.32 (OCR, markitdown) segfault
    the process; the other order is safe."""
    with contextlib.suppress(ImportError):
        import onnxruntime  # noqa: F401
    from usearch.index import Index

    return Index


def _build(label: tuple[str, str], model: str, rows: list[Any]) -> _Entry:
    Index = _index_class()
    dims = len(bytes(rows[0][1])) // 2 if rows else 1
    index = Index(ndim=dims, metric="cos", dtype="i8", expansion_search=EXPANSION_SEARCH)
    keys = np.fromiter((int(r[0]) for r in rows), np.uint64, len(rows))
    if rows:
        matrix = np.frombuffer(b"".join(bytes(r[1]) for r in rows), VECTOR_DTYPE)
        index.add(keys, matrix.reshape(len(rows), dims))  # float16 as stored: no copy
    size = len(rows)
    return _Entry(label, model, index, size, np.sort(keys.astype(np.int64)), unsaved=size)


async def _restored(store: SqlStore, kb_id: str, model: str) -> _Entry | None:
    """The base's saved index, as a held entry of no label, for `_updated` to bring up
    to date; None without a snapshot of ``model``."""
    try:
        index = await load_snapshot(store, kb_id, model, _index_class())
    except Exception as exc:  # a cache: a build replaces it (noted, as a failed save is)
        logger.warning("dense index of %r not restored: %r", kb_id, exc)
        return None
    if index is None:
        return None
    index.expansion_search = EXPANSION_SEARCH
    cids = snapshot_keys(index)
    return _Entry(("", ""), model, index, len(cids), cids)


async def _updated(
    store: SqlStore, kb_id: str, label: tuple[str, str], held: _Entry
) -> _Entry | None:
    """The held index brought to the base's vectors as they are now, by chunk id: the
    vectors of chunks gone removed, the new ones read and added (a file ingested adds
    its own, nothing is rebuilt). None when a full build is due: the base changed by
    more than half, or a quarter of the index's slots are removed ones."""
    now = await vector_ids(store, kb_id)
    gone = np.setdiff1d(held.cids, now, assume_unique=True)
    new = np.setdiff1d(now, held.cids, assume_unique=True)
    removed = held.removed + len(gone)
    if not held.size or 2 * len(new) > len(now) or 4 * removed > len(now) + 64:
        return None
    if len(gone):
        held.index.remove(gone.astype(np.uint64))  # marks: cheap, on the loop
    rows = await rows_of(store, new.tolist())
    if rows:
        dims = held.index.ndim
        matrix = np.frombuffer(b"".join(bytes(r[1]) for r in rows), VECTOR_DTYPE)
        keys = np.fromiter((int(r[0]) for r in rows), np.uint64, len(rows))
        vectors = matrix.reshape(len(rows), dims).astype(np.float32)
        await asyncio.to_thread(_add, held.index, keys, vectors)
    cids = np.union1d(np.setdiff1d(held.cids, gone), [int(r[0]) for r in rows]).astype(np.int64)
    unsaved = held.unsaved + len(gone) + len(rows)
    return _Entry(label, held.model, held.index, len(cids), cids, removed, unsaved)


def _add(index: Any, keys: np.ndarray, vectors: np.ndarray) -> None:
    """Adds the keys it does not hold yet (an update cancelled meanwhile may have added
    some: its thread runs to the end); every core for a large batch."""
    fresh = ~np.asarray(index.contains(keys), dtype=bool)
    if fresh.any():
        index.add(keys[fresh], vectors[fresh], threads=0 if fresh.sum() > 1000 else 1)


async def _file_hits(
    store: SqlStore, kb_id: str, file_id: str, vector: np.ndarray, k: int
) -> list[DenseHit]:
    """Exact search over one file's vectors, read fresh (a file is small)."""
    async with store.read() as tx:
        rows = await tx.fetchall(
            "SELECT cid, vector FROM yx_kb_vectors WHERE file_id = :f AND kb_id = :kb",
            {"f": file_id, "kb": kb_id},
        )
    width = np.size(vector) * np.dtype(VECTOR_DTYPE).itemsize
    rows = [r for r in rows if len(r[1]) == width]  # of other dimensions: not comparable
    if not rows:
        return []
    matrix = np.stack([np.frombuffer(bytes(r[1]), VECTOR_DTYPE) for r in rows])
    scores = matrix.astype(np.float32) @ vector.astype(np.float32)
    order = np.argsort(-scores)[:k]
    return [DenseHit(int(rows[i][0]), float(scores[i])) for i in order]
