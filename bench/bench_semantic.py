"""Hybrid retrieval: quality by kind of question, latency against the lexical store,
embedding throughput of the offline default.

In one run:

1. Quality: the labelled set `bench/data/semantic_facts.json` (59 facts, each its own
   file, half Chinese, half English, beside the sample corpus of `agents/knowledge`)
   with 236 questions of three kinds: exact wording, paraphrase (same language), and
   cross-lingual (the other language). Recall@5 per kind for the lexical store, the
   dense index alone, hybrid (reciprocal rank fusion) and bm25s (the lexical anchor).
   The corpus is ingested with the offline embedding model: ingest MB/s with
   embeddings, passages per second, and the time one question takes to embed.
2. Latency at ``--chunks`` (synthetic text, synthetic random unit vectors: the worst
   case for an HNSW graph, which real embeddings' clusters make cheaper): hybrid query
   p50/p95 against today's lexical store query on the same base, each query's median
   over three interleaved passes. The main row excludes the question's embedding: its
   vector is known (the store's query cache), so neither a model nor a thread runs.
   Beside it, cold questions: a synthetic vector computed in the worker thread that
   would run the model (the hop alone), the offline model embedding each question, and
   the embedding alone. Also the first query of a process: the lexical index load, the
   dense index built (no saved one: the query answers lexically, the build runs in the
   background) and restored (saved beside the vectors), and when the dense side answers.

    python -m bench.bench_semantic [--chunks 100000] [--queries 200] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from adk_yuxi._text import query_terms
from adk_yuxi.access import AccessRepository, User
from adk_yuxi.knowledge import KnowledgeStore, OfflineEmbedder
from adk_yuxi.knowledge._dense import VECTOR_DTYPE, DenseSearch, vector_label
from bench._timing import format_table
from bench.bench_knowledge import (
    CORPUS,
    Corpus,
    bm25s_index,
    ingest,
    percentiles,
    timed,
)

HERE = Path(__file__).parent
FACTS = HERE / "data" / "semantic_facts.json"
KINDS = {"exact": "exact", "paraphrase": "paraphrase", "paraphrase2": "paraphrase",
         "cross": "cross-lingual"}  # fmt: skip
SYNTHETIC_MODEL = "synthetic-384"


def labelled_questions(facts: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], str, str]]:
    """(fact, kind, question) for every question a fact of the labelled set has."""
    for fact in facts:
        for field, kind in KINDS.items():
            if question := fact.get(field):
                yield fact, kind, question


KNOWN = "hybrid, question vector known (cached)"


class SyntheticEmbedder:
    """Unit vectors seeded by the text: free to compute, so latency rows time the index
    and the fusion, not a model."""

    name = SYNTHETIC_MODEL

    def _one(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        row = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
        return row / np.linalg.norm(row)

    def passages(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._one(t) for t in texts])

    def query(self, text: str) -> np.ndarray:
        return self._one(text)


def _bm25s(retriever: Any, query: str) -> list[int]:
    """bm25s's top five; none when no query term is in its vocabulary (it raises)."""
    terms = [t for t in query_terms(query) if t in retriever.vocab_dict]
    if not terms:
        return []
    ids, _ = retriever.retrieve([terms], k=5, show_progress=False, n_threads=0)
    return [int(i) for i in ids[0]]


async def _store(path: Path, embedder: Any, **options: Any) -> KnowledgeStore:
    store = KnowledgeStore(f"sqlite+aiosqlite:///{path}", embedder=embedder, **options)
    await store.prepare()
    return store


