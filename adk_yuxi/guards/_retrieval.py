"""Tool retrievers: which of the tools a model may see now are worth declaring this step.

A retriever only ranks the candidates it is given (the tools already visible), so it can
never show the model anything the gates hide. `BM25ToolRetriever` indexes the registry
once per registry version; tools outside the registry (MCP tools) are indexed on first
sight from their declaration, against the same statistics.
"""

from __future__ import annotations

import heapq
import threading
from collections import Counter
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from google.adk.tools.base_tool import BaseTool

from .._text import query_terms
from ..tools import ToolRegistry, default_registry
from ._bm25 import BM25Index, ToolDocument

__all__ = ["BM25ToolRetriever", "ToolRetriever"]

_EXTRA_CACHE = 4096


@runtime_checkable
class ToolRetriever(Protocol):
    """The interface an embedding retriever implements too."""

    def retrieve(self, query: str, candidates: Mapping[str, BaseTool], k: int) -> list[str]:
        """Up to `k` names out of `candidates` (the tools declared this step, by name),
        best first. Names outside `candidates` must never be returned."""
        ...


def registry_documents(registry: ToolRegistry) -> list[ToolDocument]:
    documents = []
    for tool_id in registry.ids():
        try:
            tool = registry.get(tool_id)
            meta = registry.metadata(tool_id)
        except KeyError:  # unregistered meanwhile; the next version rebuilds anyway
            continue
        documents.append(
            ToolDocument(
                name=tool.name,
                display_name=meta.display_name or "",
                description=tool.description or "",
                tags=tuple(meta.tags),
            )
        )
    return documents


class BM25ToolRetriever:
    """BM25 over id, display name, tags and description, Chinese and English alike."""

    def __init__(self, registry: ToolRegistry | None = None) -> None:
        self.registry = default_registry if registry is None else registry
        self._lock = threading.Lock()
        self._version = -1
        self._index = BM25Index(())
        self._extra: dict[tuple[str, str], dict[str, float]] = {}
        self.builds = 0

    def index(self) -> BM25Index:
        """The index of the registry as it is now; rebuilt only when its version moved."""
        version = self.registry.version
        if version == self._version:
            return self._index
        with self._lock:
            if version != self._version:
                self._index = BM25Index(registry_documents(self.registry))
                self._extra = {}
                self._version = version
                self.builds += 1
            return self._index

    def _extra_weights(self, index: BM25Index, name: str, description: str) -> dict[str, float]:
        key = (name, description)
        weights = self._extra.get(key)
        if weights is None:
            counts = Counter(ToolDocument(name=name, description=description).terms())
            weights = index.weights(counts, sum(counts.values()))
            if len(self._extra) >= _EXTRA_CACHE:
                self._extra.clear()
            self._extra[key] = weights
        return weights

    def retrieve(self, query: str, candidates: Mapping[str, BaseTool], k: int) -> list[str]:
        terms = query_terms(query, characters=True)
        if not terms or k <= 0:
            return []
        index = self.index()
        names = index.names
        # Heap entries are (-score, name): best first, ties broken by name, so a step's
        # declarations do not depend on dict order.
        scored = [(-s, names[i]) for i, s in index.scores(terms).items() if names[i] in candidates]
        for name in candidates.keys() - index.position.keys():
            description = candidates[name].description or ""
            weights = self._extra_weights(index, name, description)
            score = sum(weights.get(t, 0.0) for t in terms)
            if score > 0.0:
                scored.append((-score, name))
        return [name for _, name in heapq.nsmallest(k, scored)]
