"""Ranking across bases: the labelled questions asked of every base at once.

The 59 labelled facts of `bench_semantic` are spread over three bases of unequal size
(30, 20 and 9 facts), beside the sample corpus of `agents/knowledge` in its own base and
three one-chunk bases whose single passage answers none of the questions (the
situation of a user who ingested one file into a new base). Every question goes to
`KnowledgeStore.query_many` over all seven bases, as `query_kb` and the demo model ask
it. Printed per kind of question: recall@5, the share answered by the first hit (what
the demo model quotes), and how often a one-chunk base's passage came first; beside
it the same questions against one base holding every fact (the single-base anchor).

    python -m bench.bench_cross_base
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
from pathlib import Path

from adk_yuxi.access import AccessRepository, User
from adk_yuxi.knowledge import KnowledgeStore, OfflineEmbedder
from bench._timing import format_table
from bench.bench_knowledge import CORPUS
from bench.bench_semantic import FACTS, KINDS, labelled_questions

DECOYS = {
    "ops": "The zebrafinch gateway listens on port 9443 by default.",
    "notes": "The canteen on the second floor is open on weekdays.",
    "memo": "前台在周末不提供快递代收服务。",
}
SPLIT = (30, 20, 9)


async def _base(store: KnowledgeStore, kb_id: str, files: dict[str, str]) -> None:
    await store.create_kb(kb_id, creator_id="bench", kb_id=kb_id)
    for name, text in files.items():
        await store.ingest(kb_id, text.encode(), name=name)


async def run(root: Path) -> list[list[str]]:
    facts = json.loads(FACTS.read_text())
    files = {f"fact-{n:03d}.md": f"# {f['title']}\n\n{f['text']}\n" for n, f in enumerate(facts)}
    names = list(files)
    embedder = OfflineEmbedder()
    store = KnowledgeStore(f"sqlite+aiosqlite:///{root / 'cross.db'}", embedder=embedder)
    await store.prepare()
    await AccessRepository(store.store).save_user(User(id="bench"))
    corpus = {p.name: p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("*.md"))}
    await _base(store, "handbook", corpus)
    start = 0
    spread = []
    for n, size in enumerate(SPLIT):
        kb_id = f"facts-{n}"
        await _base(store, kb_id, {k: files[k] for k in names[start : start + size]})
        spread.append(kb_id)
        start += size
    for kb_id, text in DECOYS.items():
        await _base(store, kb_id, {f"{kb_id}.md": text})
    await _base(store, "all", {**corpus, **files})
    bases = ["handbook", *spread, *DECOYS]
    rows = []
    for label, kb_ids in (("7 bases, 3 one-chunk", bases), ("one base (anchor)", ["all"])):
        found: dict[str, list[int]] = {k: [] for k in dict.fromkeys(KINDS.values())}
        first: dict[str, list[int]] = {k: [] for k in found}
        decoy_first: dict[str, list[int]] = {k: [] for k in found}
        for fact, kind, question in labelled_questions(facts):
            hits = await store.query_many(kb_ids, question, top_k=5)
            found[kind].append(int(any(fact["expect"] in h.content for h in hits)))
            first[kind].append(int(bool(hits) and fact["expect"] in hits[0].content))
            decoy_first[kind].append(int(bool(hits) and hits[0].kb_id in DECOYS))
        for measure, values in (
            ("recall@5", found), ("first hit answers", first), ("one-chunk base first", decoy_first)
        ):  # fmt: skip
            rows.append([label, measure] + [f"{statistics.mean(values[k]):.2f}" for k in found])
    await store.close()
    return rows


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = asyncio.run(run(Path(tmp)))
    header = ["bases", "measure", *dict.fromkeys(KINDS.values())]
    print(format_table(header, rows))


if __name__ == "__main__":
    main()