async def quality(root: Path) -> list[list[str]]:
    facts = json.loads(FACTS.read_text())
    docs = root / "facts"
    docs.mkdir()
    paths = sorted(CORPUS.glob("*.md"))
    for n, fact in enumerate(facts):
        path = docs / f"fact-{n:03d}.md"
        path.write_text(f"# {fact['title']}\n\n{fact['text']}\n", encoding="utf-8")
        paths.append(path)
    embedder = OfflineEmbedder()
    started = time.perf_counter()
    embedder.query("warm up")  # loads the model: timed apart
    load_s = time.perf_counter() - started
    store = await _store(root / "quality.db", embedder)
    await AccessRepository(store.store).save_user(User(id="bench"))
    await store.create_kb("facts", creator_id="bench", kb_id="facts")
    size = sum(p.stat().st_size for p in paths)
    started = time.perf_counter()
    for path in paths:
        await store.ingest("facts", path)
    ingest_s = time.perf_counter() - started
    lexical = await _store(root / "quality.db", None)
    async with store.store.read() as tx:
        rows = await tx.fetchall("SELECT cid, content FROM yx_kb_chunks ORDER BY cid")
    texts = [str(r[1]) for r in rows]
    by_cid = {int(r[0]): str(r[1]) for r in rows}
    started = time.perf_counter()
    embedder.passages(texts)
    passages_per_s = len(texts) / (time.perf_counter() - started)
    retriever = bm25s_index(texts)
    dense = DenseSearch()
    found = await vector_label(store.store, "facts")
    assert found is not None
    names = ["lexical store", "dense", "hybrid", "bm25s"]
    hits: dict[str, dict[str, list[int]]] = {n: {k: [] for k in KINDS.values()} for n in names}
    embed_s: list[float] = []
    for fact, kind, question in labelled_questions(facts):
        started = time.perf_counter()
        vector = embedder.query(question)
        embed_s.append(time.perf_counter() - started)
        near = await dense.search(store.store, "facts", found[0], found[1], vector, 5, None)
        answers = {
            "lexical store": [h.content for h in await lexical.query("facts", question)],
            "dense": [by_cid[h.cid] for h in near],
            "hybrid": [h.content for h in await store.query("facts", question)],
            "bm25s": [texts[i] for i in _bm25s(retriever, question)],
        }
        for name, contents in answers.items():
            hits[name][kind].append(int(any(fact["expect"] in c for c in contents)))
    await store.close()
    await lexical.close()
    counts = {k: len(v) for k, v in hits["hybrid"].items()}
    rows_out = [
        [f"recall@5 ({sum(counts.values())} labelled)", name]
        + [f"{statistics.mean(hits[name][kind]):.2f}" for kind in counts]
        for name in names
    ]
    note = ", ".join(f"{kind} {n}" for kind, n in counts.items())
    rows_out.append(["questions per kind", note, "", "", ""])
    rows_out.append(
        ["offline model", f"load {load_s:.1f} s", f"{passages_per_s:.1f} passages/s",
         f"query embed p50 {statistics.median(embed_s) * 1000:.0f} ms",
         f"ingest+embed {size / ingest_s / 1e3:.2f} KB/s ({len(texts)} chunks, {size} B)"]
    )  # fmt: skip
    return rows_out


async def _synthetic_vectors(store: KnowledgeStore, kb_id: str) -> None:
    """Unit vectors for every chunk, written as an embedding run would."""
    embedder = SyntheticEmbedder()
    async with store.store.write() as tx:
        await tx.execute(
            "INSERT INTO yx_kb_embeddings (kb_id, model, dims, revision)"
            " VALUES (:kb, :m, 384, 'r1')",
            {"kb": kb_id, "m": SYNTHETIC_MODEL},
        )
        rows = await tx.fetchall(
            "SELECT cid, file_id, content FROM yx_kb_chunks WHERE kb_id = :kb", {"kb": kb_id}
        )
        for at in range(0, len(rows), 5000):
            batch = rows[at : at + 5000]
            vectors = embedder.passages([str(r[2])[:50] for r in batch]).astype(VECTOR_DTYPE)
            await tx.executemany(
                "INSERT INTO yx_kb_vectors (cid, kb_id, file_id, vector)"
                " VALUES (:cid, :kb, :f, :v)",
                [{"cid": int(r[0]), "kb": kb_id, "f": r[1], "v": v.tobytes()}
                 for r, v in zip(batch, vectors, strict=True)],
            )  # fmt: skip


async def _dense_answers(store: KnowledgeStore, question: str) -> bool:
    """Whether the dense side is among the signals of the question's hits (random
    vectors: its nearest always make the top ten once its index is ready)."""
    return any("dense" in hit.signals for hit in await store.query("big", question))


class _QuestionTimed:
    """The synthetic vector of a question, after the offline model embedded it for real
    (its result dropped): a cold query with the model's time, on the synthetic base."""

    name = SYNTHETIC_MODEL

    def __init__(self, model: Any) -> None:
        self.model = model
        self.synthetic = SyntheticEmbedder()

    def passages(self, texts: list[str]) -> np.ndarray:
        return self.synthetic.passages(texts)

    def query(self, text: str) -> np.ndarray:
        self.model.query(text)
        return self.synthetic.query(text)


