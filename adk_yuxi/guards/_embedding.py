"""An embedding tool retriever: cosine similarity between the user's message and each
tool's text, on vectors from any embedding function the host supplies.

Like the BM25 retriever it ranks only the candidates it is given, embeds the registry
once per registry version, and embeds a tool outside the registry (an MCP tool) once,
from its declaration. One embedding call per model step (the query) is the price; a
failing embedder raises, and the retrieval plugin then declares every visible tool.
"""

from __future__ import annotations

import heapq
import math
import threading
from collections.abc import Callable, Mapping, Sequence

from google.adk.tools.base_tool import BaseTool

from ..tools import ToolRegistry, default_registry
from ._bm25 import ToolDocument
from ._retrieval import registry_documents

__all__ = ["Embedder", "EmbeddingToolRetriever", "offline_embed"]

Embedder = Callable[[Sequence[str]], Sequence[Sequence[float]]]
"""Texts in, one vector per text out (any length, the same for every call)."""

_EXTRA_CACHE = 4096


def offline_embed() -> Embedder:
    """The knowledge bases' bundled offline model (the ``knowledge`` extra), in e5's
    "query: " form on both sides, as e5 advises for matching alike texts. On the bench's
    labelled set (`bench/bench_shared_embeddings.py`) recall@5 0.94 against BM25's 0.74,
    and 0.72 for tools embedded as passages."""
    from ..knowledge import OfflineEmbedder

    model = OfflineEmbedder()
    return lambda texts: [model.query(text).tolist() for text in texts]


def _text(document: ToolDocument) -> str:
    return " ".join([document.name, document.display_name, *document.tags, document.description])


def _unit(vector: Sequence[float]) -> tuple[float, ...]:
    norm = math.sqrt(sum(x * x for x in vector))
    return tuple(x / norm for x in vector) if norm else tuple(0.0 for _ in vector)


class EmbeddingToolRetriever:
    blocking = True
    """Each retrieval embeds the question (a model or a network call): the retrieval
    plugin runs it in a worker thread, not on the event loop."""

    def __init__(self, embed: Embedder, registry: ToolRegistry | None = None) -> None:
        self.embed = embed
        self.registry = default_registry if registry is None else registry
        self._lock = threading.Lock()
        self._version = -1
        self._vectors: dict[str, tuple[float, ...]] = {}
        self._extra: dict[tuple[str, str], tuple[float, ...]] = {}
        self.builds = 0

    def _embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        vectors = list(self.embed(texts))
        if len(vectors) != len(texts):
            raise ValueError(f"the embedder returned {len(vectors)} vectors for {len(texts)}")
        return [_unit(v) for v in vectors]

    def vectors(self) -> dict[str, tuple[float, ...]]:
        """The registry's tool vectors; embedded again only when its version moved."""
        version = self.registry.version
        if version == self._version:
            return self._vectors
        with self._lock:
            if version != self._version:
                documents = registry_documents(self.registry)
                embedded = self._embed([_text(d) for d in documents]) if documents else []
                self._vectors = {d.name: v for d, v in zip(documents, embedded, strict=True)}
                self._extra = {}
                self._version = version
                self.builds += 1
            return self._vectors

    def _outside(self, tools: Mapping[str, BaseTool]) -> dict[str, tuple[float, ...]]:
        keys = [(name, tool.description or "") for name, tool in tools.items()]
        missing = [key for key in keys if key not in self._extra]
        if missing and len(self._extra) + len(missing) > _EXTRA_CACHE:
            self._extra.clear()
            missing = keys
        if missing:
            texts = [_text(ToolDocument(name=n, description=d)) for n, d in missing]
            self._extra.update(zip(missing, self._embed(texts), strict=True))
        return {key[0]: self._extra[key] for key in keys}

    def retrieve(self, query: str, candidates: Mapping[str, BaseTool], k: int) -> list[str]:
        if not query.strip() or k <= 0:
            return []
        indexed = self.vectors()
        outside = {n: t for n, t in candidates.items() if n not in indexed}
        vectors = {n: indexed[n] for n in candidates if n in indexed}
        vectors.update(self._outside(outside))
        [q] = self._embed([query])
        scored = [(-sum(a * b for a, b in zip(q, v, strict=False)), n) for n, v in vectors.items()]
        return [name for score, name in heapq.nsmallest(k, scored) if score < 0.0]
