"""MaxScore pruning (`_pruning`) against the exhaustive sum (`_scoring.accumulate` over
every query term): the same top k, scores equal to the bit, while the postings of
common words are mostly never summed."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adk_yuxi.knowledge._index import Bm25Index
from adk_yuxi.knowledge._pruning import pruned_top
from adk_yuxi.knowledge._scoring import best
from adk_yuxi.knowledge._segment import Segment, SegmentRows
from adk_yuxi.knowledge._terms import chunk_terms, query_keys

COMMON = [f"c{i}" for i in range(5)]  # in most documents, often more than once
MIDDLE = [f"m{i}" for i in range(40)]
RARE = [f"r{i}" for i in range(300)]


def _document(rng: random.Random) -> str:
    words = [w for w in COMMON if rng.random() < 0.9] * rng.randint(1, 3)
    words += rng.sample(MIDDLE, rng.randint(0, 6)) + rng.sample(RARE, rng.randint(0, 3))
    words += ["filler"] * rng.randint(0, 30)  # lengths vary: the normaliser matters
    rng.shuffle(words)
    return " ".join(words)


def _build(docs: list[str], per_segment: int, dead: frozenset[str] = frozenset()) -> Bm25Index:
    segments = []
    for low in range(0, len(docs), per_segment):
        rows = SegmentRows()
        for i in range(low, min(len(docs), low + per_segment)):
            terms = chunk_terms(docs[i])
            rows.add(100 + i, f"f{i // 5:04d}", terms.length, terms.key_bytes(), terms.freq_bytes())
        segment: Segment | None = Segment.build(rows)
        if dead and segment is not None:
            segment = segment.tombstoned(set(dead))
        if segment is not None:
            segments.append(segment)
    return Bm25Index(segments)


def _exhaustive(index: Bm25Index, query: str, k: int) -> list[tuple[int, float]]:
    terms, _, _ = index._terms(np.array(query_keys(query), dtype=np.int64))
    top, values = best(*index.exhaustive(terms, k), None, k)
    return list(zip(top.tolist(), values.tolist(), strict=True))


def _query(rng: random.Random) -> str:
    words = rng.sample(COMMON, rng.randint(0, 4)) + rng.sample(MIDDLE, rng.randint(0, 2))
    words += rng.sample(RARE, rng.randint(0, 2))
    return " ".join(words) or COMMON[0]


@pytest.mark.parametrize(("seed", "per_segment"), [(1, 1000), (2, 60), (3, 7)])
def test_the_pruned_top_k_is_the_exhaustive_one_to_the_bit(seed: int, per_segment: int) -> None:
    rng = random.Random(seed)
    docs = [_document(rng) for _ in range(400)]
    for dead in (frozenset(), frozenset({"f0003", "f0010", "f0011", "f0040", "f0079"})):
        index = _build(docs, per_segment, dead)
        for _ in range(120):
            query, k = _query(rng), rng.choice([1, 3, 10, 40])
            assert index.search(query_keys(query), k) == _exhaustive(index, query, k), query


def test_common_words_are_looked_up_not_summed() -> None:
    """A rare word beside common ones: only documents that could reach the k-th best
    score are scored in full, far fewer than those holding a common word."""
    rng = random.Random(5)
    docs = [_document(rng) for _ in range(2000)]
    index = _build(docs, 300)
    pruned = 0
    for rare in RARE[:40]:
        query = f"{COMMON[0]} {COMMON[1]} {rare} {COMMON[2]}"
        keys = np.array(query_keys(query), dtype=np.int64)
        terms, idf, df = index._terms(keys)
        got = pruned_top(index.segments, index._norms, terms, idf, df, 10)
        assert got is not None
        holding_common = int(df.max())
        if len(got[0]) * 4 < holding_common:
            pruned += 1
        assert index.search(keys.tolist(), 10) == _exhaustive(index, query, 10)
    assert pruned >= 25, pruned  # (29 of 40 when written)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["a", "a", "a", "b", "b", "c", "d", "e", "f"]), max_size=12),
        min_size=1,
        max_size=60,
    ),
    st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g"]), min_size=1, max_size=5),
    st.integers(min_value=1, max_value=12),
    st.integers(min_value=1, max_value=25),
)
def test_any_corpus_any_query(
    words: list[list[str]], query: list[str], k: int, per_segment: int
) -> None:
    index = _build([" ".join(w) for w in words], per_segment)
    text = " ".join(query)
    assert index.search(query_keys(text), k) == _exhaustive(index, text, k)