class _Given:
    """Question vectors computed before the timing: the query path without a model."""

    name = SYNTHETIC_MODEL

    def __init__(self, questions: list[str]) -> None:
        synthetic = SyntheticEmbedder()
        self.vectors = {q: synthetic.query(q) for q in questions}

    def passages(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def query(self, text: str) -> np.ndarray:
        return self.vectors[text]


async def latency(chunks: int, n_queries: int, root: Path, model: Any) -> list[list[str]]:
    corpus = Corpus()
    paragraphs = corpus.paragraphs(chunks)
    queries = corpus.queries(paragraphs, n_queries)
    db = root / f"latency-{chunks}.db"
    lexical = await _store(db, None)
    await AccessRepository(lexical.store).save_user(User(id="bench"))
    await lexical.create_kb("big", creator_id="bench", kb_id="big")
    files = root / f"files-{chunks}"
    files.mkdir()
    await ingest(lexical, "big", paragraphs, files)
    await _synthetic_vectors(lexical, "big")
    asked = [q for _, q in queries]
    started = time.perf_counter()
    await lexical.query("big", queries[0][1])
    lexical_build = time.perf_counter() - started
    # The first hybrid query of a process: without a saved dense index it answers
    # lexically and starts the build in the background (saved when done); with one, it
    # restores it. Each time, also when the dense side first answers.
    first: list[float] = []
    for _ in range(2):
        opened = await _store(db, _Given(asked), query_cache=0)
        started = time.perf_counter()
        await opened.query("big", queries[0][1])
        first.append(time.perf_counter() - started)
        while True:  # (polled as a client would: the build has no public event)
            if await _dense_answers(opened, queries[0][1]):
                break
            await asyncio.sleep(0.2)
        first.append(time.perf_counter() - started)
        started = time.perf_counter()
        await opened.close()
        first.append(time.perf_counter() - started)
    # The target row: the question's vector is known (in the query cache, filled by a
    # pass below), so no embedding and no thread runs. Beside it, cold questions: a
    # synthetic vector computed in the worker thread (the thread hop of a cold query,
    # without a model's time), and the offline model embedding each question.
    known = await _store(db, _Given(asked))
    threaded = await _store(db, _Given(asked), query_cache=0)
    embedded = await _store(db, _QuestionTimed(model), query_cache=0) if model else None
    stores = {"lexical store": lexical, KNOWN: known,
              "hybrid, cold: vector computed in a worker thread": threaded}  # fmt: skip
    if embedded is not None:
        stores["hybrid + offline embedding, cold"] = embedded
    for store in stores.values():  # indexes loaded: the first query is timed above
        await store.query("big", queries[0][1])
    for question in asked:
        await known.query("big", question, top_k=10)

    def contender(store: KnowledgeStore) -> Any:
        async def one(q: str) -> None:
            await store.query("big", q, top_k=10)

        return one

    contenders = {name: contender(store) for name, store in stores.items()}
    embed_s: list[float] = []
    if model is not None:

        async def embed_only(q: str) -> None:
            started = time.perf_counter()
            model.query(q)
            embed_s.append(time.perf_counter() - started)

        contenders["offline embedding of the question alone"] = embed_only
    samples = await timed(queries, contenders)
    for store in stores.values():
        await store.close()
    rows = []
    p50 = {}
    for name, per_language in samples.items():
        everything = per_language["en"] + per_language["zh"]
        p50[name], p95 = percentiles(everything)
        rows.append([f"{chunks} chunks", name, f"p50 {p50[name] * 1000:.2f} ms",
                     f"p95 {p95 * 1000:.2f} ms", ""])  # fmt: skip
    anchor = p50["lexical store"]
    for name in p50:
        if name != "lexical store":
            target = "target <= 2x" if name == KNOWN else ""
            rows.append([f"{chunks} chunks", f"{name} / lexical store (p50)",
                         f"{p50[name] / anchor:.2f}x", target, ""])  # fmt: skip
    rows.append([f"{chunks} chunks", "first query: lexical index load", f"{lexical_build:.1f} s",
                 "", ""])  # fmt: skip
    rows.append([f"{chunks} chunks", "first hybrid query, no saved dense index",
                 f"{first[0]:.1f} s", f"dense answers after {first[1]:.1f} s",
                 f"closing (build's save) {first[2]:.1f} s"])  # fmt: skip
    rows.append([f"{chunks} chunks", "first hybrid query, saved dense index restored",
                 f"{first[3]:.1f} s", f"dense answers after {first[4]:.1f} s", ""])  # fmt: skip
    return rows


async def run(
    chunks: list[int], n_queries: int, quality_rows: bool = True, with_model: bool = True
) -> None:
    with tempfile.TemporaryDirectory(prefix="yuxi-bench-semantic-") as tmp:
        root = Path(tmp)
        if quality_rows:
            rows = await quality(root)
            print(format_table(["", "contender", "exact", "paraphrase", "cross-lingual"], rows))
        out: list[list[str]] = []
        model = OfflineEmbedder() if with_model else None
        if model is not None:
            model.query("warm up")  # the model's load is not a query's time
        for size in chunks:
            out.extend(await latency(size, n_queries, root, model))
        print(format_table(["corpus", "contender", "p50", "p95", "note"], out))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, nargs="+", default=[100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="10,000 chunks, 100 queries")
    parser.add_argument("--latency-only", action="store_true", help="skip the quality rows")
    parser.add_argument(
        "--no-model", action="store_true", help="latency without the offline model's rows"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.chunks, args.queries = [10_000], 100
    asyncio.run(run(args.chunks, args.queries, not args.latency_only, not args.no_model))


if __name__ == "__main__":
    main()
