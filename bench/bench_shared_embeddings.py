"""Would the knowledge bases' offline embedding model help the tool retriever and memory
search? Recall and latency with and without it, on labelled sets.

1. Tool retrieval, per model step: the labelled set of `bench_guards` (62 tools, 117
   questions, 61 Chinese). Recall@k of the BM25 retriever (the default) against the
   embedding retriever (`EmbeddingToolRetriever`) on the offline model, e5's "query: "
   form on both sides (e5's advice for symmetric matching) and "passage: " for the
   tools; µs per retrieval (the question's embedding included: one per model step).
2. Memory search: the 59 facts of `bench_semantic` as one user's memories in
   `SqlMemoryService` (SQLite), asked the 236 questions of three kinds (exact wording,
   paraphrase, cross-lingual). Recall@5 of its full-text search against cosine
   similarity on the offline model; milliseconds per search.

    python -m bench.bench_shared_embeddings
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from adk_yuxi.guards import BM25ToolRetriever, EmbeddingToolRetriever
from adk_yuxi.knowledge import OfflineEmbedder
from adk_yuxi.memory import SqlMemoryService
from bench._timing import format_table
from bench.bench_guards import KS, _catalog, _queries, _recall, registry_of
from bench.bench_semantic import FACTS, KINDS, labelled_questions


def _queries_on_both(model: OfflineEmbedder) -> Callable[[Sequence[str]], np.ndarray]:
    return lambda texts: np.stack([model.query(t) for t in texts])


def _passages_for_tools(model: OfflineEmbedder) -> Callable[[Sequence[str]], np.ndarray]:
    """One text is the question (a model step asks with one), more are tools."""
    return lambda texts: (
        model.query(texts[0])[None, :] if len(texts) == 1 else model.passages(list(texts))
    )


def _text(entry: MemoryEntry) -> str:
    return " ".join(part.text or "" for part in entry.content.parts or [])


def tools(model: OfflineEmbedder) -> list[list[str]]:
    entries, queries = _catalog(), _queries()
    registry = registry_of(entries)
    candidates = {e["id"]: registry.get(e["id"]) for e in entries}
    texts = [q["q"] for q in queries]
    retrievers: dict[str, Any] = {
        "BM25 (default)": BM25ToolRetriever(registry),
        "offline e5, query form both sides": EmbeddingToolRetriever(
            _queries_on_both(model), registry
        ),
        "offline e5, tools as passages": EmbeddingToolRetriever(
            _passages_for_tools(model), registry
        ),
    }
    rows = []
    k = max(KS)
    for name, retriever in retrievers.items():
        retriever.retrieve(texts[0], candidates, k)  # tools embedded or indexed once
        spent, ranked = [], []
        for text in texts:
            started = time.perf_counter()
            ranked.append(retriever.retrieve(text, candidates, k))
            spent.append(time.perf_counter() - started)
        recalls = [f"{_recall(ranked, queries, at):.3f}" for at in KS]
        rows.append([name, *recalls, f"{statistics.median(spent) * 1e6:,.0f}"])
    return rows


async def memory(model: OfflineEmbedder, root: Path) -> list[list[str]]:
    import json

    facts = json.loads(FACTS.read_text())
    service = SqlMemoryService(f"sqlite+aiosqlite:///{root / 'memory.db'}", max_results=5)
    texts = [f"{f['title']}: {f['text']}" for f in facts]
    await service.add_memory(
        app_name="bench", user_id="u",
        memories=[MemoryEntry(id=f"m{i}", content=types.Content(
            role="user", parts=[types.Part(text=t)])) for i, t in enumerate(texts)],
    )  # fmt: skip
    vectors = model.passages(texts)
    found: dict[str, dict[str, list[int]]] = {"full-text (default)": {}, "offline e5": {}}
    spent: dict[str, list[float]] = {name: [] for name in found}
    for fact, kind, question in labelled_questions(facts):
        started = time.perf_counter()
        reply = await service.search_memory(app_name="bench", user_id="u", query=question)
        spent["full-text (default)"].append(time.perf_counter() - started)
        lexical = [" ".join(p.text or "" for p in m.content.parts or []) for m in reply.memories]
        started = time.perf_counter()
        scores = vectors @ model.query(question)
        dense = [texts[i] for i in np.argsort(-scores)[:5]]
        spent["offline e5"].append(time.perf_counter() - started)
        for name, answers in (("full-text (default)", lexical), ("offline e5", dense)):
            hit = int(any(fact["expect"] in a for a in answers))
            found[name].setdefault(kind, []).append(hit)
    await service.close()
    rows = []
    for name, kinds in found.items():
        recalls = [f"{statistics.mean(hits):.2f} ({len(hits)})" for hits in kinds.values()]
        rows.append([name, *recalls, f"{statistics.median(spent[name]) * 1000:.2f}"])
    return rows


def main() -> None:
    model = OfflineEmbedder()
    model.query("warm up")  # the model's load is not a retrieval's time
    print("Tool retrieval (117 questions, 62 tools)")
    header = ["retriever", *(f"R@{k}" for k in KS), "µs per retrieval p50"]
    print(format_table(header, tools(model)))
    with tempfile.TemporaryDirectory(prefix="yuxi-bench-shared-") as tmp:
        rows = asyncio.run(memory(model, Path(tmp)))
    print("\nMemory search (59 facts as memories), recall@5 (questions)")
    kinds = list(dict.fromkeys(KINDS.values()))
    print(format_table(["search", *kinds, "ms per search p50"], rows))


if __name__ == "__main__":
    main()
