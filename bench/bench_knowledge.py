"""Knowledge bases: ingest throughput, query latency by language, recall, MCP overhead.

In one run, on one SQLite database:

1. Ingest of a synthetic corpus (half Chinese, half English, ~500-character chunks) as
   Markdown files through `KnowledgeStore.ingest`: MB/s of source text.
2. Query latency (p50/p95, top 10) per language for the store's own `query`, for
   `query_kb` end to end through MCP (streamable HTTP, JSON responses, on loopback;
   structured results alone, as our ADK toolset asks, and with their JSON text copy,
   as a plain MCP client gets them), for an empty MCP tool call on the same transport
   (the protocol's floor), and for bm25s, an in-memory BM25 library, over the same
   chunks and the same query terms. The contenders take turns on each query, in a
   shuffled order; each query's latency is its median over three passes. Also: the
   time the first query takes to load and build the index.
3. Recall@5 on the labelled queries of the sample corpus (`bench/data/
   knowledge_queries.json`, half Chinese) for the store and for bm25s.

    python -m bench.bench_knowledge [--chunks 10000 100000] [--queries 200] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from adk_yuxi._text import document_terms, query_terms
from adk_yuxi.access import AccessRepository, ShareConfig, User
from adk_yuxi.knowledge import (
    RESULT_FORM_HEADER,
    DelegationKeys,
    KnowledgeService,
    KnowledgeStore,
    build_knowledge_server,
    serve_knowledge_http,
)
from bench._timing import format_table

HERE = Path(__file__).parent
CORPUS = HERE.parent / "agents" / "knowledge" / "corpus"
LABELLED = HERE / "data" / "knowledge_queries.json"
CHUNKS_PER_FILE = 100
PASSES = 3


class Corpus:
    """Zipf-distributed words and characters, so common terms match most chunks (as in
    real text) and rare ones few."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        syllables = ["ka", "lo", "mi", "ren", "sto", "va", "qu", "in", "dar", "pe", "tol", "ix"]
        words = {
            "".join(self.rng.choice(syllables) for _ in range(self.rng.randint(1, 4)))
            for _ in range(20000)
        }
        self.words = sorted(words)[:6000]
        self.hanzi = [chr(0x4E00 + i * 5) for i in range(3500)]
        self.word_weights = [1 / (rank + 1) ** 1.05 for rank in range(len(self.words))]
        self.hanzi_weights = [1 / (rank + 1) ** 1.05 for rank in range(len(self.hanzi))]

    def english(self) -> str:
        words = self.rng.choices(self.words, self.word_weights, k=110)
        text = " ".join(words)
        return text[: max(text.find(" ", 500), 500)] + "."

    def chinese(self) -> str:
        chars = self.rng.choices(self.hanzi, self.hanzi_weights, k=170)
        return "".join(c + ("，" if i % 17 == 16 else "") for i, c in enumerate(chars)) + "。"

    def paragraphs(self, count: int) -> list[str]:
        return [self.chinese() if i % 2 else self.english() for i in range(count)]

    def queries(self, paragraphs: list[str], count: int) -> list[tuple[str, str]]:
        """(language, query) pairs, half each: a few words or characters of one chunk."""
        out: list[tuple[str, str]] = []
        for i in range(count):
            chinese = i % 2 == 1
            source = paragraphs[self.rng.randrange(len(paragraphs) // 2) * 2 + int(chinese)]
            if chinese:
                run = source.replace("，", "").replace("。", "")
                at = self.rng.randrange(len(run) - 6)
                out.append(("zh", run[at : at + self.rng.randint(4, 6)]))
            else:
                words = source.rstrip(".").split()
                at = self.rng.randrange(len(words) - 4)
                out.append(("en", " ".join(words[at : at + self.rng.randint(3, 4)])))
        return out


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


async def timed(
    queries: list[tuple[str, str]],
    contenders: dict[str, Callable[[str], Awaitable[Any]]],
    passes: int = PASSES,
) -> dict[str, dict[str, list[float]]]:
    """Per contender and language, each query's median latency over ``passes`` passes.

    The contenders take turns on each query, so a burst of load from elsewhere on a
    shared machine lands on all of them alike, in an order shuffled for every query and
    pass: what ran just before a call decides what is left in the caches (bm25s sweeps
    them), and a rotation would keep each contender behind the same one throughout."""
    samples: dict[str, list[list[float]]] = {name: [[] for _ in queries] for name in contenders}
    names = list(contenders)
    order = random.Random(11)
    for _ in range(passes):
        for i, (_, query) in enumerate(queries):
            for name in order.sample(names, len(names)):
                start = time.perf_counter()
                await contenders[name](query)
                samples[name][i].append(time.perf_counter() - start)
    out: dict[str, dict[str, list[float]]] = {}
    for name, per_query in samples.items():
        out[name] = {"en": [], "zh": []}
        for (language, _), runs in zip(queries, per_query, strict=True):
            out[name][language].append(statistics.median(runs))
    return out


def bm25s_index(texts: list[str]) -> Any:
    import bm25s

    retriever = bm25s.BM25()
    retriever.index([document_terms(t) for t in texts], show_progress=False)
    return retriever


def bm25s_search(retriever: Any, query: str, k: int) -> list[int]:
    vocab = retriever.vocab_dict
    terms = [t for t in query_terms(query) if t in vocab] or [""]
    ids, _ = retriever.retrieve([terms], k=k, show_progress=False, n_threads=0)
    return [int(i) for i in ids[0]]


async def ingest(store: KnowledgeStore, kb_id: str, paragraphs: list[str], root: Path) -> float:
    """Writes the files, then times their ingestion; returns MB/s of source bytes."""
    paths = []
    for at in range(0, len(paragraphs), CHUNKS_PER_FILE):
        path = root / f"part-{at // CHUNKS_PER_FILE:05d}.md"
        path.write_text("\n\n".join(paragraphs[at : at + CHUNKS_PER_FILE]), encoding="utf-8")
        paths.append(path)
    size = sum(p.stat().st_size for p in paths)
    start = time.perf_counter()
    for path in paths:
        await store.ingest(kb_id, path)
    return size / (time.perf_counter() - start) / 1e6


async def empty_call_server() -> Any:
    from mcp.server.mcpserver import MCPServer

    server: MCPServer = MCPServer(name="floor")

    @server.tool(name="ping")
    async def ping() -> str:
        """Does nothing."""
        return "ok"

    return server


async def bench_size(chunks: int, n_queries: int, root: Path) -> list[list[str]]:
    from tests.knowledge.mcp_client import mcp_session

    corpus = Corpus()
    paragraphs = corpus.paragraphs(chunks)
    queries = corpus.queries(paragraphs, n_queries)
    store = KnowledgeStore(f"sqlite+aiosqlite:///{root / f'kb-{chunks}.db'}")
    access = AccessRepository(store.store)
    await store.prepare()
    await access.save_user(User(id="bench"))
    kb = await store.create_kb("bench", creator_id="bench", kb_id="bench", share=ShareConfig())
    (root / str(chunks)).mkdir()
    mb_per_s = await ingest(store, kb.kb_id, paragraphs, root / str(chunks))
    async with store.store.read() as tx:
        texts = [r[0] for r in await tx.fetchall("SELECT content FROM yx_kb_chunks ORDER BY cid")]
    retriever = await asyncio.to_thread(bm25s_index, texts)
    del texts
    start = time.perf_counter()
    await store.query("bench", queries[0][1], top_k=10)  # loads and builds the index
    build_s, index_mb = time.perf_counter() - start, store.index_bytes / 1e6

    keys = DelegationKeys.generate()
    service = KnowledgeService(store, access, keys.verifier())
    token = keys.signer(ttl_seconds=300).mint("bench", "s", ["bench"])
    async with (
        serve_knowledge_http(build_knowledge_server(service)) as url,
        serve_knowledge_http(await empty_call_server()) as floor_url,
        mcp_session(url, token, {RESULT_FORM_HEADER: "structured"}) as session,
        mcp_session(url, token) as text_session,
        mcp_session(floor_url) as floor,
    ):

        async def through_mcp(q: str) -> None:
            result = await session.call_tool(
                "query_kb", {"kb_id": "bench", "query": q, "top_k": 10}
            )
            assert not result.is_error and not result.content, result.content

        async def with_text_copy(q: str) -> None:
            result = await text_session.call_tool(
                "query_kb", {"kb_id": "bench", "query": q, "top_k": 10}
            )
            assert not result.is_error and result.content, result.content

        async def store_query(q: str) -> None:
            await store.query("bench", q, top_k=10)

        async def empty(q: str) -> None:
            await floor.call_tool("ping", {})

        async def bm25(q: str) -> None:
            bm25s_search(retriever, q, 10)

        contenders = {"store query": store_query, "query_kb via MCP": through_mcp,
                      "empty MCP call": empty, "bm25s": bm25,
                      "query_kb, text copy": with_text_copy}  # fmt: skip
        await timed(queries[:10], contenders, passes=1)  # warm up (builds the index)
        results = await timed(queries, contenders)
    await store.close()
    rows = [[f"{chunks} chunks", "ingest", f"{mb_per_s:.2f} MB/s", "", "", ""]]
    for name, by_language in results.items():
        both = by_language["en"] + by_language["zh"]
        p50, p95 = percentiles(both)
        en50, en95 = percentiles(by_language["en"])
        zh50, zh95 = percentiles(by_language["zh"])
        rows.append(
            [f"{chunks} chunks", name, f"{p50 * 1e3:.2f} / {p95 * 1e3:.2f}",
             f"{en50 * 1e3:.2f} / {en95 * 1e3:.2f}", f"{zh50 * 1e3:.2f} / {zh95 * 1e3:.2f}", ""]
        )  # fmt: skip
    store50 = percentiles(results["store query"]["en"] + results["store query"]["zh"])[0]
    mcp50 = percentiles(results["query_kb via MCP"]["en"] + results["query_kb via MCP"]["zh"])[0]
    floor50 = percentiles(results["empty MCP call"]["en"] + results["empty MCP call"]["zh"])[0]
    text50 = percentiles(
        results["query_kb, text copy"]["en"] + results["query_kb, text copy"]["zh"]
    )[0]
    rows[2][5] = f"(MCP - store) / empty = {(mcp50 - store50) / floor50:.2f} (target <= 1.3)"
    rows[5][5] = f"with it: {(text50 - store50) / floor50:.2f}"
    for language in ("en", "zh"):
        s50, s95 = percentiles(results["store query"][language])
        b50, b95 = percentiles(results["bm25s"][language])
        ratio = f"p50 {s50 / b50:.2f}x, p95 {s95 / b95:.2f}x"
        rows.append([f"{chunks} chunks", f"store / bm25s ({language})", ratio, "", "", "<= 1"])
    rows.append(
        [f"{chunks} chunks", "index load + build", f"{build_s:.2f} s", "", "", f"{index_mb:.0f} MB"]
    )
    return rows


async def recall(root: Path) -> list[list[str]]:
    labelled = json.loads(LABELLED.read_text())
    store = KnowledgeStore(f"sqlite+aiosqlite:///{root / 'sample.db'}")
    await store.prepare()
    await AccessRepository(store.store).save_user(User(id="bench"))
    await store.create_kb("sample", creator_id="bench", kb_id="sample")
    for path in sorted(CORPUS.glob("*.md")):
        await store.ingest("sample", path)
    async with store.store.read() as tx:
        texts = [r[0] for r in await tx.fetchall("SELECT content FROM yx_kb_chunks ORDER BY cid")]
    retriever = bm25s_index(texts)
    found = {"store": {"en": 0, "zh": 0}, "bm25s": {"en": 0, "zh": 0}}
    totals = {"en": 0, "zh": 0}
    for item in labelled:
        language = "en" if item["q"].isascii() else "zh"
        totals[language] += 1
        hits = await store.query("sample", item["q"], top_k=5)
        found["store"][language] += any(item["expect"] in h.content for h in hits)
        ids = bm25s_search(retriever, item["q"], 5)
        found["bm25s"][language] += any(item["expect"] in texts[i] for i in ids)
    await store.close()
    return [
        [f"recall@5 ({len(labelled)} labelled)", name,
         f"{(counts['en'] + counts['zh']) / sum(totals.values()):.2f}",
         f"{counts['en'] / totals['en']:.2f}", f"{counts['zh'] / totals['zh']:.2f}", ""]
        for name, counts in found.items()
    ]  # fmt: skip


async def run(sizes: list[int], n_queries: int) -> None:
    # The HTTP client and MCP SDK log every request at INFO: not what is measured.
    for name in ("httpx", "httpx2", "mcp", "uvicorn"):
        logging.getLogger(name).setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="yuxi-bench-kb-") as tmp:
        root = Path(tmp)
        rows = await recall(root)
        for size in sizes:
            rows.extend(await bench_size(size, n_queries, root))
    headers = ["corpus", "contender", "all p50 / p95 ms", "en p50 / p95", "zh p50 / p95", "note"]
    print(format_table(headers, rows))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="10,000 chunks, 100 queries")
    args = parser.parse_args(argv)
    if args.quick:
        args.chunks, args.queries = [10_000], 100
    asyncio.run(run(args.chunks, args.queries))


if __name__ == "__main__":
    main()
