"""The in-memory BM25 index against brute force and bm25s, with no database."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from adk_yuxi._text import document_terms, query_terms, text_runs
from adk_yuxi.knowledge._index import K1, B, Bm25Index, IndexRows, _posting_order
from adk_yuxi.knowledge._terms import BIGRAM, WORD, chunk_terms, query_keys, word_key

WORDS = [f"w{i}" for i in range(300)]
HANZI = [chr(0x4E00 + i) for i in range(120)]


def _key(term: str) -> int:
    """The key of one term, written per term (the reference for the array code)."""
    if text_runs(term) == [(True, term)]:
        return ord(term) if len(term) == 1 else BIGRAM | ord(term[0]) << 18 | ord(term[1])
    return word_key(term)


def _corpus(rng: random.Random, n: int) -> list[str]:
    weights = [1 / (r + 1) for r in range(len(WORDS))]
    docs = []
    for i in range(n):
        if i % 2:
            chars = rng.choices(HANZI, weights[: len(HANZI)], k=rng.randint(1, 80))
            docs.append("".join(c + ("，" if rng.random() < 0.1 else "") for c in chars))
        else:
            docs.append(" ".join(rng.choices(WORDS, weights, k=rng.randint(1, 40))))
    return docs


def _index(docs: list[str], per_file: int = 7, long_list: int = 256) -> Bm25Index:
    terms = [chunk_terms(d) for d in docs]
    return Bm25Index(
        IndexRows(
            cids=[10 + i for i in range(len(docs))],
            file_ids=[f"f{i // per_file:03d}" for i in range(len(docs))],
            lengths=[t.length for t in terms],
            keys=[t.key_bytes() for t in terms],
            freqs=[t.freq_bytes() for t in terms],
        ),
        long_list=long_list,
    )


def _brute(docs: list[str], query: str, k: int, allowed: range) -> list[tuple[int, float]]:
    """Exhaustive BM25 (bm25s's "lucene" variant) straight from `document_terms`."""
    bags = [document_terms(d) for d in docs]
    avg = sum(map(len, bags)) / len(bags)
    scored = []
    for doc, bag in enumerate(bags):
        score = 0.0
        for term in query_terms(query):
            tf = bag.count(term)
            if tf:
                df = sum(term in other for other in bags)
                idf = np.log1p((len(docs) - df + 0.5) / (df + 0.5))
                score += idf * tf / (tf + K1 * (1 - B + B * len(bag) / avg))
        if score > 0 and doc in allowed:
            scored.append((doc, score))
    scored.sort(key=lambda item: (-item[1], item[0]))
    return [(10 + doc, score) for doc, score in scored[:k]]


def test_chunk_terms_count_exactly_the_document_terms() -> None:
    rng = random.Random(3)
    texts = [*_corpus(rng, 60), "", "，。", "数", "Ａb 数据库 ー・ 한국 x", "a" * 5000]
    for text in texts:
        terms = chunk_terms(text)
        expected: dict[int, int] = {}
        for term in document_terms(text):
            expected[_key(term)] = expected.get(_key(term), 0) + 1
        assert dict(zip(terms.keys.tolist(), terms.freqs.tolist(), strict=True)) == expected
        assert terms.length == len(document_terms(text))
        assert query_keys(text) == [_key(t) for t in query_terms(text)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_top_k_equals_exhaustive_bm25_with_and_without_a_file(seed: int) -> None:
    rng = random.Random(seed)
    docs = _corpus(rng, 140)
    index = _index(docs)
    for _ in range(60):
        source = rng.choice(docs)
        runs = [run for _, run in text_runs(source)]
        query = " ".join(rng.sample(runs, min(len(runs), rng.randint(1, 12))))
        k = rng.choice([1, 3, 10, 50])
        got = index.search(query_keys(query), k)
        want = _brute(docs, query, k, range(len(docs)))
        assert [c for c, _ in got] == [c for c, _ in want], query
        assert np.allclose([s for _, s in got], [s for _, s in want], rtol=1e-5)
        file_id = f"f{rng.randrange(20):03d}"
        low, high = index.files[file_id]
        got = index.search(query_keys(query), k, file_id)
        assert [c for c, _ in got] == [c for c, _ in _brute(docs, query, k, range(low, high))]
    assert index.search(query_keys("absent words"), 5) == []
    assert index.search(query_keys("w1"), 5, "no-such-file") == []


def test_scores_equal_bm25s_on_the_same_terms() -> None:
    bm25s = pytest.importorskip("bm25s")
    rng = random.Random(9)
    docs = _corpus(rng, 400)
    index = _index(docs)
    retriever = bm25s.BM25()
    retriever.index([document_terms(d) for d in docs], show_progress=False)
    for source in rng.sample(docs, 40):
        runs = [run for _, run in text_runs(source)][:3]
        terms = [t for t in query_terms(" ".join(runs)) if t in retriever.vocab_dict]
        _, scores = retriever.retrieve([terms], k=10, show_progress=False, n_threads=0)
        ours = [s for _, s in index.search(query_keys(" ".join(runs)), 10)]
        assert np.allclose(ours, [s for s in scores[0] if s > 0][: len(ours)], rtol=1e-4)


def test_an_empty_index_answers_nothing() -> None:
    index = Bm25Index(IndexRows(cids=[], file_ids=[], lengths=[], keys=[], freqs=[]))
    assert index.search(query_keys("anything 数据"), 5) == []


@pytest.mark.parametrize("position_bits", [26, 4])  # packed SIMD sort, stable argsort
def test_posting_order_is_a_stable_sort_by_key(position_bits: int) -> None:
    rng = np.random.default_rng(5)
    keys = np.concatenate(
        [
            rng.integers(0, 50, 200),
            rng.integers(BIGRAM, BIGRAM + 40, 200),
            WORD + rng.integers(0, 30, 100),
        ]
    ).astype(np.int64)
    rng.shuffle(keys)
    sorted_keys, order = _posting_order(keys, position_bits)
    expected = np.argsort(keys, kind="stable")
    assert (order == expected).all() and (sorted_keys == keys[expected]).all()


def test_seeds_picked_at_build_time_give_the_exact_ranking_on_long_lists() -> None:
    """Common words (df in the hundreds) seed from their best documents kept at build
    time; the ranking must equal both an index that partitions per query and brute force."""
    rng = random.Random(12)
    docs = _corpus(rng, 1600)
    index, plain = _index(docs), _index(docs, long_list=len(docs))
    assert len(index.long_terms) >= 10 and len(plain.long_terms) == 0
    for row, long in enumerate(index.long_terms.tolist()):
        start, end = index.indptr[long], index.indptr[long + 1]
        docs_of, impacts_of = index.docs[start:end].tolist(), index.impacts[start:end].tolist()
        impact = dict(zip(docs_of, impacts_of, strict=True))
        kept = [impact[d] for d in index.top_docs[row].tolist()]
        assert kept == sorted(impact.values(), reverse=True)[: len(kept)]
    bags = [Counter(document_terms(d)) for d in docs]
    df = Counter(term for bag in bags for term in bag)
    avg = sum(sum(bag.values()) for bag in bags) / len(bags)
    for _ in range(40):
        words = rng.sample(WORDS[:40], rng.randint(1, 3)) + rng.sample(WORDS, rng.randint(0, 2))
        query = " ".join(words + rng.sample(HANZI[:30], rng.randint(0, 4)))
        k = rng.choice([1, 10, 16, 50])
        got = index.search(query_keys(query), k)
        assert got == plain.search(query_keys(query), k), query
        scored = []
        for doc, bag in enumerate(bags):
            score = 0.0
            for term in dict.fromkeys(query_terms(query)):
                tf = bag[term]
                if tf:
                    idf = np.log1p((len(docs) - df[term] + 0.5) / (df[term] + 0.5))
                    score += idf * tf / (tf + K1 * (1 - B + B * sum(bag.values()) / avg))
            if score > 0:
                scored.append((-score, doc))
        want = [10 + doc for _, doc in sorted(scored)[:k]]
        assert [c for c, _ in got] == want, query
