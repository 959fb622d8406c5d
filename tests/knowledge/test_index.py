"""The segmented BM25 index against brute force and bm25s, with no database: one
segment or many, files dropped by masking or segments merged, the scores are those of
an index built whole."""

from __future__ import annotations

import random

import numpy as np
import pytest

from adk_yuxi._text import document_terms, query_terms, text_runs
from adk_yuxi.knowledge._index import K1, B, Bm25Index, split_rows
from adk_yuxi.knowledge._index_load import _pages, merge_plan, merge_small
from adk_yuxi.knowledge._segment import Segment, SegmentRows, posting_order
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


def _rows(docs: list[str], per_file: int = 7) -> SegmentRows:
    rows = SegmentRows()
    for i, doc in enumerate(docs):
        terms = chunk_terms(doc)
        rows.add(
            10 + i, f"f{i // per_file:03d}", terms.length, terms.key_bytes(), terms.freq_bytes()
        )
    return rows


def _index(docs: list[str], per_file: int = 7, segment_docs: int = 1 << 16) -> Bm25Index:
    return Bm25Index.from_rows(_rows(docs, per_file), segment_docs)


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
        _, low, high = index.files[file_id]
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
    index = Bm25Index.from_rows(SegmentRows())
    assert index.search(query_keys("anything 数据"), 5) == []
    assert Bm25Index([]).search(query_keys("w1"), 5) == []


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
    sorted_keys, order = posting_order(keys, position_bits)
    expected = np.argsort(keys, kind="stable")
    assert (order == expected).all() and (sorted_keys == keys[expected]).all()


def _queries(rng: random.Random, docs: list[str], n: int) -> list[str]:
    out = []
    for _ in range(n):
        runs = [run for _, run in text_runs(rng.choice(docs))]
        out.append(" ".join(rng.sample(runs, min(len(runs), rng.randint(1, 8)))))
    return [*out, "w0 w1 w2", HANZI[0] + HANZI[1]]  # common terms: the dense accumulator


def _same(got: list[tuple[int, float]], want: list[tuple[int, float]], query: str) -> None:
    assert [c for c, _ in got] == [c for c, _ in want], query
    assert np.allclose([s for _, s in got], [s for _, s in want], rtol=1e-5), query


