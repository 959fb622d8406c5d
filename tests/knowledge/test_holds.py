"""`Bm25Index.holds`: which query terms each chunk holds, read from the index (what the
hybrid ranking's evidence floor weighs), against the chunks' own terms."""

from __future__ import annotations

import random

import numpy as np

from adk_yuxi.knowledge._index import Bm25Index
from adk_yuxi.knowledge._segment import Segment, SegmentRows
from adk_yuxi.knowledge._terms import chunk_terms, query_keys

WORDS = [f"w{i}" for i in range(60)] + ["数据", "连接", "多少"]


def test_holds_equals_the_chunks_own_terms_across_segments_and_tombstones() -> None:
    rng = random.Random(8)
    docs = [" ".join(rng.choices(WORDS, k=rng.randint(1, 25))) for _ in range(300)]
    segments = []
    for low in range(0, 300, 40):
        rows = SegmentRows()
        for i in range(low, min(300, low + 40)):
            terms = chunk_terms(docs[i])
            rows.add(
                1000 + i, f"f{i // 4:03d}", terms.length, terms.key_bytes(), terms.freq_bytes()
            )
        segment = Segment.build(rows).tombstoned({"f002", "f030"})
        assert segment is not None
        segments.append(segment)
    index = Bm25Index(segments)
    for _ in range(50):
        query = " ".join(rng.sample(WORDS, rng.randint(1, 6))) + " absent"
        keys = query_keys(query)
        cids = [*rng.sample(range(1000, 1300), 20), 7]  # 7: no such chunk
        got = index.holds(keys, cids)
        assert got.shape == (len(cids), len(keys))
        for row, cid in zip(got, cids, strict=True):
            own = chunk_terms(docs[cid - 1000]).keys if cid >= 1000 else np.zeros(0, np.int64)
            assert row.tolist() == np.isin(keys, own).tolist(), (query, cid)
    assert not index.holds(query_keys("w1"), []).size
