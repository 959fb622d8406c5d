"""Would the knowledge bases' offline embedding model help the tool retriever and memory
search? Recall and latency with and without it, on labelled sets.

1. Tool retrieval, per model step: the labelled set of `bench_guards` (62 tools, 117
   questions, 61 Chinese). Recall@k of the BM25 retriever (the default) against the
   embedding retriever (`EmbeddingToolRetriever`) on the offline model, e5's "query: "
   form on both sides (e5's advice for symmetric matching) and "passage: " for the
   tools; µs per retrieval (the question's embedding included: one per model step).
2. Memory search: the 59 facts of `bench_semantic` as one user's memories in
   `SqlMemoryService` (SQLite), asked the 236 questions of three kinds (exact wording,
   paraphrase, cross-lingual). Recall@5 of its full-text search (the default), of
   cosine similarity on the offline model alone, and of the adopted path,
   `SqlMemoryService(embedder=OfflineEmbedder())` (both fused by reciprocal rank);
   milliseconds per search, the question's embedding included, the three alternated
   question by question; and the time to store the facts with and without vectors.

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


FULL_TEXT, COSINE, ADOPTED = "full-text (default)", "offline e5, cosine only", "offline e5, fused"


async def _store_facts(service: SqlMemoryService, texts: list[str]) -> float:
    """Stores the facts as one user's memories; returns the milliseconds it took."""
    started = time.perf_counter()
    await service.add_memory(
        app_name="bench", user_id="u",
        memories=[MemoryEntry(id=f"m{i}", content=types.Content(
            role="user", parts=[types.Part(text=t)])) for i, t in enumerate(texts)],
    )  # fmt: skip
    return (time.perf_counter() - started) * 1000


async def memory(model: OfflineEmbedder, root: Path) -> tuple[list[list[str]], list[list[str]]]:
    """Recall@5 and time per search of full text, cosine alone, and the adopted
    `SqlMemoryService(embedder=...)` (full text and cosine fused, the question's
    embedding included); then the time to store the facts with and without vectors."""
    import json

    facts = json.loads(FACTS.read_text())
    texts = [f"{f['title']}: {f['text']}" for f in facts]
    plain = SqlMemoryService(f"sqlite+aiosqlite:///{root / 'plain.db'}", max_results=5)
    fused = SqlMemoryService(
        f"sqlite+aiosqlite:///{root / 'fused.db'}", max_results=5, embedder=model
    )
    stored = {
        FULL_TEXT: await _store_facts(plain, texts),
        ADOPTED: await _store_facts(fused, texts),
    }
    vectors = model.passages(texts)
    found: dict[str, dict[str, list[int]]] = {FULL_TEXT: {}, COSINE: {}, ADOPTED: {}}
    spent: dict[str, list[float]] = {name: [] for name in found}

    async def ask(service: SqlMemoryService, question: str) -> list[str]:
        reply = await service.search_memory(app_name="bench", user_id="u", query=question)
        return [_text(m) for m in reply.memories]

    for fact, kind, question in labelled_questions(facts):
        answers: dict[str, list[str]] = {}
        for name in (FULL_TEXT, COSINE, ADOPTED):  # alternated, question by question
            started = time.perf_counter()
            if name == COSINE:
                scores = vectors @ model.query(question)
                answers[name] = [texts[i] for i in np.argsort(-scores)[:5]]
            else:
                answers[name] = await ask(plain if name == FULL_TEXT else fused, question)
            spent[name].append(time.perf_counter() - started)
        for name, got in answers.items():
            found[name].setdefault(kind, []).append(int(any(fact["expect"] in a for a in got)))
    await plain.close()
    await fused.close()
    rows = []
    for name, kinds in found.items():
        recalls = [f"{statistics.mean(hits):.2f} ({len(hits)})" for hits in kinds.values()]
        rows.append([name, *recalls, f"{statistics.median(spent[name]) * 1000:.2f}"])
    per = len(texts)
    writes = [[name, f"{ms:.0f}", f"{ms / per:.2f}"] for name, ms in stored.items()]
    return rows, writes