@pytest.mark.parametrize("segment_docs", [1, 20, 64])
def test_many_segments_score_as_one_built_whole(segment_docs: int) -> None:
    """Corpus statistics are summed over segments: N, avgdl and df are the whole base's."""
    rng = random.Random(segment_docs)
    docs = _corpus(rng, 300)
    whole, parts = _index(docs), _index(docs, segment_docs=segment_docs)
    assert len(whole.segments) == 1 and len(parts.segments) == -(-43 // -(-segment_docs // 7))
    for query in _queries(rng, docs, 25):
        k = rng.choice([1, 5, 20])
        _same(parts.search(query_keys(query), k), whole.search(query_keys(query), k), query)
        _same(whole.search(query_keys(query), k), _brute(docs, query, k, range(300)), query)
        file_id = f"f{rng.randrange(43):03d}"
        got = parts.search(query_keys(query), k, file_id)
        _same(got, whole.search(query_keys(query), k, file_id), query)


def test_dropped_files_and_merged_segments_equal_a_rebuild() -> None:
    rng = random.Random(21)
    docs = _corpus(rng, 350)
    rows = _rows(docs)
    segments = [Segment.build(part) for part in split_rows(rows, 35)]  # 5 files a segment
    gone = {"f003", "f004", "f020", "f021", "f022", "f023", "f024", "f049"}
    dropped = [s for s in (s.without(gone) for s in segments) if s is not None]
    assert len(dropped) == len(segments) - 1  # f020-f024 were one whole segment
    kept = [i for i in range(len(docs)) if f"f{i // 7:03d}" not in gone]
    rebuilt_rows = SegmentRows()
    for i in kept:
        rebuilt_rows.add(
            rows.cids[i], rows.file_ids[i], rows.lengths[i], rows.keys[i], rows.freqs[i]
        )
    rebuilt = Bm25Index.from_rows(rebuilt_rows)
    plan = merge_plan(dropped)
    assert len(plan) == len(dropped)  # all small: one merge
    merged = merge_small(dropped, plan)
    assert len(merged) == 1
    for segment in (merged[0], rebuilt.segments[0]):
        assert segment.files == rebuilt.segments[0].files
    for index in (Bm25Index(dropped), Bm25Index(merged)):
        assert index.n_docs == len(kept) and set(index.files) == set(rebuilt.files)
        for query in _queries(rng, docs, 40):
            want = rebuilt.search(query_keys(query), 10)
            _same(index.search(query_keys(query), 10), want, query)
            assert {c - 10 for c, _ in want} <= set(kept)
    whole = merged[0]
    assert (whole.terms.keys() == rebuilt.segments[0].terms.keys()).all()
    assert (whole.docs.all(whole.indptr) == rebuilt.segments[0].docs.all(whole.indptr)).all()
    assert (whole.tf == rebuilt.segments[0].tf).all()
    everything = {f"f{i:03d}" for i in range(50)}
    assert all(s.without(everything) is None for s in segments)


def test_tombstoned_files_score_as_a_rebuild_until_a_merge_drops_them() -> None:
    """A replaced or deleted file is a mask over its segment (the postings shared, not
    copied); the dead documents count for nothing in N, avgdl and df, so scores equal an
    index built without them, before and after the merge that drops them."""
    rng = random.Random(22)
    docs = _corpus(rng, 350)
    rows = _rows(docs)
    segments = [Segment.build(part) for part in split_rows(rows, 35)]  # 5 files a segment
    gone = {"f003", "f004", "f020", "f021", "f022", "f023", "f024", "f049"}
    marked = [s for s in (s.tombstoned(gone) for s in segments) if s is not None]
    assert len(marked) == len(segments) - 1  # f020-f024 were one whole segment
    assert marked[0].docs is segments[0].docs and marked[0].dead is not None
    assert marked[0].dead_share == pytest.approx(2 / 5)
    kept = [i for i in range(len(docs)) if f"f{i // 7:03d}" not in gone]
    rebuilt_rows = SegmentRows()
    for i in kept:
        rebuilt_rows.add(
            rows.cids[i], rows.file_ids[i], rows.lengths[i], rows.keys[i], rows.freqs[i]
        )
    rebuilt = Bm25Index.from_rows(rebuilt_rows)
    assert merge_plan(marked[:1]) == [0]  # alone, 2/5 dead: purged
    purged = merge_small(marked[:1], [0])[0]
    assert purged.dead is None and purged.n_docs == 21
    merged = merge_small(marked, merge_plan(marked))
    assert len(merged) == 1 and merged[0].dead is None
    for index in (Bm25Index(marked), Bm25Index([purged, *marked[1:]]), Bm25Index(merged)):
        assert index.n_docs == len(kept) and set(index.files) == set(rebuilt.files)
        for query in _queries(rng, docs, 40):
            want = rebuilt.search(query_keys(query), 10)
            _same(index.search(query_keys(query), 10), want, query)
            assert {c - 10 for c, _ in want} <= set(kept)
            file_id = f"f{rng.randrange(50):03d}"
            _same(index.search(query_keys(query), 5, file_id),
                  rebuilt.search(query_keys(query), 5, file_id), query)  # fmt: skip
    again = marked[0].tombstoned({"f000"})  # tombstones add up
    assert again is not None and again.live_docs == 14
    assert marked[0].tombstoned({"f000", "f001", "f002"}) is None


def test_postings_are_stored_compactly() -> None:
    docs = _corpus(random.Random(4), 200)
    segment = _index(docs).segments[0]
    assert segment.docs.wide.dtype == np.uint16 and segment.multi_tf.dtype == np.uint8
    assert len(segment.multi_tf) < segment.docs.total / 3  # frequency 1 costs nothing
    assert segment.docs.rows and len(segment.docs.low)  # common terms' numbers: 1 byte
    assert segment.offsets.counts.dtype == np.uint8  # a term's offset: about a byte
    big = _rows(["w1 " * 300])
    assert Segment.build(big).multi_tf.dtype == np.uint16  # a frequency above 255 kept exact


def test_pages_hold_whole_files_and_a_bounded_number_of_them() -> None:
    files = [("big", 12_000), *((f"e{i}", 0) for i in range(1200)), ("a", 3), ("b", 4)]
    pages = _pages(files, 5)
    assert [f for page in pages for f in page] == [f for f, _ in files]
    assert pages[0] == ["big"] and max(len(p) for p in pages) == 500
    assert pages[-1] == ["b"] and _pages([], 5) == []


@pytest.mark.parametrize(
    "docs",
    [
        ["中文" * 700 + "中", "w1 " * 1200 + "w2", "文中", "w2 w1"],  # frequencies past 1,023
        ["中文中", "文文"],  # CJK terms only
        ["w1 w2 w1", "w3"],  # words only
    ],
)
def test_the_lean_build_equals_the_sort_with_an_order_array(docs: list[str]) -> None:
    """`Segment.build` packs each posting in one integer; the reference is the sort of
    (key, document) pairs by an order array, then `pack`."""
    rows = _rows(docs, per_file=1)
    want_keys, order = posting_order(
        np.concatenate([chunk_terms(d).keys for d in docs]).astype(np.int64)
    )
    counts = [len(chunk_terms(d).keys) for d in docs]
    docs_of = np.repeat(np.arange(len(docs)), counts)[order]
    tf_of = np.concatenate([chunk_terms(d).freqs for d in docs])[order]
    segment = Segment.build(rows)
    keys, got_docs = segment.postings()
    assert (keys == want_keys).all()
    assert sorted(zip(keys.tolist(), got_docs.tolist(), segment.tf.tolist(), strict=True)) == (
        sorted(zip(want_keys.tolist(), docs_of.tolist(), tf_of.tolist(), strict=True))
    )
    assert max(segment.tf.tolist()) == max(tf_of.tolist())
