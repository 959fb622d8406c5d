"""A segment's compact tables against the plain arrays they replace: term offsets in a
byte a term (`Offsets`), CJK term keys in 2 bytes (`TermKeys`), common terms' document
numbers in a byte (`DocNumbers`)."""

from __future__ import annotations

import numpy as np
import pytest

from adk_yuxi.knowledge._doc_numbers import DocNumbers
from adk_yuxi.knowledge._offsets import Offsets
from adk_yuxi.knowledge._term_keys import TermKeys
from adk_yuxi.knowledge._terms import BIGRAM, WORD


@pytest.mark.parametrize("n_terms", [1, 63, 64, 65, 1000])
def test_offsets_equal_the_indptr_they_replace(n_terms: int) -> None:
    rng = np.random.default_rng(n_terms)
    df = rng.choice([1, 1, 1, 2, 3, 254, 255, 256, 1000, 70_000], size=n_terms)
    indptr = np.concatenate([[0], np.cumsum(df)])
    offsets = Offsets(indptr)
    assert (offsets.indptr() == indptr).all()
    rows = rng.integers(0, n_terms, 200)
    starts, ends = offsets.spans(rows)
    assert (starts == indptr[rows]).all() and (ends == indptr[rows + 1]).all()
    assert offsets.nbytes < 2 * n_terms + 8 * (n_terms // 64 + 1) + 16 * int((df >= 255).sum()) + 8


def test_term_keys_find_take_and_give_back_every_key() -> None:
    rng = np.random.default_rng(1)
    chars = rng.integers(0x3000, 0x2A000, 3000)  # (some past 2**16: other groups)
    bigrams = (
        BIGRAM | (rng.integers(0x3000, 0x2A000, 5000) << 18) | rng.integers(0x3000, 0x9FFF, 5000)
    )
    words = WORD | rng.integers(0, 2**61, 2000)
    keys = np.unique(np.concatenate([chars, bigrams, words]).astype(np.int64))
    table = TermKeys.of(keys)
    assert len(table) == len(keys) and (table.keys() == keys).all()
    probe = np.concatenate([keys[rng.integers(0, len(keys), 300)], keys[:50] + 1, [0, 5, WORD]])
    held = {k: row for row, k in enumerate(keys.tolist())}
    assert table.find(probe).tolist() == [held.get(k, -1) for k in probe.tolist()]
    rows = np.sort(rng.choice(len(keys), 500, replace=False))
    assert (table.take(rows).keys() == keys[rows]).all()
    assert (TermKeys.of(np.zeros(0, np.int64)).find(np.array([1, WORD])) == -1).all()


def test_doc_numbers_give_back_every_run() -> None:
    """Runs of two ascending parts; the common terms' kept as block counts and low
    bytes, the rest as they are."""
    rng = np.random.default_rng(2)
    n_docs = 5000
    runs, n_multi = [], []
    for size in rng.choice([1, 3, 30, 200, 900, 3000, 4999], size=60):
        docs = np.sort(rng.choice(n_docs, size=size, replace=False))
        multi = rng.random(size) < 0.3
        runs.append(np.concatenate([docs[multi], docs[~multi]]).astype(np.uint16))
        n_multi.append(int(multi.sum()))
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in runs])])
    everything = np.concatenate(runs)
    numbers = DocNumbers(everything, indptr, np.array(n_multi), n_docs)
    assert numbers.rows and numbers.nbytes < everything.nbytes
    for row, run in enumerate(runs):
        assert (numbers.run(row, int(indptr[row]), int(indptr[row + 1])) == run).all()
    assert (numbers.all(indptr) == everything).all()