SIZES = (59, 1000, 5000)


async def scale(model: OfflineEmbedder, root: Path) -> list[list[str]]:
    """Milliseconds per fused search as one user's memories grow (the facts plus filler
    memories with random unit vectors: a search reads and ranks every vector of the
    user), against the question's embedding alone, measured in the same loop and
    paired by question."""
    import json

    from adk_yuxi._sql import SqlStore

    facts = json.loads(FACTS.read_text())
    texts = [f"{f['title']}: {f['text']}" for f in facts]
    questions = [q for _, _, q in labelled_questions(facts)][::3]
    store = SqlStore(f"sqlite+aiosqlite:///{root / 'scale.db'}")
    fused = SqlMemoryService(store, max_results=5, embedder=model)
    plain = SqlMemoryService(store, max_results=5)
    await _store_facts(fused, texts)
    rng = np.random.default_rng(7)
    rows, held = [], len(texts)
    for size in SIZES:
        fillers = [f"filler note {n} about topic {n % 97}" for n in range(held, size)]
        await plain.add_memory(
            app_name="bench", user_id="u",
            memories=[MemoryEntry(id=f"f{held + i}", content=types.Content(
                role="user", parts=[types.Part(text=t)])) for i, t in enumerate(fillers)],
        )  # fmt: skip
        vectors = rng.standard_normal((len(fillers), 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        async with store.write() as tx:
            await tx.executemany(
                "INSERT INTO yx_memory_vectors (mid, model, vector) SELECT mid, :model, :v"
                " FROM yx_memories WHERE app_name = 'bench' AND user_id = 'u'"
                " AND memory_id = :id",
                [{"model": model.name, "v": v.astype(np.float16).tobytes(), "id": f"f{held + i}"}
                 for i, v in enumerate(vectors)],
            )  # fmt: skip
        held = size
        spent: dict[str, list[float]] = {"embed": [], "fused": [], "text": []}
        for question in questions:  # alternated
            for name in spent:
                started = time.perf_counter()
                if name == "embed":
                    model.query(question)
                else:
                    service = fused if name == "fused" else plain
                    await service.search_memory(app_name="bench", user_id="u", query=question)
                spent[name].append(time.perf_counter() - started)
        p50 = {name: statistics.median(times) * 1000 for name, times in spent.items()}
        # Paired by question (the same text embedded on both sides): what fusion adds.
        added = statistics.median(
            f - e for f, e in zip(spent["fused"], spent["embed"], strict=True)
        )
        rows.append([f"{size:,}", f"{p50['text']:.2f}", f"{p50['embed']:.1f}",
                     f"{p50['fused']:.1f}", f"{p50['fused'] / p50['embed']:.2f}",
                     f"{added * 1000:.1f}"])  # fmt: skip
    await store.close()
    return rows


def main() -> None:
    model = OfflineEmbedder()
    model.query("warm up")  # the model's load is not a retrieval's time
    print("Tool retrieval (117 questions, 62 tools)")
    header = ["retriever", *(f"R@{k}" for k in KS), "µs per retrieval p50"]
    print(format_table(header, tools(model)))
    with tempfile.TemporaryDirectory(prefix="yuxi-bench-shared-") as tmp:
        rows, writes = asyncio.run(memory(model, Path(tmp)))
        grown = asyncio.run(scale(model, Path(tmp)))
    print("\nMemory search (59 facts as memories), recall@5 (questions)")
    kinds = list(dict.fromkeys(KINDS.values()))
    print(format_table(["search", *kinds, "ms per search p50"], rows))
    print("\nStoring the 59 facts (one add_memory)")
    print(format_table(["service", "ms", "ms per memory"], writes))
    print(f"\nFused search as one user's memories grow ({len(grown)} sizes), ms p50")
    header = ["memories", "full text", "embedding alone", "fused", "fused / embedding",
              "fused - embedding, paired"]  # fmt: skip
    print(format_table(header, grown))


if __name__ == "__main__":
    main()
